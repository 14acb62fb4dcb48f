package process_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/process"
)

// BenchmarkHundredAgents runs 100 chaos agents on one lease for a few
// seconds and reports how long they took to start (the last
// InstanceStarted on the run's clock: every agent launched and said hello)
// and the stamping lateness of their lines (p50, p99, max). From 4 s to 7 s
// every agent is cut off (refuse), so each writes an error line per
// attempt: ~600 lines from 100 processes at once.
//
//	go test -run '^$' -bench HundredAgents -benchtime 1x ./sim/process/
func BenchmarkHundredAgents(b *testing.B) {
	argv := chaosAgentB(b)
	sc := model.Scenario{Name: "hundred", Instances: 100, Duration: 7 * time.Second, Recovery: time.Second,
		Params: model.Params{TTL: time.Second, Wait: 500 * time.Millisecond, JitterMS: 5, Client: model.ClientParams{MaxRetries: -1}},
		Faults: []model.Fault{{At: 4 * time.Second, For: 3 * time.Second, Kind: model.FaultPartition, Mode: model.PartitionRefuse, Target: model.Target{Role: "all"}}}}
	for b.Loop() {
		res, err := sim.Run(context.Background(), sc, process.Backend{Agent: argv}, sim.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Errors) > 0 {
			b.Fatalf("errors: %v", res.Errors)
		}
		var started time.Duration
		var late []time.Duration
		for _, e := range res.Timeline {
			if e.Kind == model.InstanceStarted {
				started = max(started, e.At)
			}
			// Lines written after the schedule began: one written between
			// an agent's hello and its start waited for the others' start.
			if e.Instance >= 0 && e.Lateness > 0 && e.Kind != model.DelayedDue && e.At > started {
				late = append(late, e.Lateness)
			}
		}
		slices.Sort(late)
		if len(late) == 0 {
			b.Fatal("no stamped lines")
		}
		q := func(p float64) float64 { return float64(late[int(p*float64(len(late)-1))].Microseconds()) / 1000 }
		b.ReportMetric(res.Setup.Seconds(), "env-setup-s")
		b.ReportMetric(started.Seconds(), "agents-started-s")
		b.ReportMetric(float64(len(late)), "lines")
		b.ReportMetric(q(0.5), "stamp-p50-ms")
		b.ReportMetric(q(0.99), "stamp-p99-ms")
		b.ReportMetric(q(1), "stamp-max-ms")
	}
}
