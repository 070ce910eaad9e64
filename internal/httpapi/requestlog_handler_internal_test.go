package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/provider/coreapi/internal/core"
)

// The request's logger carries its id once, at the top level, whatever the caller adds.
func TestRequestLogger(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	base := slog.New(slog.NewJSONHandler(&out, nil))
	ctx := context.WithValue(core.WithRequestID(context.Background(), "req_1"), requestInfoKey{}, &requestInfo{log: base})
	log := logger(ctx)

	log.Info("one", "a", 1, "b", 2, "c", 3, "d", 4, "e", 5, "f", 6)
	log.With("component", "x").Warn("two")
	log.WithGroup("g").Info("three", "k", "v")

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines: %s", len(lines), out.String())
	}
	for _, line := range lines {
		if n := strings.Count(line, `"request_id":"req_1"`); n != 1 {
			t.Errorf("request_id %d times in %s", n, line)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if m["request_id"] != "req_1" {
			t.Errorf("request_id not at the top level of %s", line)
		}
	}
	if !strings.Contains(lines[2], `"g":{"k":"v"}`) {
		t.Errorf("the group lost its attributes: %s", lines[2])
	}
	if logger(context.Background()) != slog.Default() {
		t.Error("outside a request the default logger is expected")
	}
}
