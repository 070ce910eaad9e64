package postgres

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// The renewal run gives way to the API (docs/design.md, "A run gives way to requests"). On
// two cores, a run at full speed (batches of 100 on several connections) keeps both busy while
// it lasts, and the requests served meanwhile wait for the CPU: their median rose by half and
// their 99th percentile ninefold. So, while the API is busy (Requests), the run's workers take
// batches of renewalBusyBatchSize, one batch at a time for the whole run, each followed by a
// pause that leaves the machine to the requests for (1 − BusyShare)/BusyShare of the time the
// batch took. The pause is bounded by the batch's own time, so however busy the API is the run
// goes on at BusyShare of one connection's pace: renewals are due-date driven, and a run never
// starves. While the API is idle the run takes full batches at its full concurrency.

// Busyness tells whether the API is serving requests (httpapi.InFlight).
type Busyness interface{ Busy() bool }

// RenewalSettings configure the wall-clock renewal run (BillDue).
type RenewalSettings struct {
	// Concurrency is how many batches the run takes at once while the API is idle, each on a
	// connection of its own; 0: half the pool's connections, at least one.
	Concurrency int
	// BusyShare is the share of the time the run works while the API is busy, in (0, 1];
	// 0: DefaultRenewalBusyShare. At 1 the run does not give way.
	BusyShare float64
}

// DefaultRenewalBusyShare is the share of the time a run works while the API is busy: a
// batch, then a pause of three times its length.
const DefaultRenewalBusyShare = 0.25

// renewalBusyBatchSize is how many due steps a batch takes while the API is busy: about
// 10 ms of work for a request arriving meanwhile to share the machine with, not 100.
const renewalBusyBatchSize = 10

// RenewalSettingsFromEnv reads RENEWAL_CONCURRENCY and RENEWAL_BUSY_SHARE (cmd/coreapi's
// usage describes them); unset, each is its default.
func RenewalSettingsFromEnv(getenv func(string) string) (RenewalSettings, error) {
	var s RenewalSettings
	if v := getenv("RENEWAL_CONCURRENCY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return s, fmt.Errorf("RENEWAL_CONCURRENCY must be a positive number of connections such as 4")
		}
		s.Concurrency = n
	}
	if v := getenv("RENEWAL_BUSY_SHARE"); v != "" {
		share, err := strconv.ParseFloat(v, 64)
		if err != nil || !(share > 0 && share <= 1) {
			return s, fmt.Errorf("RENEWAL_BUSY_SHARE must be a share of the time above 0 and at most 1, such as 0.25")
		}
		s.BusyShare = share
	}
	return s, nil
}

// busyShare is the share of the time the run works while the API is busy.
func (s RenewalSettings) busyShare() float64 {
	if s.BusyShare > 0 {
		return s.BusyShare
	}
	return DefaultRenewalBusyShare
}

// pauseAfter is how long the run pauses after a batch that took worked while the API is busy,
// for the batch to be share of the time.
func pauseAfter(worked time.Duration, share float64) time.Duration {
	return time.Duration(float64(worked) * (1 - share) / share)
}

// givingWay is one run's giving way to the API.
type givingWay struct {
	requests Busyness // nil: the run never gives way
	share    float64
	// alone is held by the batch taken while the API is busy, and its pause: one such batch
	// at a time for the whole run.
	alone sync.Mutex
	pause func(context.Context, time.Duration)
}

// givingWay is how the run that starts now gives way to the API.
func (d *DB) givingWay() *givingWay {
	g := &givingWay{requests: d.Requests, share: d.Renewals.busyShare(), pause: d.RenewalPause}
	if g.share >= 1 {
		g.requests = nil
	}
	if g.pause == nil {
		g.pause = Sleep
	}
	return g
}

// busy reports whether the API is busy, for the run to give way.
func (g *givingWay) busy() bool { return g.requests != nil && g.requests.Busy() }

// take takes the steps of batch with takeBatch and returns how many it took and the errors
// of those that failed: all at once while the API is idle; renewalBusyBatchSize at a time,
// alone and each followed by its pause, while it is busy (asked before each).
func (g *givingWay) take(ctx context.Context, batch []dueStep, takeBatch func(context.Context, []dueStep) (int, []error)) (int, []error) {
	taken := 0
	var errs []error
	for len(batch) > 0 && ctx.Err() == nil {
		if !g.busy() {
			took, failed := takeBatch(ctx, batch)
			return taken + took, append(errs, failed...)
		}
		part := batch[:min(len(batch), renewalBusyBatchSize)]
		took, failed := g.takeAlone(ctx, part, takeBatch)
		taken += took
		errs = append(errs, failed...)
		batch = batch[len(part):]
	}
	return taken, errs
}

// takeAlone takes part with takeBatch while the run takes no other batch, then pauses.
func (g *givingWay) takeAlone(ctx context.Context, part []dueStep, takeBatch func(context.Context, []dueStep) (int, []error)) (int, []error) {
	g.alone.Lock()
	defer g.alone.Unlock()
	start := time.Now()
	took, failed := takeBatch(ctx, part)
	g.pause(ctx, pauseAfter(time.Since(start), g.share))
	return took, failed
}

// Sleep waits for d, or until ctx ends: the run's pause unless DB.RenewalPause says otherwise.
func Sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
