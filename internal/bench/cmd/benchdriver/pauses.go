package main

import (
	"bufio"
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// Host pauses. The development machine is a virtual machine on a shared host, which now and
// then stops running it altogether: a system-wide profile (perf record -a) of a
// get-organization run had no sample on either CPU for 38 ms, and the API's paced phase
// took its largest burst of slow requests right then (291 over 5 ms, up to 21 ms), which
// alone moved its p99 from 3.6 to 5.0 ms (docs/performance.md 11.). Nothing runs during
// such a pause, so no server can avoid it, and the requests the driver could not send meanwhile
// go out together when it ends. So that a missed p99 can be told apart from the server's
// own slowness, a watcher measures every pause and each paced phase reports the ones that
// fell in it.
//
// The watcher is the driver's own binary run again as a child process with
// pauseWatcherEnv set: a thread that sleeps a millisecond at a time and notes every wake-up
// more than pauseThreshold late. Its process has nothing else to run, so the Go scheduler
// never delays it, and with a real-time priority (SCHED_FIFO, when allowed) no ordinary
// process on the machine does either: what is left is the machine not running at all.

const (
	pauseWatcherEnv = "BENCHDRIVER_PAUSE_WATCHER"
	pauseThreshold  = 5 * time.Millisecond
	pauseTick       = time.Millisecond
)

// runPauseWatcher is the child's whole life: the first line says whether it runs real-time,
// then one line per pause ("<start, Unix ns> <length, ns>"), until the driver is gone.
func runPauseWatcher() {
	runtime.GOMAXPROCS(1)
	runtime.LockOSThread()
	fmt.Println(setRealtime() == nil)
	threads := openKernelThreads()
	var kernel kernelRunTracker
	if threads != nil {
		kernel.last = threads.runtime()
		fmt.Println(kernelWatchedLine)
	}
	tick := syscall.Timespec{Nsec: pauseTick.Nanoseconds()}
	prev := time.Now()
	for {
		// A raw nanosleep keeps this thread (and its only P) instead of handing it to the
		// scheduler: nothing else in this process needs to run.
		syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&tick)), 0, 0)
		now := time.Now()
		var err error
		if late := now.Sub(prev) - pauseTick; late >= pauseThreshold {
			_, err = fmt.Printf("%d %d\n", prev.UnixNano(), late.Nanoseconds())
		}
		if threads != nil {
			if run, ended := kernel.observe(threads.runtime(), prev, now); ended {
				_, err = fmt.Println(formatKernelRun(run))
			}
		}
		if err != nil {
			return // the driver closed the pipe
		}
		prev = now
	}
}

// setRealtime gives the calling thread the lowest real-time priority (SCHED_FIFO 1).
func setRealtime() error {
	const schedFIFO = 1
	param := struct{ priority int32 }{1}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, 0, schedFIFO, uintptr(unsafe.Pointer(&param))); errno != 0 {
		return errno
	}
	return nil
}

// pause is one stretch of time the watcher could not run.
type pause struct {
	start  time.Time
	length time.Duration
}

// pauseLog collects the watcher's pauses. A nil *pauseLog (no watcher) has none.
type pauseLog struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	pauses []pause
	kernel []kernelRun // the kernel memory monitor's runs (kdamond.go)
	// kernelWatched: the machine has the monitor (the watcher said so).
	kernelWatched bool
}

// watchPauses starts the watcher; if it cannot, the run goes on without it.
func watchPauses() *pauseLog {
	exe, err := os.Executable()
	if err != nil {
		log.Printf("host pauses are not watched: %v", err)
		return nil
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), pauseWatcherEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		log.Printf("host pauses are not watched: %v", err)
		return nil
	}
	l := &pauseLog{cmd: cmd}
	lines := bufio.NewScanner(out)
	if lines.Scan() && lines.Text() != "true" {
		log.Printf("host pauses are watched without a real-time priority (not permitted): a machine busy for %v shows as a pause too", pauseThreshold)
	}
	go func() {
		for lines.Scan() {
			if run, ok := parseKernelRun(lines.Text()); ok {
				l.mu.Lock()
				l.kernel = append(l.kernel, run)
				l.mu.Unlock()
				continue
			}
			if lines.Text() == kernelWatchedLine {
				l.mu.Lock()
				l.kernelWatched = true
				l.mu.Unlock()
				continue
			}
			start, length, ok := strings.Cut(lines.Text(), " ")
			ns, err1 := strconv.ParseInt(start, 10, 64)
			d, err2 := strconv.ParseInt(length, 10, 64)
			if ok && err1 == nil && err2 == nil {
				l.mu.Lock()
				l.pauses = append(l.pauses, pause{time.Unix(0, ns), time.Duration(d)})
				l.mu.Unlock()
			}
		}
	}()
	return l
}

func (l *pauseLog) stop() {
	if l != nil {
		_ = l.cmd.Process.Kill()
		_ = l.cmd.Wait()
	}
}

// pauses sums up the pauses of one phase.
type pauses struct {
	count          int
	total, longest time.Duration
}

// between returns the pauses that began between from and to.
func (l *pauseLog) between(from, to time.Time) pauses {
	var p pauses
	if l == nil {
		return p
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, x := range l.pauses {
		if !x.start.Before(from) && x.start.Before(to) {
			p.count++
			p.total += x.length
			p.longest = max(p.longest, x.length)
		}
	}
	return p
}

// kernelShare places a phase's requests against the kernel memory monitor's runs.
func (l *pauseLog) kernelShare(sent []time.Time, latency []time.Duration, over time.Duration) kernelShare {
	if l == nil {
		return kernelShare{}
	}
	l.mu.Lock()
	runs, watched := slices.Clone(l.kernel), l.kernelWatched
	l.mu.Unlock()
	if !watched {
		return kernelShare{}
	}
	return shareOf(runs, sent, latency, over)
}

func (p pauses) String() string {
	switch p.count {
	case 0:
		return "the host never paused"
	case 1:
		return fmt.Sprintf("the host paused once, %s", ms(p.longest))
	default:
		return fmt.Sprintf("the host paused %d times, %s in all, the longest %s", p.count, ms(p.total), ms(p.longest))
	}
}
