package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// Not parallel: the settings are the process's.
func TestTuneGC(t *testing.T) {
	before, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(before); debug.SetMemoryLimit(limit) })

	tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("GC percent %d, want the default %d", got, defaultGCPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != defaultMemoryLimit {
		t.Errorf("memory limit %d, want the default %d", got, defaultMemoryLimit)
	}

	// Go applied GOGC and GOMEMLIMIT itself at start; the server leaves them alone.
	tuneGC(func(name string) string { return map[string]string{"GOGC": "100", "GOMEMLIMIT": "off"}[name] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: GC percent changed to %d", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT set: memory limit changed to %d", got)
	}
}
