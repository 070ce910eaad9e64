package postgres

import (
	"context"
	"fmt"
	"strconv"
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
// starves. While the API is idle the run takes full batches at its full concurrency; a batch
// begun then that finds the API busy before one of its statements gives way there, as one taken
// while busy would (batchGivingWay): a request after a quiet spell meets what is left of the
// batches' statements under way, not the rest of their batches.

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

// renewalBatchMaxGiveWay is how long a batch begun while the API was idle gives way to it at
// most, from when it first finds it busy: its transaction holds its subscriptions' row locks
// meanwhile, and a request that changes one of them waits for it. A batch of 100 is 50–100 ms
// of work on two quiet cores, three times that in pauses at the default share, and waits for
// at most one other such batch with the default two workers of a pool of four; the rest of a
// batch that reaches the limit goes on without giving way.
const renewalBatchMaxGiveWay = time.Second

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
	// turn is held (a value sent) by the batch taken while the API is busy, and its pause:
	// one such batch at a time for the whole run. A batch begun while the API was idle takes
	// it once it finds the API busy, and keeps it to its end.
	turn  chan struct{}
	pause func(context.Context, time.Duration)
}

// givingWay is how the run that starts now gives way to the API.
func (d *DB) givingWay() *givingWay {
	g := &givingWay{requests: d.Requests, share: d.Renewals.busyShare(), turn: make(chan struct{}, 1), pause: d.RenewalPause}
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

// batchTaker takes the steps of a batch and returns how many it took and the errors of those
// that failed; way, when not nil, is how its transaction gives way to the API (DB.takeBatch).
type batchTaker func(ctx context.Context, batch []dueStep, way *batchGivingWay) (int, []error)

// take takes the steps of batch with takeBatch and returns how many it took and the errors
// of those that failed: all at once while the API is idle, giving way within the batch if it
// becomes busy; renewalBusyBatchSize at a time, alone and each followed by its pause, while it
// is busy (asked before each).
func (g *givingWay) take(ctx context.Context, batch []dueStep, takeBatch batchTaker) (int, []error) {
	taken := 0
	var errs []error
	for len(batch) > 0 && ctx.Err() == nil {
		if !g.busy() {
			way := g.batchBegunIdle()
			took, failed := takeBatch(ctx, batch, way)
			way.end(ctx)
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
func (g *givingWay) takeAlone(ctx context.Context, part []dueStep, takeBatch batchTaker) (int, []error) {
	g.turn <- struct{}{}
	defer func() { <-g.turn }()
	start := time.Now()
	took, failed := takeBatch(ctx, part, nil)
	g.pause(ctx, pauseAfter(time.Since(start), g.share))
	return took, failed
}

// batchGivingWay is how a batch begun while the API was idle gives way to it once it is busy:
// before each statement of its transaction (batchTx), it waits for its turn, as a batch
// taken while busy does, then pauses for the work it did since it began or last paused. So
// the requests share the machine with the statements under way when they came, and then with
// one batch's statements at a time, at the run's busy share. Its transaction stays open
// meanwhile: it gives way for renewalBatchMaxGiveWay at most from when it first finds the API
// busy, then goes on.
type batchGivingWay struct {
	g *givingWay
	// worked is when the batch last began working: its start, or its last pause's end.
	worked time.Time
	// turn: it holds g's turn, until its end.
	turn bool
	// until is when it stops giving way; zero until it first finds the API busy.
	until time.Time
}

// batchBegunIdle is the giving way of a batch that begins now, while the API is idle; nil
// when the run never gives way.
func (g *givingWay) batchBegunIdle() *batchGivingWay {
	if g.requests == nil {
		return nil
	}
	return &batchGivingWay{g: g, worked: time.Now()}
}

// beforeStatement gives way to the API, if it is busy, before a statement of the batch's
// transaction: it waits for the batch's turn (unless it holds it), then pauses. A nil b does
// not give way.
func (b *batchGivingWay) beforeStatement(ctx context.Context) {
	if b == nil || !b.g.busy() {
		return
	}
	now := time.Now()
	if b.until.IsZero() {
		b.until = now.Add(renewalBatchMaxGiveWay)
	}
	if !b.turn && now.Before(b.until) {
		b.turn = b.g.waitTurn(ctx, b.until.Sub(now))
	}
	if left := time.Until(b.until); b.turn && left > 0 {
		b.g.pause(ctx, min(pauseAfter(now.Sub(b.worked), b.g.share), left))
	}
	b.worked = time.Now()
}

// end, after the batch (its transaction, then the steps it left to billingStep), pauses for
// the work since its last pause if the API is busy, as a batch taken while busy does, and
// gives its turn back. A nil b has nothing to do.
func (b *batchGivingWay) end(ctx context.Context) {
	if b == nil || !b.turn {
		return
	}
	if b.g.busy() {
		b.g.pause(ctx, pauseAfter(time.Since(b.worked), b.g.share))
	}
	<-b.g.turn
}

// waitTurn takes the run's turn, waiting for at most limit, and reports whether it has it.
func (g *givingWay) waitTurn(ctx context.Context, limit time.Duration) bool {
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case g.turn <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
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
