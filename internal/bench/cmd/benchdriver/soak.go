package main

import (
	"context"
	"fmt"
	"log"
	"time"
)

// soak runs the mixed workload against the API alone for o.soak at half of its saturated
// throughput, and prints its RSS every tenth of the run: flat means the last samples are
// no higher than those after the first minute.
func soak(ctx context.Context, env *environment, fix *fixtures, o options) error {
	var mixed scenario
	for _, sc := range scenarios(fix) {
		if sc.name == "mixed" {
			mixed = sc
		}
	}
	attack(ctx, mixed, env.api.base, 0, o.workers, o.warmup, nil)
	m, _ := attack(ctx, mixed, env.api.base, 0, o.workers, o.duration, nil)
	rate := max(1, m.Throughput/2)
	log.Printf("soak: mixed load at %.0f req/s for %v", rate, o.soak)
	env.api.resetPeak()
	type sample struct {
		at       time.Duration
		rss, hwm int64
	}
	var samples []sample
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(o.soak / 10)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case t := <-tick.C:
				samples = append(samples, sample{t.Sub(start).Round(time.Second), env.api.memory("VmRSS"), env.api.memory("VmHWM")})
				if len(samples) == 10 {
					return
				}
			}
		}
	}()
	res, sampleErr := attack(ctx, mixed, env.api.base, rate, o.workers, o.soak, nil)
	<-done
	fmt.Printf("\nSoak: mixed workload, %.0f req/s offered for %v: %.0f req/s served, p50 %s, p99 %s, %d errors %s\n\n",
		rate, o.soak, res.Throughput, ms(res.Latencies.P50), ms(res.Latencies.P99), errorsOf(res), sampleErr)
	fmt.Println("| elapsed | API RSS | API peak RSS |")
	fmt.Println("|---:|---:|---:|")
	for _, s := range samples {
		fmt.Printf("| %v | %s | %s |\n", s.at, mb(s.rss), mb(s.hwm))
	}
	if len(samples) >= 4 {
		early, late := samples[1].rss, samples[len(samples)-1].rss
		fmt.Printf("\nRSS after %v: %s; at the end: %s (%+.0f %%); peak %s (target <= 150 MB, flat)\n",
			samples[1].at, mb(early), mb(late), float64(late-early)/float64(early)*100, mb(samples[len(samples)-1].hwm))
	}
	return nil
}
