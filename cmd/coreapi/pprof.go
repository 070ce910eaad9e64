package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// servePprof serves Go's profiler on addr (PPROF_ADDR; loopback addresses only), for
// `make bench` and for profiling by hand: `go tool pprof http://ADDR/debug/pprof/profile`.
func servePprof(addr string, logger *slog.Logger) {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		logger.Error("PPROF_ADDR must be a loopback address such as 127.0.0.1:6060; profiler not started", "addr", addr)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	logger.Info("profiler listening", "addr", addr)
	if err := srv.ListenAndServe(); err != nil {
		logger.Error("profiler stopped", "error", err)
	}
}
