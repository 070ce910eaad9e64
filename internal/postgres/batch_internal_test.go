package postgres

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// recordedWrites is a batcher's write function that keeps the batches it was given.
type recordedWrites struct {
	mu      sync.Mutex
	batches [][]int
	err     error
}

func (w *recordedWrites) write(_ context.Context, items []int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.batches = append(w.batches, slices.Clone(items)) // the batcher reuses items
	return w.err
}

func (w *recordedWrites) snapshot() [][]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.batches)
}

// written waits until n items were written, or fails the test after ten seconds.
func (w *recordedWrites) written(t *testing.T, n int) [][]int {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		got := w.snapshot()
		if count(got) >= n {
			return got
		}
	}
	t.Fatalf("written %v, want %d items", w.snapshot(), n)
	return nil
}

func count(batches [][]int) (n int) {
	for _, b := range batches {
		n += len(b)
	}
	return n
}

func closeBatcher(t *testing.T, b *batcher[int]) {
	t.Cleanup(func() {
		if err := b.close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
}

// lingering starts a batcher whose batches linger an hour unless cut short, closed when
// the test ends, and offers it items 0 to n-1.
func lingering(t *testing.T, maxBatch, n int) (*recordedWrites, *batcher[int]) {
	t.Helper()
	w := &recordedWrites{}
	b := newBatcher(100, maxBatch, time.Hour, w.write)
	closeBatcher(t, b)
	for i := range n {
		if !b.offer(i) {
			t.Fatalf("offer %d refused", i)
		}
	}
	return w, b
}

// Items offered while a batch lingers join it, and a flush ends the linger without waiting it out.
func TestBatcherLingerGathersAndFlushEndsIt(t *testing.T) {
	w, b := lingering(t, 50, 20)
	flushed := make(chan error, 1)
	go func() { flushed <- b.flush(context.Background()) }() // once queued, flush waits for the write
	select {
	case err := <-flushed:
		if err != nil {
			t.Fatalf("flush: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("flush still waits after 10 s: the linger was not cut short")
	}
	want := [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}}
	if got := w.snapshot(); !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("batches %v, want %v", got, want)
	}
	// The flush is spent: the next batch lingers again.
	b.offer(20)
	time.Sleep(50 * time.Millisecond)
	if got := w.snapshot(); len(got) != 1 {
		t.Fatalf("batches %v after a later offer: the next batch did not linger", got)
	}
}

// A full batch is written without waiting out the linger, and so is the backlog behind it.
func TestBatcherFullBatchEndsLinger(t *testing.T) {
	w, _ := lingering(t, 10, 25)
	got := w.written(t, 20) // at least the two full batches, with no flush
	var all []int
	for _, batch := range got {
		if len(batch) > 10 {
			t.Fatalf("a batch of %d, more than maxBatch: %v", len(batch), got)
		}
		all = append(all, batch...)
	}
	if !slices.IsSorted(all) || all[0] != 0 {
		t.Fatalf("items written out of order or lost: %v", got)
	}
}

// Close writes what is still queued, and offers after it are refused or never block.
func TestBatcherCloseDrains(t *testing.T) {
	w := &recordedWrites{}
	b := newBatcher(100, 50, time.Hour, w.write)
	for i := range 5 {
		b.offer(i)
	}
	if err := b.close(context.Background()); err != nil {
		t.Fatalf("close: %v", err)
	}
	if got := count(w.snapshot()); got != 5 {
		t.Fatalf("close wrote %d items, want 5: %v", got, w.snapshot())
	}
	if err := b.submit(context.Background(), 6); !errors.Is(err, errBatcherClosed) {
		t.Fatalf("submit after close: %v, want errBatcherClosed", err)
	}
}

// A waiting caller learns its batch's outcome.
func TestBatcherSubmitReportsTheWrite(t *testing.T) {
	w := &recordedWrites{err: errors.New("disk full")}
	b := newBatcher(100, 50, 0, w.write)
	closeBatcher(t, b)
	if err := b.submit(context.Background(), 1); err == nil || err.Error() != "disk full" {
		t.Fatalf("submit: %v, want the write's error", err)
	}
}

// held starts a batcher whose writes wait until release is called (at the latest when the
// test ends), closed after that.
func held(t *testing.T, capacity, maxBatch int) (w *recordedWrites, b *batcher[int], release func()) {
	t.Helper()
	w, released := &recordedWrites{}, make(chan struct{})
	b = newBatcher(capacity, maxBatch, 0, func(ctx context.Context, items []int) error {
		<-released
		return w.write(ctx, items)
	})
	closeBatcher(t, b)
	release = sync.OnceFunc(func() { close(released) })
	t.Cleanup(release) // runs before the close above
	return w, b, release
}

// takenFirst offers item and waits until the writer took it from the queue.
func takenFirst(t *testing.T, b *batcher[int], item int) {
	t.Helper()
	if !b.offer(item) {
		t.Fatalf("offer %d refused", item)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if len(b.queue) == 0 {
			return
		}
	}
	t.Fatal("the writer did not take the first item")
}

// A full queue refuses offers and holds submitters until the writer takes from it; a
// submitter whose context ends while it waits gives up and queues nothing.
func TestBatcherFullQueueWaitsForRoom(t *testing.T) {
	w, b, release := held(t, 3, 10)
	takenFirst(t, b, 0) // the writer now waits in its write
	for i := 1; i <= 3; i++ {
		if !b.offer(i) {
			t.Fatalf("offer %d refused with room in the queue", i)
		}
	}
	if b.offer(99) {
		t.Fatal("offer to a full queue accepted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := b.submit(ctx, 98); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("submit to a full queue with an ending context: %v, want its deadline", err)
	}
	submitted := make(chan error, 1)
	go func() { submitted <- b.submit(context.Background(), 4) }()
	select {
	case err := <-submitted:
		t.Fatalf("submit returned (%v) while the queue was full", err)
	case <-time.After(50 * time.Millisecond):
	}
	release()
	if err := <-submitted; err != nil {
		t.Fatalf("submit: %v", err)
	}
	var all []int
	for _, batch := range w.written(t, 5) {
		all = append(all, batch...)
	}
	if want := []int{0, 1, 2, 3, 4}; !slices.Equal(all, want) {
		t.Fatalf("written %v, want %v", all, want)
	}
}

// Many goroutines offering, submitting and flushing at once: every item accepted is written
// exactly once, and each goroutine's items in the order it queued them.
func TestBatcherConcurrentProducers(t *testing.T) {
	w := &recordedWrites{}
	b := newBatcher(64, 16, time.Millisecond, w.write)
	const producers, each = 8, 300
	var wg sync.WaitGroup
	accepted := make([][]int, producers)
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				item := p*each + i
				switch {
				case i%3 == 0:
					if err := b.submit(context.Background(), item); err != nil {
						t.Errorf("submit %d: %v", item, err)
						continue
					}
				case i%50 == 1:
					if err := b.flush(context.Background()); err != nil {
						t.Errorf("flush: %v", err)
					}
					continue
				case !b.offer(item):
					continue // refused: the queue was full
				}
				accepted[p] = append(accepted[p], item)
			}
		})
	}
	wg.Wait()
	if err := b.close(context.Background()); err != nil {
		t.Fatalf("close: %v", err)
	}
	var want, got []int
	for _, items := range accepted {
		want = append(want, items...)
	}
	for _, batch := range w.snapshot() {
		if len(batch) > 16 {
			t.Fatalf("a batch of %d, more than maxBatch", len(batch))
		}
		got = append(got, batch...)
	}
	byProducer := func(items []int) [][]int {
		out := make([][]int, producers)
		for _, item := range items {
			out[item/each] = append(out[item/each], item)
		}
		return out
	}
	if !slices.EqualFunc(byProducer(got), byProducer(want), slices.Equal) {
		t.Fatalf("written %d items, accepted %d: lost, duplicated or reordered", len(got), len(want))
	}
}
