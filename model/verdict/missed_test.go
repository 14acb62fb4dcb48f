package verdict

import (
	"github.com/leaselab/leaselab/model"

	"strings"
	"testing"
	"time"
)

// A partition that hit the leader and caused nothing (its retries outlasted
// a short reset: renew-blip at time scale 0.3) makes the run's passing
// checks unknown, with the reason; one that failed a renewal, or that the
// scenario allows to miss, does not.
func TestMissedFaultIsUnknown(t *testing.T) {
	sc := model.Scenario{Params: specTimings, Faults: []model.Fault{{At: 4 * time.Second, For: 2 * time.Second, Kind: model.FaultPartition, Mode: model.PartitionReset, Target: model.Target{Role: "leader"}}},
		Expect: []model.Expectation{{Metric: "max_gap", Max: "predicted"}, {Metric: "overlap_windows", Max: "0"}}}
	base := func() *analysisScript {
		return new(analysisScript).start(0, 0, "a").start(0, 1, "b").gain(0, 0, "a").holder(0, "a", 0).fault(4, 0, "partition", model.PartitionReset, 0)
	}
	nothing := base().heal(6, 0).end(30)
	_, ev := evaluateOn(sc, nothing)
	if ev.Verdict != model.Unknown || len(ev.Reasons) == 0 || !strings.Contains(ev.Reasons[0], "caused nothing it is about") {
		t.Fatalf("a reset that caused nothing: %s %v, want unknown saying so", ev.Verdict, ev.Reasons)
	}
	for _, c := range ev.Checks {
		if c.Verdict != model.Unknown || !strings.Contains(c.Detail, "caused nothing") {
			t.Errorf("%s: %s (%s), want unknown: it passed only because nothing happened", c.Metric, c.Verdict, c.Detail)
		}
	}

	if strings.Contains(ev.Reasons[0], "loaded") {
		t.Errorf("no stall measured, yet the reason blames load: %s", ev.Reasons[0])
	}
	// A renewal a loaded machine moved may have missed the fault: the
	// reason names the stall.
	loaded := base().add(model.Event{At: atSec(4.5), Kind: model.StallKind, Instance: 0, Lateness: 300 * time.Millisecond}).heal(6, 0).end(30)
	if _, ev := evaluateOn(sc, loaded); len(ev.Reasons) == 0 || !strings.Contains(ev.Reasons[0], "the machine was loaded meanwhile (i0's timer fired 300ms late at 4.5s (the leader: its renewal))") {
		t.Errorf("a reset that caused nothing on a loaded machine: %v; want the stall named", ev.Reasons)
	}

	errored := base().add(model.Event{At: atSec(5), Kind: model.ElectorError, Instance: 0, ID: "a", Err: "connection reset"}).heal(6, 0).end(30)
	if _, ev := evaluateOn(sc, errored); ev.Verdict != model.Pass {
		t.Errorf("a reset that failed a renewal (an error, kept leading after a retry): %s %v, want pass", ev.Verdict, ev.Reasons)
	}
	demoted := base().lose(5, 0, "a").holder(5.001, "", 0).gain(11, 1, "b").holder(11, "b", 0).heal(6, 0).end(30)
	if _, ev := evaluateOn(sc, demoted); ev.Verdict != model.Pass {
		t.Errorf("a reset that demoted the leader: %s %v, want pass", ev.Verdict, ev.Reasons)
	}
	allowed := sc
	allowed.Faults = []model.Fault{sc.Faults[0]}
	allowed.Faults[0].AllowSkipped = true
	if _, ev := evaluateOn(allowed, nothing); ev.Verdict != model.Pass {
		t.Errorf("a reset allowed to miss: %s %v, want pass", ev.Verdict, ev.Reasons)
	}
	// A latency the model expects to do nothing (the latency built-in) is
	// not meant to fail the leader.
	slow := model.Scenario{Params: specTimings, Faults: []model.Fault{{At: 4 * time.Second, For: 10 * time.Second, Kind: model.FaultLatency, Latency: 800 * time.Millisecond, Target: model.Target{Role: "leader"}}},
		Expect: []model.Expectation{{Metric: "overlap_windows", Max: "0"}}}
	quiet := new(analysisScript).start(0, 0, "a").gain(0, 0, "a").holder(0, "a", 0).fault(4, 0, "latency", "", 0).heal(14, 0).end(30)
	if _, ev := evaluateOn(slow, quiet); ev.Verdict != model.Pass {
		t.Errorf("a latency meant to change nothing: %s %v, want pass", ev.Verdict, ev.Reasons)
	}
}
