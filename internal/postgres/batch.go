package postgres

import (
	"context"
	"errors"
	"sync"
	"time"
)

// batchWriteTimeout bounds one batch write, so a stuck database cannot stall a batcher forever.
const batchWriteTimeout = 30 * time.Second

// errBatcherClosed answers items offered after the batcher stopped.
var errBatcherClosed = errors.New("postgres: batcher closed")

// batcher collects items from many goroutines and writes them in batches from one: while a
// batch is being written the next one accumulates, so under a burst the number of writes
// follows the database's pace rather than the number of items (group commit). Memory is
// bounded by the queue's capacity.
type batcher[T any] struct {
	write    func(ctx context.Context, items []T) error
	queue    chan batchEntry[T]
	maxBatch int
	// linger is how long the first item of a batch waits for company: zero writes at once
	// (callers wait for their write), more trades latency nobody waits for for fewer writes.
	linger time.Duration
	// wake ends a linger early: a flush marker or a full batch is queued. During a linger
	// the writer sleeps rather than receive item by item, so that offering an item is a
	// buffered send that wakes no goroutine.
	wake     chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	// entries and items are the writer's, reused from batch to batch: write must not keep
	// the slice it is given.
	entries []batchEntry[T]
	items   []T
	// backlog says the last batch was full: the next one is written without lingering.
	backlog bool
}

type batchEntry[T any] struct {
	item  T
	flush bool       // a marker, not an item: everything queued before it is written first
	ack   chan error // receives the outcome of the write; nil when nobody waits
}

// newBatcher starts a batcher; write is called from one goroutine and must not keep items.
func newBatcher[T any](capacity, maxBatch int, linger time.Duration, write func(context.Context, []T) error) *batcher[T] {
	b := &batcher[T]{
		write:    write,
		queue:    make(chan batchEntry[T], capacity),
		maxBatch: maxBatch,
		linger:   linger,
		wake:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go b.run()
	return b
}

// offer queues item without waiting; false means the queue is full and item was not taken.
func (b *batcher[T]) offer(item T) bool {
	select {
	case b.queue <- batchEntry[T]{item: item}:
		if len(b.queue) >= b.maxBatch {
			b.signal()
		}
		return true
	default:
		return false
	}
}

// signal ends the writer's linger, now or at its next one.
func (b *batcher[T]) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// submit queues item and waits until it is written. Once queued the item will be written
// even if ctx ends, so submit then waits for the outcome rather than report a failure that
// did not happen.
func (b *batcher[T]) submit(ctx context.Context, item T) error {
	return b.enqueue(ctx, batchEntry[T]{item: item, ack: make(chan error, 1)})
}

// flush waits until everything queued before it is written.
func (b *batcher[T]) flush(ctx context.Context) error {
	return b.enqueue(ctx, batchEntry[T]{flush: true, ack: make(chan error, 1)})
}

func (b *batcher[T]) enqueue(ctx context.Context, e batchEntry[T]) error {
	select {
	case b.queue <- e:
	case <-ctx.Done():
		return ctx.Err()
	case <-b.done:
		return errBatcherClosed
	}
	if e.flush || len(b.queue) >= b.maxBatch {
		b.signal()
	}
	select {
	case err := <-e.ack:
		return err
	case <-b.done:
		select { // the final drain acknowledges before done closes
		case err := <-e.ack:
			return err
		default:
			return errBatcherClosed
		}
	}
}

// close writes everything queued and stops; it returns early with ctx's error.
func (b *batcher[T]) close(ctx context.Context) error {
	b.stopOnce.Do(func() { close(b.stop) })
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *batcher[T]) run() {
	defer close(b.done)
	for {
		var first batchEntry[T]
		select {
		case first = <-b.queue:
		case <-b.stop:
			b.drain()
			return
		}
		b.commit(b.collect(append(b.entries[:0], first)))
	}
}

// collect lets a batch wait linger for company (less when a flush marker or a full batch
// wakes it), then adds what is queued, up to maxBatch entries or a flush marker.
func (b *batcher[T]) collect(entries []batchEntry[T]) []batchEntry[T] {
	last := func() bool { return entries[len(entries)-1].flush || len(entries) >= b.maxBatch }
	if b.linger > 0 && !last() && !b.backlog {
		timer := time.NewTimer(b.linger)
		select {
		case <-timer.C:
		case <-b.wake:
		case <-b.stop:
		}
		timer.Stop()
	}
	for !last() {
		select {
		case e := <-b.queue:
			entries = append(entries, e)
		default:
			b.backlog = false
			return entries
		}
	}
	b.backlog = len(entries) >= b.maxBatch
	return entries
}

// drain writes whatever is still queued when the batcher stops.
func (b *batcher[T]) drain() {
	for {
		select {
		case e := <-b.queue:
			b.commit(b.collect(append(b.entries[:0], e)))
		default:
			return
		}
	}
}

// commit writes a batch, then keeps its slices for the next one, emptied so that what they
// referenced can be collected.
func (b *batcher[T]) commit(entries []batchEntry[T]) {
	items := b.items[:0]
	for _, e := range entries {
		if !e.flush {
			items = append(items, e.item)
		}
	}
	var err error
	if len(items) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), batchWriteTimeout)
		err = b.write(ctx, items)
		cancel()
	}
	for _, e := range entries {
		if e.ack != nil {
			e.ack <- err
		}
	}
	clear(entries)
	clear(items)
	b.entries, b.items = entries[:0], items[:0]
}
