package virtual_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
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

// BenchmarkLeaderCrashModes: whole leader-crash runs on one core, in
// elector mode and in runner mode (20 tasks/s and the chores around the
// same machines), side by side: what the runner's model costs. Besides
// ns/op (wall time, which a loaded machine inflates) it reports the
// process's CPU time per run (cpu-ms/run) and what 10,000 runs take at
// that rate (s/10k-runs): the target is 10,000 runner-mode runs
// well under a minute on one core.
func BenchmarkLeaderCrashModes(b *testing.B) {
	e, _ := scenarios.Lookup("leader-crash")
	for _, mode := range []model.Mode{model.ModeElector, model.ModeRunner} {
		sc := e.Scenario
		if mode == model.ModeElector {
			sc = sc.AsElector()
		}
		b.Run(string(mode), func(b *testing.B) {
			var seed int64
			var st virtual.Stats
			start, cpu0 := time.Now(), processCPU(b)
			for b.Loop() {
				seed++
				s := sc
				s.Seed = seed
				var err error
				if _, st, err = virtual.RunStats(s, virtual.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			cpu := processCPU(b) - cpu0
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/run")
			b.ReportMetric(cpu.Seconds()/float64(b.N)*10000, "s/10k-runs")
			b.ReportMetric(float64(st.Events), "events/run")
		})
	}
}

// processCPU returns the CPU time (user + system) this process used so
// far: unlike wall time, other processes on the machine do not add to it.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
