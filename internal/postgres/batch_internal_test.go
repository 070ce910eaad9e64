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
