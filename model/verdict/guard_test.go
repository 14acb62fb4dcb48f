package verdict

import (
	"github.com/leaselab/leaselab/model"

	"strings"
	"testing"
	"time"
)

// A fixed limit describes the spec's elector; a declared client that steps
// down at its lease's validity misses it by design (redsync: redis-pause's
// "max_gap ≤ 100ms" measured 2.136 s, slow-redis's stale minimum 0 s).
// Such a miss is unknown, a predicted limit is judged as ever, and the
// same miss by a client without the guard still fails.
func TestFixedLimitsWrittenForSpecClient(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").fault(5, 0, "pause", "", 0).lose(5, 0, "a").heal(9, 0).gain(12, 1, "b").end(30)
	sc := model.Scenario{Params: specTimings, Faults: []model.Fault{{At: 5 * time.Second, For: 4 * time.Second, Kind: model.FaultPause}},
		Expect: []model.Expectation{{Metric: "max_gap", Max: "100ms"}, {Metric: "gaps", Max: "0"}, {Metric: "max_gap", Max: "1s"}}}
	_, plain := evaluateOn(sc, tl)
	for i, c := range plain.Checks {
		if c.Verdict != model.Fail {
			t.Fatalf("check %d (%s %s) without a guard: %s, want fail", i, c.Metric, c.Limit, c.Verdict)
		}
	}
	sc.Params.Client.ValidityMargin = 50 * time.Millisecond
	_, ev := evaluateOn(sc, tl)
	for i, c := range ev.Checks {
		if c.Verdict != model.Unknown || !strings.Contains(c.Detail, "steps down at its lease's validity") {
			t.Errorf("check %d (%s %s) with a declared guard: %s (%s), want unknown naming the guard", i, c.Metric, c.Limit, c.Verdict, c.Detail)
		}
	}
	// A guard only shortens belief: a broken maximum on overlap is split
	// brain, whatever the client, and so is a gap still open at the end.
	over := new(analysisScript).gain(0, 0, "a").fault(5, 0, "pause", "", 0).gain(8, 1, "b").lose(13, 0, "a").heal(9, 0).end(30)
	sc.Expect = []model.Expectation{{Metric: "overlap_windows", Max: "0"}, {Metric: "max_overlap", Max: "100ms"}, {Metric: "total_overlap", Max: "100ms"}}
	if _, ev := evaluateOn(sc, over); ev.Verdict != model.Fail {
		t.Errorf("overlap with a declared guard: %s (%v), want fail", ev.Verdict, ev.Reasons)
	}
	open := new(analysisScript).gain(0, 0, "a").fault(5, 0, "pause", "", 0).lose(5, 0, "a").heal(9, 0).end(30)
	sc.Expect = []model.Expectation{{Metric: "max_gap", Max: "100ms"}}
	if _, ev := evaluateOn(sc, open); ev.Checks[0].Verdict != model.Fail {
		t.Errorf("a gap open at the end with a declared guard: %s (%s), want fail", ev.Checks[0].Verdict, ev.Checks[0].Detail)
	}
	// A fixed limit it keeps still passes.
	sc.Expect = []model.Expectation{{Metric: "max_gap", Max: "10s"}}
	if _, ev := evaluateOn(sc, tl); ev.Checks[0].Verdict != model.Pass {
		t.Errorf("a kept fixed limit with a declared guard: %s, want pass", ev.Checks[0].Verdict)
	}
}
