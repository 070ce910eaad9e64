package main

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

func TestBufferedLog(t *testing.T) {
	t.Parallel()
	var sink apitest.SyncBuffer
	out := newBufferedLog(&sink)
	logger := slog.New(flushOnWarning{Handler: slog.NewJSONHandler(out, nil), out: out}).With("component", "test")

	logger.Info("first")
	if strings.Contains(sink.String(), "first") {
		t.Fatal("an information line was written at once; it should wait for the next flush")
	}
	deadline := time.Now().Add(10 * logFlushInterval)
	for !strings.Contains(sink.String(), "first") {
		if time.Now().After(deadline) {
			t.Fatalf("the line was not written within %s", 10*logFlushInterval)
		}
		time.Sleep(logFlushInterval / 10)
	}

	logger.Info("second")
	logger.Warn("third")
	if s := sink.String(); !strings.Contains(s, "second") || !strings.Contains(s, "third") {
		t.Fatalf("a warning did not write itself and the lines before it at once: %q", s)
	}
	if strings.Index(sink.String(), "second") > strings.Index(sink.String(), "third") {
		t.Fatal("lines written out of order")
	}

	logger.Info("last")
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sink.String(), "last") {
		t.Fatal("Close did not write the buffered line")
	}
	if n := strings.Count(sink.String(), `"component":"test"`); n != 4 {
		t.Fatalf("%d lines carry the logger's attributes, want 4", n)
	}
}

// stalledWriter is an output that takes nothing until it is released.
type stalledWriter struct {
	released chan struct{}
	sink     apitest.SyncBuffer
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	<-w.released
	return w.sink.Write(p)
}

// A stalled output delays no line until logBufferMax is buffered; the lines then wait for
// it rather than grow the buffer on, and all are written, in order, once it is released.
func TestBufferedLogStalledOutput(t *testing.T) {
	t.Parallel()
	w := &stalledWriter{released: make(chan struct{})}
	out := newBufferedLog(w)
	const lineSize, lines = 1024, 2 * logBufferMax / 1024
	var taken atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range lines {
			if _, err := fmt.Fprintf(out, "%-*d\n", lineSize-1, i); err != nil {
				t.Errorf("line %d: %v", i, err)
			}
			taken.Add(1)
		}
	}()
	// The lines up to logBufferMax are taken however slowly the machine runs: wait for them
	// (a condition, not a duration), then give the rest a moment to be (wrongly) taken too.
	buffered := int64(logBufferMax/lineSize - 1)
	for deadline := time.Now().Add(time.Minute); taken.Load() < buffered; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lines waited after %d bytes were buffered; they should wait only from %d", taken.Load()*lineSize, logBufferMax)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if taken.Load() == lines {
		t.Fatal("every line was taken while the output stalled: the buffer grew without bound")
	}
	close(w.released)
	<-done
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(w.sink.String(), "\n"), "\n")
	if len(got) != lines {
		t.Fatalf("%d lines written, want %d", len(got), lines)
	}
	for i, l := range got {
		if n, err := strconv.Atoi(strings.TrimSpace(l)); err != nil || n != i {
			t.Fatalf("line %d is %.10q…: lines lost or out of order", i, l)
		}
	}
}
