package main

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// logFlushInterval bounds how long an information line waits before it is written.
const logFlushInterval = 100 * time.Millisecond

// logBufferLimit is the size at which the buffer is written without waiting for the interval.
const logBufferLimit = 64 << 10

// logBufferMax is the size at which a line waits for the buffer to be written: the output
// is stalled (a full pipe, a slow disk) for long enough that the buffer should not grow on.
const logBufferMax = 1 << 20

// bufferedLog gathers log lines into few writes. The access log writes a line per request,
// and one write(2) per line, under the log handler's lock, cost a few per cent of the
// server's CPU under load and queued every request behind the slowest write. Lines wait at
// most logFlushInterval; a warning or an error is written at once with everything before it
// (flushOnWarning); Close writes the rest. A crash loses at most the last interval's
// information lines.
//
// The writing happens outside the lock lines are added under: a request's line is appended
// to one buffer while the other is being written, so a slow output delays no request until
// logBufferMax is buffered.
type bufferedLog struct {
	w io.Writer

	mu  sync.Mutex // guards buf
	buf []byte     // lines not yet handed to w

	writing sync.Mutex // held while writing to w, so that buffers are written in order
	spare   []byte     // the buffer being written; guarded by writing

	full chan struct{} // wakes run: logBufferLimit is buffered
	stop chan struct{}
	done chan struct{}
}

func newBufferedLog(w io.Writer) *bufferedLog {
	b := &bufferedLog{w: w, full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go b.run()
	return b
}

func (b *bufferedLog) run() {
	defer close(b.done)
	t := time.NewTicker(logFlushInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		case <-b.full:
		}
		_ = b.Flush()
	}
}

// Write buffers p, one whole log line (slog writes each record with one call).
func (b *bufferedLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf = append(b.buf, p...)
	n := len(b.buf)
	b.mu.Unlock()
	switch {
	case n >= logBufferMax:
		if err := b.Flush(); err != nil {
			return 0, err
		}
	case n >= logBufferLimit:
		select {
		case b.full <- struct{}{}:
		default: // run is already woken
		}
	}
	return len(p), nil
}

// Flush writes what is buffered.
func (b *bufferedLog) Flush() error {
	b.writing.Lock()
	defer b.writing.Unlock()
	b.mu.Lock()
	b.buf, b.spare = b.spare[:0], b.buf
	b.mu.Unlock()
	if len(b.spare) == 0 {
		return nil
	}
	_, err := b.w.Write(b.spare)
	return err
}

// Close stops the periodic flush and writes what is buffered. Lines logged after Close are
// still buffered and written by a later Flush.
func (b *bufferedLog) Close() error {
	close(b.stop)
	<-b.done
	return b.Flush()
}

// flushOnWarning writes warnings and errors, and every line before them, as they happen.
type flushOnWarning struct {
	slog.Handler
	out *bufferedLog
}

func (h flushOnWarning) Handle(ctx context.Context, r slog.Record) error {
	if err := h.Handler.Handle(ctx, r); err != nil {
		return err
	}
	if r.Level >= slog.LevelWarn {
		return h.out.Flush()
	}
	return nil
}

func (h flushOnWarning) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushOnWarning{Handler: h.Handler.WithAttrs(attrs), out: h.out}
}

func (h flushOnWarning) WithGroup(name string) slog.Handler {
	return flushOnWarning{Handler: h.Handler.WithGroup(name), out: h.out}
}
