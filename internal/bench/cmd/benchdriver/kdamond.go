package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The kernel's memory monitor. The development machine runs DAMON (kdamond, a kernel
// thread) with a physical-address scheme that pages out cold page cache: every 500 ms it
// samples the accessed bits of pages spread over 3 GiB. Idle, a sample takes it under a
// millisecond of CPU; while a benchmark runs, 8-21 ms of CPU over 13-96 ms, every
// 540-600 ms, and the kernel does not preempt it (PREEMPT_NONE). In a get-organization run,
// 92 % of the API's requests over 5 ms and 89 % of the floor's were sent while it ran or
// within 30 ms after, windows that covered 13 % of the phase (docs/performance.md 12.). It
// holds a CPU without stopping the machine, so the pause watcher does not see it: the
// watcher reads the thread's run time (/proc/<pid>/schedstat) on every tick instead, and
// reports each stretch in which it ran, so that a paced phase can say how much of its tail
// fell in them.

// kernelRunGap ends a stretch of the kernel thread's runs: it yields now and then within
// one sample, and the next sample is 500 ms away.
const kernelRunGap = 20 * time.Millisecond

// kernelShadow is how long after a run a request sent is still counted as in its shadow:
// the requests queued behind the stalled CPU take that long to drain.
const kernelShadow = 30 * time.Millisecond

// kernelWatchedLine is the watcher's line saying it watches the monitor.
const kernelWatchedLine = "kdamond watched"

// kernelRun is one stretch in which the kernel's memory monitor ran.
type kernelRun struct {
	start, end time.Time
	cpu        time.Duration
}

// kernelThreads reads the run time of the kdamond threads.
type kernelThreads struct {
	fds []int
	buf [128]byte
}

// openKernelThreads opens the schedstat of every kdamond thread; nil when there is none.
func openKernelThreads() *kernelThreads {
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	k := &kernelThreads{}
	for _, comm := range comms {
		name, err := os.ReadFile(comm)
		if err != nil || !bytes.HasPrefix(name, []byte("kdamond")) {
			continue
		}
		fd, err := syscall.Open(filepath.Join(filepath.Dir(comm), "schedstat"), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == nil {
			k.fds = append(k.fds, fd)
		}
	}
	if len(k.fds) == 0 {
		return nil
	}
	return k
}

// runtime returns the threads' CPU time so far, in nanoseconds: schedstat's first field.
// It allocates nothing: it runs on every tick of the watcher, whose own collection cycles
// would show as the host's pauses.
func (k *kernelThreads) runtime() int64 {
	var total int64
	for _, fd := range k.fds {
		n, err := syscall.Pread(fd, k.buf[:], 0)
		if err != nil {
			continue
		}
		var v int64
		for _, c := range k.buf[:max(n, 0)] {
			if c < '0' || c > '9' {
				break
			}
			v = v*10 + int64(c-'0')
		}
		total += v
	}
	return total
}

// kernelRunTracker turns the watcher's readings of the threads' run time into runs.
type kernelRunTracker struct {
	last int64 // run time at the previous reading
	open bool  // a run is under way
	run  kernelRun
}

// observe takes the reading total, made at now (the previous one at prev), and returns the
// run it ends, if any.
func (t *kernelRunTracker) observe(total int64, prev, now time.Time) (kernelRun, bool) {
	ran := total - t.last
	t.last = total
	switch {
	case ran > 0 && !t.open:
		t.open, t.run = true, kernelRun{start: prev, end: now, cpu: time.Duration(ran)}
	case ran > 0:
		t.run.end = now
		t.run.cpu += time.Duration(ran)
	case t.open && now.Sub(t.run.end) >= kernelRunGap:
		t.open = false
		return t.run, true
	}
	return kernelRun{}, false
}

// formatKernelRun and parseKernelRun carry a run from the watcher to the driver: a line
// "k <start, Unix ns> <end, Unix ns> <CPU, ns>".
func formatKernelRun(r kernelRun) string {
	return fmt.Sprintf("k %d %d %d", r.start.UnixNano(), r.end.UnixNano(), r.cpu.Nanoseconds())
}

func parseKernelRun(line string) (kernelRun, bool) {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "k" {
		return kernelRun{}, false
	}
	var v [3]int64
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return kernelRun{}, false
		}
		v[i] = n
	}
	return kernelRun{time.Unix(0, v[0]), time.Unix(0, v[1]), time.Duration(v[2])}, true
}

// kernelShare is what a paced phase's tail owes the kernel's memory monitor.
type kernelShare struct {
	watched    bool          // the machine has the monitor, and it was watched
	runs       int           // its runs that began in the phase
	cpu        time.Duration // their CPU time
	slow       int           // requests over the target
	slowInRuns int           // of them, sent during a run or in its shadow
	covered    time.Duration // how much of the phase the runs and their shadows cover
	phase      time.Duration
	p99Outside time.Duration // the p99 of the requests sent outside them
}

// shareOf places a phase's requests (sent, latency) against the runs.
func shareOf(runs []kernelRun, sent []time.Time, latency []time.Duration, over time.Duration) kernelShare {
	s := kernelShare{watched: true}
	if len(sent) == 0 {
		return s
	}
	first, last := slices.MinFunc(sent, time.Time.Compare), slices.MaxFunc(sent, time.Time.Compare)
	s.phase = last.Sub(first)
	var windows [][2]time.Time
	for _, r := range runs {
		if r.end.Before(first) || r.start.After(last) {
			continue
		}
		s.runs++
		s.cpu += r.cpu
		from, to := r.start, r.end.Add(kernelShadow)
		windows = append(windows, [2]time.Time{from, to})
		s.covered += earlierOf(to, last).Sub(laterOf(from, first))
	}
	in := func(t time.Time) bool {
		for _, w := range windows {
			if !t.Before(w[0]) && !t.After(w[1]) {
				return true
			}
		}
		return false
	}
	var outside []time.Duration
	for i, t := range sent {
		inRun := in(t)
		if latency[i] > over {
			s.slow++
			if inRun {
				s.slowInRuns++
			}
		}
		if !inRun {
			outside = append(outside, latency[i])
		}
	}
	if len(outside) > 0 {
		slices.Sort(outside)
		s.p99Outside = outside[min(len(outside)-1, len(outside)*99/100)]
	}
	return s
}

func (s kernelShare) String() string {
	switch {
	case !s.watched:
		return "kdamond not watched"
	case s.runs == 0:
		return "kdamond never ran"
	}
	ran := fmt.Sprintf("kdamond ran %d times, %s of CPU", s.runs, ms(s.cpu))
	if s.runs == 1 {
		ran = fmt.Sprintf("kdamond ran once, %s of CPU", ms(s.cpu))
	}
	if s.slow == 0 {
		return ran
	}
	return fmt.Sprintf("%s; %d of the %d slow requests were sent while it ran or within %v after (%.0f %% of the phase); p99 outside those windows %s",
		ran, s.slowInRuns, s.slow, kernelShadow, 100*s.covered.Seconds()/max(s.phase.Seconds(), 1e-9), ms(s.p99Outside))
}

func earlierOf(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
