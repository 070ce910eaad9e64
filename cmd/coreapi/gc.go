package main

import (
	"runtime/debug"
)

// The garbage collector's defaults for serve, each unless the environment sets Go's own
// variable (GOGC, GOMEMLIMIT), which then wins as usual.
//
// The server's live heap is small and mostly fixed (6-9 MB: the compiled contract, the
// request-log and growth queues), and every request leaves about ten kilobytes of garbage. With
// Go's default (GOGC=100) a cycle started every ~9 MB allocated, about seven times a second
// at 5,000 requests/s, and requests served during a cycle were several times slower (their
// p50 1.7 ms against 0.4 ms outside one; docs/performance.md). A larger allowance makes
// cycles rarer at the price of memory, and the soft memory limit takes that price back
// when the live heap grows: the collector then runs as often as it must to stay under it.
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 96 << 20 // bytes of memory the Go runtime manages; RSS adds the binary
)

// tuneGC applies the defaults above where the environment does not choose.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}
