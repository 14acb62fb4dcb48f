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

// BenchmarkHundredAgentsLeaderCrash runs 100 chaos agents on one lease at
// time scale 1 and crashes the leader 4 s in, and reports the stamping
// lateness of the lines that decide the verdicts: every promotion and
// demotion from the crash on (the gap's end is the next leader's
// promotion line; the crash is the harness's own, exact). Beside it, how
// late the harness's own goroutines woke meanwhile (its wake-up probe,
// analysis.Stall): a line read late while the harness itself stood still
// was late in the harness, not in the pipe or the agent; and how late the
// writing agent's own process woke (its probe's stall lines).
//
//	go test -run '^$' -bench HundredAgentsLeaderCrash -benchtime 1x ./sim/process/
func BenchmarkHundredAgentsLeaderCrash(b *testing.B) {
	argv := chaosAgentB(b)
	sc := model.Scenario{Name: "hundred-crash", Instances: 100, Duration: 8 * time.Second, Recovery: 2 * time.Second,
		Params: model.Params{TTL: time.Second, Wait: 500 * time.Millisecond, JitterMS: 5},
		Faults: []model.Fault{{At: 4 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}}}}
	for b.Loop() {
		res, err := sim.Run(context.Background(), sc, process.Backend{Agent: argv}, sim.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Errors) > 0 {
			b.Fatalf("errors: %v", res.Errors)
		}
		var started, crash time.Duration
		for _, e := range res.Timeline {
			switch e.Kind {
			case model.InstanceStarted:
				started = max(started, e.At)
			case model.FaultApplied:
				crash = e.At
			}
		}
		var deciding []time.Duration
		for _, e := range res.Timeline {
			if (e.Kind == model.LeaderGained || e.Kind == model.LeaderLost) && e.At >= crash {
				deciding = append(deciding, e.Late)
				// The harness's own stall while the line waited to be read,
				// and the writing agent's (its probe's stall lines).
				var stall, own time.Duration
				for _, s := range res.Analysis.Stalls {
					if s.At >= e.At-e.Late && s.At-s.Late <= e.At {
						if s.Instance < 0 {
							stall = max(stall, s.Late)
						} else if s.Instance == e.Instance {
							own = max(own, s.Late)
						}
					}
				}
				b.Logf("%v %s i%d stamped %v late; harness wake-ups meanwhile ≤ %v late, the agent's own ≤ %v", e.At, e.Kind, e.Instance, e.Late, stall, own)
			}
		}
		if len(deciding) == 0 {
			b.Fatal("no promotion or demotion after the crash")
		}
		b.ReportMetric(started.Seconds(), "agents-started-s")
		b.ReportMetric(float64(len(deciding)), "deciding-lines")
		b.ReportMetric(float64(slices.Max(deciding).Microseconds())/1000, "deciding-max-ms")
		b.ReportMetric(float64(res.Analysis.StallLateness(false).Microseconds())/1000, "harness-wakeup-max-ms")
		// The agents' probes: how many stall lines, and the worst.
		var agentStalls int
		for _, s := range res.Analysis.Stalls {
			if s.Agent {
				agentStalls++
			}
		}
		b.ReportMetric(float64(agentStalls), "agent-stalls")
		b.ReportMetric(float64(res.Analysis.StallLateness(true).Microseconds())/1000, "agent-stall-max-ms")
		b.ReportMetric(float64(res.Analysis.Summary.MaxGap.Microseconds())/1000, "gap-ms")
	}
}
