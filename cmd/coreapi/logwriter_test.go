package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/provider/coreapi/internal/apitest"
)

func TestBufferedLog(t *testing.T) {
	t.Parallel()
	var sink apitest.SyncBuffer
	out := newBufferedLog(&sink)
	logger := slog.New(flushOnWarning{Handler: slog.NewJSONHandler(out, nil), out: out}).With("component", "test")

	logger.Info("first")
	if strings.Contains(sink.String(), "first") {
		t.Fatal("an information line was written at once; it should wait for the next flush")
	}
	deadline := time.Now().Add(10 * logFlushInterval)
	for !strings.Contains(sink.String(), "first") {
		if time.Now().After(deadline) {
			t.Fatalf("the line was not written within %s", 10*logFlushInterval)
		}
		time.Sleep(logFlushInterval / 10)
	}

	logger.Info("second")
	logger.Warn("third")
	if s := sink.String(); !strings.Contains(s, "second") || !strings.Contains(s, "third") {
		t.Fatalf("a warning did not write itself and the lines before it at once: %q", s)
	}
	if strings.Index(sink.String(), "second") > strings.Index(sink.String(), "third") {
		t.Fatal("lines written out of order")
	}

	logger.Info("last")
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sink.String(), "last") {
		t.Fatal("Close did not write the buffered line")
	}
	if n := strings.Count(sink.String(), `"component":"test"`); n != 4 {
		t.Fatalf("%d lines carry the logger's attributes, want 4", n)
	}
}
