package main

import (
	"runtime/debug"
)

// The garbage collector's defaults for serve, each unless the environment sets Go's own
// variable (GOGC, GOMEMLIMIT), which then wins as usual.
//
// The server's live heap is small and mostly fixed (9-10 MB: the compiled contract,
// kin-openapi's document, the request-log and growth queues), and every request leaves
// about ten kilobytes of garbage. Requests
// served while a cycle marks are several times slower (docs/performance.md 7. and 9.), so
// the fewer cycles the better: with Go's default (GOGC=100) a cycle started every ~9 MB
// allocated, about seven times a second at 5,000 requests/s.
//
// With neither variable set, the collector is paced by a soft memory limit alone: it runs
// when the memory Go manages nears defaultMemoryLimit (about once every 1.5 s at 5,000
// requests/s), and as often as it must to stay under it when the live heap grows. When the
// environment sets only the limit, which may be a generous safety net, the heap is not left
// to grow up to it: GOGC is then defaultGCPercent, a cycle every four live heaps allocated.
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 96 << 20 // bytes of memory the Go runtime manages; RSS adds the binary
)

// tuneGC applies the defaults above where the environment does not choose.
func tuneGC(getenv func(string) string) {
	gogc, limit := getenv("GOGC"), getenv("GOMEMLIMIT")
	switch {
	case gogc == "" && limit == "":
		debug.SetMemoryLimit(defaultMemoryLimit)
		debug.SetGCPercent(-1)
	case gogc == "":
		debug.SetGCPercent(defaultGCPercent)
	case limit == "":
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}
