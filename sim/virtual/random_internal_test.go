package virtual

import (
	"github.com/leaselab/leaselab/model/bounds"

	"encoding/json"
	"flag"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

var (
	randomRuns = flag.Int("bounds.random", 3000, "random schedules TestRandomSchedulesKeepBounds tries")
	randomSeed = flag.Uint64("bounds.seed", 21, "the seed of TestRandomSchedulesKeepBounds's draws")
)

// randomScenario draws timings, client options and one to three faults on
// the leader (some overlapping in time) from r: the adversarial search of
// the bounds, beyond the built-ins' parameters.
func randomScenario(r *rand.Rand, seed int64) model.Scenario {
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.IntN(hi-lo+1)) * time.Millisecond }
	ttl := ms(400, 6000)
	sc := model.Scenario{Name: "random", Seed: seed, Instances: 2 + r.IntN(3), Duration: 30 * time.Second, Recovery: 2*ttl + 14*time.Second,
		Params: model.Params{TTL: ttl, Wait: ms(int(ttl/time.Millisecond)/4, int(ttl/time.Millisecond)*2), JitterMS: r.IntN(int(ttl/time.Millisecond) / 5)}}
	if sc.Params.JitterMS == 0 {
		sc.Params.JitterMS = -1
	}
	c := &sc.Params.Client
	c.ReadTimeout = ms(50, 3*int(ttl/time.Millisecond))
	c.WriteTimeout = c.ReadTimeout
	c.MaxRetries = r.IntN(4)
	if c.MaxRetries == 0 {
		c.MaxRetries = -1
	}
	if r.IntN(3) == 0 {
		sc.Params.Safe = true
	}
	n := 1 + r.IntN(3)
	start := ms(int(ttl/time.Millisecond), 8000)
	for range n {
		f := model.Fault{At: start + ms(0, 4000), For: ms(100, 12000), Target: model.Target{Role: model.RoleLeader}, AllowSkipped: true}
		switch r.IntN(7) {
		case 0, 1:
			f.Kind = model.FaultPartition
			f.Mode = []string{model.PartitionBlackhole, model.PartitionBlackholeReplies, model.PartitionRefuse, model.PartitionReset}[r.IntN(4)]
		case 2, 3:
			f.Kind = model.FaultLatency
			f.Latency = ms(1, 2*int(c.ReadTimeout/time.Millisecond))
			f.Jitter = time.Duration(r.Int64N(int64(f.Latency) + 1)).Truncate(time.Millisecond)
			f.Direction = []string{model.DirectionBoth, model.DirectionRequests, model.DirectionReplies}[r.IntN(3)]
		case 4:
			f.Kind = model.FaultPause
		case 5:
			f.Kind = model.FaultClock
			f.Rate = []float64{0.3, 0.5, 0.8, 0.95, 1.5}[r.IntN(5)]
		case 6:
			f.Kind = model.FaultCrash
			f.Restart = r.IntN(2) == 0
		}
		sc.Faults = append(sc.Faults, f)
	}
	for _, m := range []string{"max_gap", "max_overlap", "stale_leadership", "failover"} {
		sc.Expect = append(sc.Expect, model.Expectation{Metric: model.Metric(m), Max: "predicted"})
	}
	return sc
}

// Random timings and schedules (with faults in force together) never
// measure more than a "predicted" limit, where its preconditions hold.
func TestRandomSchedulesKeepBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(*randomSeed, 21))
	ran, invalid, violations := 0, 0, 0
	for i := range *randomRuns {
		sc := randomScenario(r, int64(i+1))
		if sc.Validate() != nil {
			invalid++
			continue
		}
		res, err := Run(sc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ran++
		for _, ch := range res.Evaluation.Checks {
			if !strings.HasSuffix(ch.Limit, "predicted") || ch.Verdict == model.Unknown || ch.Max == model.Unbounded {
				continue
			}
			if bound := ch.Max - bounds.DefaultSlack; ch.Measured > bound+2*time.Millisecond {
				violations++
				if violations <= 12 {
					b, _ := json.Marshal(sc)
					t.Errorf("%s %v > bound %v (%s)\n%s", ch.Metric, ch.Measured, bound, ch.Detail, b)
				}
			}
		}
	}
	t.Logf("%d random schedules run (%d invalid drawn), %d bounds broken", ran, invalid, violations)
}
