package virtual_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/virtual"
)

// BenchmarkEvents measures the simulation alone (no analysis) on one core:
// 30 electors for an hour of virtual time with a flapping leader.
func BenchmarkEvents(b *testing.B) {
	sc := model.Scenario{Name: "events", Instances: 30, Duration: time.Hour, Recovery: 13 * time.Second}
	for i := range 40 {
		sc.Faults = append(sc.Faults, model.Fault{At: time.Duration(i)*90*time.Second + 30*time.Second, For: 20 * time.Second,
			Kind: model.FaultPartition, Mode: model.PartitionBlackhole, Target: model.Target{Role: model.RoleLeader}, AllowSkipped: true})
	}
	var st virtual.Stats
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		var err error
		_, st, err = virtual.RunStats(sc, virtual.Options{SkipAnalysis: true})
		if err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start).Seconds()
	b.ReportMetric(float64(st.Events)*float64(b.N)/el, "events/s")
	b.ReportMetric(float64(st.MachineInputs)*float64(b.N)/el, "machine-inputs/s")
}

// BenchmarkRunsBlackhole: whole partition-blackhole runs (analysis,
// predictions, verdict) on every core, one seed each.
func BenchmarkRunsBlackhole(b *testing.B) {
	sc := builtin(b, "partition-blackhole")
	var seed atomic.Int64
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s := sc
			s.Seed = seed.Add(1)
			if _, err := virtual.Run(s, virtual.Options{}); err != nil {
				b.Error(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
}

// Benchmark10kBlackhole: the target, 10,000 seeded runs of
// partition-blackhole on all cores; reports the wall time of the 10,000.
func Benchmark10kBlackhole(b *testing.B) {
	sc := builtin(b, "partition-blackhole")
	for b.Loop() {
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		var overlaps atomic.Int64
		for range runtime.GOMAXPROCS(0) {
			wg.Go(func() {
				for {
					i := next.Add(1)
					if i > 10000 {
						return
					}
					s := sc
					s.Seed = i
					res, err := virtual.Run(s, virtual.Options{})
					if err != nil {
						b.Error(err)
						return
					}
					if res.Analysis.Summary.Overlaps > 0 {
						overlaps.Add(1)
					}
				}
			})
		}
		wg.Wait()
		b.ReportMetric(time.Since(start).Seconds(), "s/10k-runs")
		b.ReportMetric(float64(overlaps.Load()), "runs-with-overlap")
	}
}
