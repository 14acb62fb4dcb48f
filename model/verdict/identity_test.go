package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"reflect"
	"strings"
	"testing"
)

// staleCheck evaluates stale_leadership ≤ max on the timeline.
func staleCheck(tl model.Timeline, max string) model.Check {
	a := analysis.Analyze(tl, specTimings)
	sc := model.Scenario{Params: specTimings, Expect: []model.Expectation{{Metric: "stale_leadership", Max: max}}}
	return Evaluate(sc, a, nil).Checks[0]
}

// Two live instances announce one value (a shared id). The first leads;
// its key expires unrenewed for half a second (it believes on: stale,
// whatever the ids), then the twin takes the key with the same value and
// both believe to the end. Whose lease the key held is unknown: neither
// stale nor its own, so stale_leadership is unknown below the measured
// stale and fails above it. The overlap is measured all the same.
func TestSharedIDIsNamed(t *testing.T) {
	tl := new(analysisScript).start(0, 0, "s").start(0, 1, "s").
		gain(1, 0, "s").holder(1, "s", 0).holder(3.5, "", 0).
		holder(4, "s", 0).gain(4, 1, "s").end(10)
	a := analysis.Analyze(tl, specTimings)
	want := []analysis.SharedID{{Value: "s", Instances: []int{0, 1}, Live: []model.Window{wantWindow(0, 10, true)},
		Held: atSec(8.5), Overlap: atSec(6), Unjudged: atSec(2.5 + 6 + 6)}}
	if !reflect.DeepEqual(a.Identity.Shared, want) {
		t.Errorf("shared ids\n got %+v\nwant %+v", a.Identity.Shared, want)
	}
	if wantStale := []analysis.Stale{{Member: model.Member{Instance: 0, ID: "s"}, Window: wantWindow(3.5, 4, false), Holder: ""}}; !reflect.DeepEqual(a.Redis.Stale, wantStale) {
		t.Errorf("stale\n got %+v\nwant %+v", a.Redis.Stale, wantStale)
	}
	for _, h := range a.Redis.Holders {
		if h.Holder == "s" && (h.Instance != -1 || !h.Shared) {
			t.Errorf("holding %+v of the shared value attributed to one instance", h)
		}
	}
	if a.Summary.Overlaps != 1 || a.Summary.MaxOverlap != atSec(6) {
		t.Errorf("overlaps %d (longest %v), want 1 of 6s", a.Summary.Overlaps, a.Summary.MaxOverlap)
	}
	if c := staleCheck(tl, "1s"); c.Verdict != model.Unknown || !strings.Contains(c.Detail, `instances 0 and 1 announced one value, "s"`) {
		t.Errorf("stale ≤ 1s: %s (%s), want unknown naming the shared id", c.Verdict, c.Detail)
	}
	if c := staleCheck(tl, "100ms"); c.Verdict != model.Fail {
		t.Errorf("stale ≤ 100ms with 500ms measured: %s (%s), want fail", c.Verdict, c.Detail)
	}
	f := a.Identity.Findings()
	if len(f) != 1 || !strings.Contains(f[0], `instances 0 and 1 announced one lease value, "s"`) || !strings.Contains(f[0], "6s") {
		t.Errorf("findings %q, want one naming instances 0 and 1, the value and the 6s overlap", f)
	}
}

// The key holds a fresh random value per acquire, not the id the agent
// announced (a lock library's default): whose lease it is cannot be told,
// so a healthy leader is not stale, the check is unknown, and the value is
// named. A stretch with no key under a believer is stale all the same.
func TestUnannouncedValueIsNamed(t *testing.T) {
	tl := new(analysisScript).start(0, 0, "a").start(0, 1, "b").
		gain(1, 0, "a").holder(1, "9Kwn6V", 0).holder(5, "", 0).lose(5.5, 0, "a").
		gain(6, 1, "b").holder(6, "Xq3pZ0", 0).end(10)
	a := analysis.Analyze(tl, specTimings)
	if wantStale := []analysis.Stale{{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(5, 5.5, false), Holder: ""}}; !reflect.DeepEqual(a.Redis.Stale, wantStale) {
		t.Errorf("stale\n got %+v\nwant %+v", a.Redis.Stale, wantStale)
	}
	want := []analysis.UnannouncedValue{{Value: "9Kwn6V", Held: atSec(4), Unjudged: atSec(4)}, {Value: "Xq3pZ0", Held: atSec(4), Unjudged: atSec(4)}}
	if !reflect.DeepEqual(a.Identity.Unannounced, want) {
		t.Errorf("unannounced\n got %+v\nwant %+v", a.Identity.Unannounced, want)
	}
	if len(a.Redis.Phantom) != 0 {
		t.Errorf("phantom %+v: the values may be the believers' own", a.Redis.Phantom)
	}
	if c := staleCheck(tl, "1s"); c.Verdict != model.Unknown || !strings.Contains(c.Detail, "no agent announced") {
		t.Errorf("stale ≤ 1s: %s (%s), want unknown naming the unannounced values", c.Verdict, c.Detail)
	}
	f := a.Identity.Findings()
	if len(f) != 1 || !strings.Contains(f[0], "the key held values no agent announced") || !strings.Contains(f[0], "hello id must be the value it writes") {
		t.Errorf("findings %q", f)
	}
}

// Ids stable across restarts (a pod name): each restart is a new
// incarnation of its index, never a twin; the key's holder is attributed
// and judged as with fresh ids.
func TestStableIDsAreNotShared(t *testing.T) {
	tl := new(analysisScript).start(0, 0, "pod-0").start(0, 1, "pod-1").
		gain(1, 0, "pod-0").holder(1, "pod-0", 0).crash(3, 0, "pod-0").holder(4, "", 0).
		start(4, 0, "pod-0").gain(4.5, 1, "pod-1").holder(4.5, "pod-1", 0).crash(7, 1, "pod-1").holder(8, "", 0).
		gain(8.5, 0, "pod-0").holder(8.5, "pod-0", 0).end(10)
	a := analysis.Analyze(tl, specTimings)
	if !reflect.DeepEqual(a.Identity, analysis.Identity{}) {
		t.Errorf("identity findings %+v, want none", a.Identity)
	}
	if len(a.Redis.Stale) != 0 || len(a.Redis.Unknown) != 0 {
		t.Errorf("stale %+v, unknown %+v, want none", a.Redis.Stale, a.Redis.Unknown)
	}
	if n := len(a.Beliefs); n != 3 || a.Beliefs[2].Member != (model.Member{Instance: 0, ID: "pod-0"}) || !a.Beliefs[2].Open {
		t.Errorf("beliefs %+v, want the restarted pod-0 leading to the end", a.Beliefs)
	}
	for _, g := range a.Gaps {
		if g.Open {
			t.Errorf("gap %+v open", g)
		}
	}
	if c := staleCheck(tl, "1s"); c.Verdict != model.Pass {
		t.Errorf("stale ≤ 1s: %s (%s), want pass", c.Verdict, c.Detail)
	}
}

// A restart under the same id that leads again is a new incarnation
// taking over: a handover, as with a fresh id; regaining leadership
// without a restart is not.
func TestStableIDRestartIsAHandover(t *testing.T) {
	tl := new(analysisScript).start(0, 0, "pod-0").gain(1, 0, "pod-0").lose(2, 0, "pod-0").gain(2.5, 0, "pod-0").
		crash(3, 0, "pod-0").start(4, 0, "pod-0").gain(5, 0, "pod-0").end(8)
	want := []analysis.Handover{{At: atSec(5), From: model.Member{Instance: 0, ID: "pod-0"}, To: model.Member{Instance: 0, ID: "pod-0"}}}
	if a := analysis.Analyze(tl, specTimings); !reflect.DeepEqual(a.Handovers, want) {
		t.Errorf("handovers\n got %+v\nwant %+v", a.Handovers, want)
	}
}

// A reclaim is credited to the completion of the incarnation that
// reclaimed, not to a restart under the same id: the restarted process
// never held the entry.
func TestReclaimCreditedByIncarnation(t *testing.T) {
	ev := func(at float64, k model.Kind, i int, id string) model.Event {
		return model.Event{At: atSec(at), Kind: k, Instance: i, ID: id, Task: "t"}
	}
	tl := new(analysisScript).start(0, 0, "pod-0").start(0, 1, "pod-1").
		add(ev(0.5, model.TaskDispatched, 0, "pod-0")).
		add(ev(1, model.TaskCompleted, 1, "pod-1")).
		add(ev(2, model.TaskReclaimed, 0, "pod-0")).crash(3, 0, "pod-0").
		start(4, 0, "pod-0").add(ev(5, model.TaskCompleted, 0, "pod-0")).end(8)
	a := analysis.Analyze(tl, specTimings)
	if len(a.RepeatedTasks) != 1 || a.RepeatedTasks[0].Reclaims != 0 {
		t.Errorf("repeated %+v, want t completed twice with no reclaim credited", a.RepeatedTasks)
	}
}
