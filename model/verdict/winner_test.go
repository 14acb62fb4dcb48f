package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/bounds"

	"strings"
	"testing"
	"time"
)

// A follower slowed by latency (or a slow clock) that wins while it lasts
// is a leader hit by it from that win on (slowWinner): after a leader's
// crash, one whose replies were 4.9 s late believed 4.9 s after its key was
// set and renewed too late, an overlap of 3.3 s and stale leadership of
// 7.3 s, where the crash alone predicts 0.
func TestSlowFollowerThatWinsIsALeadersFault(t *testing.T) {
	ms := time.Millisecond
	sc := model.Scenario{Params: specTimings, Instances: 3, Faults: []model.Fault{
		{At: 5022500 * time.Microsecond, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}},
		{At: 11 * time.Second, For: 20 * time.Second, Kind: model.FaultLatency, Latency: 4900 * ms, Direction: model.DirectionReplies, Target: model.Target{Indexes: []int{1}}},
	}, Expect: []model.Expectation{{Metric: "max_overlap", Max: "predicted"}, {Metric: "stale_leadership", Max: "predicted"}, {Metric: "max_gap", Max: "predicted"}}}
	tl := new(analysisScript).gain(0, 0, "a").fault(5.0225, 0, "crash", "", 0).crash(5.0225, 0, "a").
		fault(11, 1, "latency", "", 1).gain(17.9179, 1, "b").holder(18.018, "", 0).
		gain(22.0218, 2, "c").holder(22.0218, "c", 0).lose(25.32, 1, "b").heal(31, 1).end(40)
	a, ev := evaluateOn(sc, tl)
	fs := bounds.BoundFaults(a)
	if len(fs) != 2 || fs[1].Applied != 17917900*time.Microsecond || !fs[1].LeaderHit {
		t.Fatalf("bound faults %+v: want the crash and the latency from the slow follower's win at 17.9179s", fs)
	}
	for _, m := range []string{"max_overlap", "stale_leadership", "max_gap"} {
		c := checkOf(t, ev, model.Metric(m))
		if c.Verdict != model.Pass || !strings.Contains(c.Detail, model.ModeLatency) {
			t.Errorf("%s: %s (%s); want a pass with the latency mode's bound", m, c, c.Detail)
		}
	}
	if c := checkOf(t, ev, "max_overlap"); c.Max < 3298*ms {
		t.Errorf("overlap bound %v, below the 3.298 s the virtual backend measured", c.Max)
	}
}
