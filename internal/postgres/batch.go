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
//
// The queue is a slice that grows with a burst and is let go once the burst is written,
// not a channel: a channel's buffer is allocated whole and stays in the live heap, which
// the collector marks on every cycle (2.7 MB for the two batchers; docs/performance.md 9.).
type batcher[T any] struct {
	write    func(ctx context.Context, items []T) error
	capacity int
	maxBatch int
	// linger is how long the first item of a batch waits for company: zero writes at once
	// (callers wait for their write), more trades latency nobody waits for for fewer writes.
	linger time.Duration

	mu sync.Mutex
	// queue[head:] is what waits to be written, oldest first; flushes counts the flush
	// markers among it.
	queue   []batchEntry[T]
	head    int
	flushes int
	closed  bool
	// room is closed, and forgotten, when the writer takes from the queue: submitters
	// waiting for a full queue to have room wait on it. Nil when nobody waits.
	room chan struct{}

	// ready tells the writer to look at the queue again: it received its first entry, a
	// full batch or a flush marker. While a batch lingers the writer sleeps rather than
	// receive item by item, so that offering an item wakes no goroutine.
	ready    chan struct{}
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
		capacity: capacity,
		maxBatch: maxBatch,
		linger:   linger,
		ready:    make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go b.run()
	return b
}

// offer queues item without waiting; false means the queue is full or closed and item was
// not taken.
func (b *batcher[T]) offer(item T) bool {
	b.mu.Lock()
	ok := !b.closed && b.queued() < b.capacity
	if ok {
		b.push(batchEntry[T]{item: item})
	}
	b.mu.Unlock()
	return ok
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

// enqueue queues e, waiting for room while the queue is full, then waits for e's outcome.
func (b *batcher[T]) enqueue(ctx context.Context, e batchEntry[T]) error {
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return errBatcherClosed
		}
		if b.queued() < b.capacity {
			b.push(e)
			b.mu.Unlock()
			break
		}
		if b.room == nil {
			b.room = make(chan struct{})
		}
		room := b.room
		b.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	// Queued before the batcher closed: the writer or its final drain acknowledges it.
	return <-e.ack
}

// queued is the number of entries waiting; b.mu is held.
func (b *batcher[T]) queued() int { return len(b.queue) - b.head }

// push appends e to the queue and wakes the writer when it has something new to act on:
// a first entry, a full batch or a flush marker. b.mu is held.
func (b *batcher[T]) push(e batchEntry[T]) {
	if len(b.queue) == cap(b.queue) && b.head > 0 { // room at the front: reuse it
		n := copy(b.queue, b.queue[b.head:])
		clear(b.queue[n:])
		b.queue, b.head = b.queue[:n], 0
	}
	b.queue = append(b.queue, e)
	if e.flush {
		b.flushes++
	}
	if n := b.queued(); n == 1 || n == b.maxBatch || e.flush {
		select {
		case b.ready <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// batchReady says the queue holds a full batch or a flush marker; b.mu is held.
func (b *batcher[T]) batchReady() bool { return b.flushes > 0 || b.queued() >= b.maxBatch }

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
	for b.await() {
		b.lingerFor()
		b.commit(b.take())
	}
	// Stopping: write what is queued, then refuse more.
	for {
		b.mu.Lock()
		if b.queued() == 0 {
			b.closed = true
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.commit(b.take())
	}
}

// await waits until the queue holds something; false means the batcher is stopping.
func (b *batcher[T]) await() bool {
	for {
		b.mu.Lock()
		n := b.queued()
		b.mu.Unlock()
		if n > 0 {
			return true
		}
		select {
		case <-b.ready:
		case <-b.stop:
			return false
		}
	}
}

// lingerFor lets a batch wait linger for company, less when the queue holds a full batch or
// a flush marker, and not at all right after a full batch (a backlog).
func (b *batcher[T]) lingerFor() {
	if b.linger <= 0 || b.backlog {
		return
	}
	timer := time.NewTimer(b.linger)
	defer timer.Stop()
	for {
		b.mu.Lock()
		ready := b.batchReady()
		b.mu.Unlock()
		if ready {
			return
		}
		select {
		case <-timer.C:
			return
		case <-b.ready: // look again: the wake-up may be older than this batch
		case <-b.stop:
			return
		}
	}
}

// take moves the next batch out of the queue into the writer's entries: up to maxBatch
// entries, ending early after a flush marker.
func (b *batcher[T]) take() []batchEntry[T] {
	entries := b.entries[:0]
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.head < len(b.queue) && len(entries) < b.maxBatch {
		e := b.queue[b.head]
		b.queue[b.head] = batchEntry[T]{}
		b.head++
		entries = append(entries, e)
		if e.flush {
			b.flushes--
			break
		}
	}
	b.backlog = len(entries) >= b.maxBatch
	if b.head == len(b.queue) {
		// Empty: start again from the front, and let a burst's large queue go.
		b.head = 0
		if cap(b.queue) > b.maxBatch {
			b.queue = nil
		} else {
			b.queue = b.queue[:0]
		}
	}
	if b.room != nil {
		close(b.room)
		b.room = nil
	}
	return entries
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
