// Package profiler serves Go's profiler on a loopback address, for the API (PPROF_ADDR) and
// the benchmark's floor (-pprof): `go tool pprof http://ADDR/debug/pprof/profile`.
package profiler

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// Serve serves the profiler on addr until it fails. It refuses any address that is not a
// loopback one: profiles show the process's insides.
func Serve(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("profiler: %q is not a loopback address such as 127.0.0.1:6060", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	return srv.ListenAndServe()
}
