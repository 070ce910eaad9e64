package httpapi

import (
	"encoding/json"
	"testing"
)

// Null fields share one map per type; setting a field replaces its map, so the shared null
// stays null whatever a handler does with a field that held it. (Not parallel: AllocsPerRun
// counts the whole process's allocations.)
func TestSharedNull(t *testing.T) {
	var s *string
	a, b := nullableFrom(s), nullableFrom(s)
	a.Set("x")
	for _, n := range []any{b, null[string](), nullableFrom(s)} {
		out, err := json.Marshal(n)
		if err != nil || string(out) != "null" {
			t.Fatalf("shared null marshals as %s, %v", out, err)
		}
	}
	if v, err := a.Get(); err != nil || v != "x" {
		t.Fatalf("set field: %q, %v", v, err)
	}
	if out, _ := json.Marshal(null[int64]()); string(out) != "null" {
		t.Fatalf("null of another type marshals as %s", out)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = nullableFrom(s) }); allocs != 0 {
		t.Errorf("a null field allocates %v times", allocs)
	}
}
