package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/provider/coreapi/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestRunDrainsInFlightRequests starts the server, begins a request whose body is still
// arriving, and then asks the server to stop: the request must complete with its normal
// answer, and run must return cleanly afterwards.
func TestRunDrainsInFlightRequests(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	env := map[string]string{"DATABASE_URL": dsn, "LISTEN_ADDR": addr, "LOG_LEVEL": "error"}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, func(k string) string { return env[k] }, os.Stdout) }()

	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil && resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	body := `{"legal_name_ar":"شركة","legal_name_en":"Drain Co","display_name":"Drain","organization_type":"vendor","country":"SA"}`
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/organizations", pr)
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer dev:operator")
	type result struct {
		status int
		err    error
	}
	answered := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- result{err: err}
			return
		}
		resp.Body.Close()
		answered <- result{status: resp.StatusCode}
	}()
	if _, err := io.WriteString(pw, body[:20]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the server is now reading the body
	stop()                             // what SIGTERM does
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("run returned while a request was in flight: %v", err)
	default:
	}
	if _, err := io.WriteString(pw, body[20:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()

	r := <-answered
	if r.err != nil || r.status != http.StatusCreated {
		t.Fatalf("in-flight request: status %d, err %v", r.status, r.err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after draining")
	}
	if _, err := http.Get(base + "/healthz"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("the server still accepts connections after shutdown: %v", err)
	}
	// The drained request's log was written on the way out, not lost with the queue.
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var logged int
	err = conn.QueryRow(context.Background(),
		"SELECT count(*) FROM request_logs WHERE method = 'POST' AND route = '/v1/organizations' AND status = 201").Scan(&logged)
	if err != nil || logged != 1 {
		t.Errorf("request log of the drained request: %d rows, %v", logged, err)
	}
}

// TestSecondServerKeepsTheSharedCluster is a second `make run` on another port: both use the
// private cluster of the same PGDATA_DIR, and the first one stopping must not take the
// database away from the second; the last one stops it.
func TestSecondServerKeepsTheSharedCluster(t *testing.T) {
	t.Parallel()
	// Not t.TempDir: its parent is private to root, and the cluster may run as postgres.
	dir, err := os.MkdirTemp("", "coreapi-pgdata-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := config{pgdataDir: dir}
	logger := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	dsn, closeFirst, err := openDatabase(ctx, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	second, closeSecond, err := openDatabase(ctx, cfg, logger)
	if err != nil {
		closeFirst()
		t.Fatal(err)
	}
	if second != dsn {
		t.Errorf("the second server uses %q, not the first's cluster %q", second, dsn)
	}
	closeFirst()
	ping := func() error {
		conn, err := pgx.Connect(ctx, second)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		return conn.Ping(ctx)
	}
	if err := ping(); err != nil {
		closeSecond()
		t.Fatalf("the second server lost its database when the first stopped: %v", err)
	}
	closeSecond()
	if ping() == nil {
		t.Error("the cluster still runs after the last server stopped")
	}
}
