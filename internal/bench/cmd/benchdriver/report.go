package main

import (
	"fmt"
	"io"
	"time"
)

// Targets of issue 10 (docs/performance.md).
const (
	readRatioTarget  = 0.70
	writeRatioTarget = 0.60
	readP99Target    = 5 * time.Millisecond
	writeP99Target   = 15 * time.Millisecond
	growthRateTarget = 5_000 // events/s
	peakRSSTargetKB  = 150 * 1024
)

func printTable(w io.Writer, results []result, o options) {
	paced := "as many connections"
	if o.pacedConns > 0 {
		paced = fmt.Sprintf("%d connections", o.pacedConns)
	}
	fmt.Fprintf(w, "\nPer scenario: %v warm-up, %v saturated with %d connections (growth: 64), then %v warm-up and %v at half the API's saturated rate with %s; %d round(s).\n\n",
		o.warmup, o.duration, o.workers, o.warmup, o.duration, paced, o.rounds)
	if against := o.against(); against != "" {
		fmt.Fprintf(w, "The floor's columns are the API itself: %s.\n\n", against)
	}
	fmt.Fprintln(w, "| scenario | API req/s | floor req/s | ratio | paced req/s | API p50 | API p99 | floor p50 | floor p99 | API peak RSS | floor peak RSS | API CPU per request | floor CPU per request | PostgreSQL CPU per request (API / floor) | API allocated per request | targets |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range results {
		ratio := r.api.throughput / max(r.floor.throughput, 1)
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.0f %% | %.0f | %s | %s | %s | %s | %s | %s | %.0f µs | %.0f µs | %.0f / %.0f µs | %.1f kB | %s |\n",
			r.scenario.name, r.api.throughput, r.floor.throughput, ratio*100, r.paceRate,
			ms(r.api.p50), ms(r.api.p99), ms(r.floor.p50), ms(r.floor.p99),
			mb(r.api.peakKB), mb(r.floor.peakKB), r.api.cpu*1e6, r.floor.cpu*1e6, r.api.pgCPU*1e6, r.floor.pgCPU*1e6, r.api.allocated/1000, verdict(r, ratio))
	}
	if len(results) > 0 && !results[0].peakReset {
		fmt.Fprintln(w, "\n(peak RSS could not be reset between scenarios: each peak is the process's peak so far)")
	}
	for _, r := range results {
		if r.api.errors+r.floor.errors > 0 {
			fmt.Fprintf(w, "\n%s: errors: API %d (%s), floor %d (%s)", r.scenario.name, r.api.errors, r.api.sample, r.floor.errors, r.floor.sample)
		}
	}
	fmt.Fprintln(w)
}

// p99Target is the scenario's p99 target at half load.
func (sc scenario) p99Target() time.Duration {
	if sc.write {
		return writeP99Target
	}
	return readP99Target
}

// verdict names the targets a scenario misses, or says it meets them.
func verdict(r result, ratio float64) string {
	var missed []string
	ratioTarget, p99Target := readRatioTarget, r.scenario.p99Target()
	if r.scenario.write {
		ratioTarget = writeRatioTarget
	}
	if ratio < ratioTarget {
		missed = append(missed, fmt.Sprintf("ratio < %.0f %%", ratioTarget*100))
	}
	if r.api.p99 > p99Target {
		missed = append(missed, fmt.Sprintf("p99 > %v", p99Target))
	}
	if r.scenario.name == "growth-events" && r.api.throughput < growthRateTarget {
		missed = append(missed, fmt.Sprintf("< %d events/s", growthRateTarget))
	}
	if r.scenario.name == "mixed" && r.api.peakKB > peakRSSTargetKB {
		missed = append(missed, "RSS > 150 MB")
	}
	if r.api.errors > 0 {
		missed = append(missed, fmt.Sprintf("%d errors", r.api.errors))
	}
	if r.floor.errors > 0 { // a floor that fails is faster than one that works: no ratio holds
		missed = append(missed, fmt.Sprintf("the floor answered %d errors", r.floor.errors))
	}
	if len(missed) == 0 {
		return "met"
	}
	s := "MISSED: "
	for i, m := range missed {
		if i > 0 {
			s += ", "
		}
		s += m
	}
	return s
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func mb(kb int64) string { return fmt.Sprintf("%.0f MB", float64(kb)/1024) }
