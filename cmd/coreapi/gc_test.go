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

	for _, c := range []struct {
		name    string
		env     map[string]string // Go applied these itself at start: here 100 and no limit
		percent int
		limit   int64
	}{
		{"neither set: paced by the memory limit alone", nil, -1, defaultMemoryLimit},
		{"only the limit set: GOGC 400 under it", map[string]string{"GOMEMLIMIT": "4GiB"}, defaultGCPercent, math.MaxInt64},
		{"only GOGC set: the default limit", map[string]string{"GOGC": "100"}, 100, defaultMemoryLimit},
		{"both set: left alone", map[string]string{"GOGC": "100", "GOMEMLIMIT": "off"}, 100, math.MaxInt64},
	} {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
		tuneGC(func(name string) string { return c.env[name] })
		if got := debug.SetGCPercent(100); got != c.percent {
			t.Errorf("%s: GC percent %d, want %d", c.name, got, c.percent)
		}
		if got := debug.SetMemoryLimit(math.MaxInt64); got != c.limit {
			t.Errorf("%s: memory limit %d, want %d", c.name, got, c.limit)
		}
	}
}
