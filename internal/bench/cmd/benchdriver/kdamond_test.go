package main

import (
	"testing"
	"time"
)

// A phase's requests are placed against the monitor's runs: slow ones sent during a run or
// in its shadow count as the run's, and the p99 of the others is reported beside.
func TestKernelShare(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	runs := []kernelRun{
		{at(-500), at(-480), 9 * time.Millisecond},  // before the phase: not its
		{at(500), at(540), 12 * time.Millisecond},   // shadow until 570 ms
		{at(1050), at(1060), 8 * time.Millisecond},  // shadow until 1090 ms
		{at(5000), at(5010), 20 * time.Millisecond}, // after the phase: not its
	}
	// 200 requests, one every 5 ms from 0 to 995 ms, 1 ms each but for the slow ones.
	var sent []time.Time
	var latency []time.Duration
	for i := range 200 {
		ms := i * 5
		d := time.Millisecond
		switch ms {
		case 505, 520, 565, 900: // three in the first run or its shadow, one outside
			d = 9 * time.Millisecond
		case 300, 310:
			d = 4 * time.Millisecond // below the target, outside: they make the outside p99
		}
		sent = append(sent, at(ms))
		latency = append(latency, d)
	}
	s := shareOf(runs, sent, latency, 5*time.Millisecond)
	// The phase runs 0-995 ms: the first run covers 500-570 (70 ms); the second begins
	// after the last request (1050 ms) and is not the phase's.
	want := kernelShare{watched: true, runs: 1, cpu: 12 * time.Millisecond, slow: 4, slowInRuns: 3,
		covered: 70 * time.Millisecond, phase: 995 * time.Millisecond, p99Outside: 4 * time.Millisecond}
	if s != want {
		t.Fatalf("shareOf = %+v\nwant      %+v", s, want)
	}
	if got := s.String(); got != "kdamond ran once, 12.00 ms of CPU; 3 of the 4 slow requests were sent while it ran or within 30ms after (7 % of the phase); p99 outside those windows 4.00 ms" {
		t.Errorf("String() = %q", got)
	}
	if got := (kernelShare{}).String(); got != "kdamond not watched" {
		t.Errorf("unwatched: %q", got)
	}
	var none *pauseLog
	if got := none.kernelShare(sent, latency, time.Millisecond); got.watched {
		t.Errorf("no watcher: %+v", got)
	}
}

// The watcher's lines carry a run whole, and nothing else parses as one.
func TestKernelRunLine(t *testing.T) {
	r := kernelRun{time.Unix(0, 1795475506635756041), time.Unix(0, 1795475506675756041), 13 * time.Millisecond}
	got, ok := parseKernelRun(formatKernelRun(r))
	if !ok || !got.start.Equal(r.start) || !got.end.Equal(r.end) || got.cpu != r.cpu {
		t.Fatalf("round trip: %+v %v, want %+v", got, ok, r)
	}
	for _, line := range []string{"1795475506635756041 5000000", "k 1 2", "k a 2 3", kernelWatchedLine} {
		if _, ok := parseKernelRun(line); ok {
			t.Errorf("%q parsed as a run", line)
		}
	}
}

// Readings become runs: a run starts at the reading before the thread's time grew, grows
// while it keeps growing, and ends once it has not for kernelRunGap.
func TestKernelRunTracker(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	added := map[int]int64{3: 2e6, 4: 1e6, 10: 3e6, 60: 1e6} // ms -> run time added by then
	total := int64(5e9)
	tr := &kernelRunTracker{last: total}
	var ended []kernelRun
	for ms := 1; ms <= 100; ms++ {
		total += added[ms]
		if run, ok := tr.observe(total, at(ms-1), at(ms)); ok {
			ended = append(ended, run)
		}
	}
	want := []kernelRun{{at(2), at(10), 6 * time.Millisecond}, {at(59), at(60), time.Millisecond}}
	if len(ended) != len(want) {
		t.Fatalf("runs %+v, want %+v", ended, want)
	}
	for i, w := range want {
		if !ended[i].start.Equal(w.start) || !ended[i].end.Equal(w.end) || ended[i].cpu != w.cpu {
			t.Errorf("run %d: %+v, want %+v", i, ended[i], w)
		}
	}
}
