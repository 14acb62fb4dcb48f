package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"encoding/json"
	"strings"
	"testing"
	"time"
)

// lateVerdicts analyzes tl with the spec's timings and no faults, and
// returns each expectation's check by metric.
func lateVerdicts(t *testing.T, tl model.Timeline, expect ...model.Expectation) (analysis.Analysis, map[string]model.Check) {
	t.Helper()
	sc := model.Scenario{Params: specTimings, Expect: expect}
	a, ev := evaluateOn(sc, tl)
	out := map[string]model.Check{}
	for _, c := range ev.Checks {
		out[string(c.Metric)] = c
	}
	return a, out
}

func claimOf(t *testing.T, a analysis.Analysis, name string) analysis.Claim {
	t.Helper()
	for _, c := range a.Claims {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no claim %s in %+v", name, a.Claims)
	return analysis.Claim{}
}

// The hole the measured sweep alone left: a's demotion is stamped at 10 s
// (exact), b's promotion at 10.05 s but read 0.2 s late, so b may have
// promoted at 9.85 s, 150 ms before a stepped down. The measured timeline
// has no overlap; a max_overlap of 0 and "no overlap window" had passed.
// Neither is known: the overlap may have been 0 to 150 ms, 0 or 1 window.
func TestLatePromotionMayHideAnOverlap(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").lose(10, 0, "a").
		add(model.Event{At: atSec(10.05), Kind: model.LeaderGained, Instance: 1, ID: "b", Late: 200 * time.Millisecond}).end(30)
	a, c := lateVerdicts(t, tl,
		model.Expectation{Metric: "max_overlap", Max: "0s"},
		model.Expectation{Metric: "total_overlap", Max: "100ms"},
		model.Expectation{Metric: "overlap_windows", Max: "0"},
		model.Expectation{Metric: "max_gap", Max: "60ms"}, // the measured 50 ms gap, at most
	)
	if a.Summary.Overlaps != 0 || a.Summary.Gaps != 1 {
		t.Fatalf("measured %d overlaps, %d gaps; want the stamps' 0 and 1", a.Summary.Overlaps, a.Summary.Gaps)
	}
	for _, m := range []string{"max_overlap", "total_overlap", "overlap_windows"} {
		if c[m].Verdict != model.Unknown {
			t.Errorf("%s: %s (%s); want unknown: b may have promoted 150 ms before a stepped down", m, c[m].Verdict, c[m].Detail)
		}
	}
	if !strings.Contains(c["max_overlap"].Detail, "0s to 150ms") {
		t.Errorf("max_overlap's detail %q does not give the range 0s to 150ms", c["max_overlap"].Detail)
	}
	if g := c["max_gap"]; g.Verdict != model.Pass {
		t.Errorf("max_gap 50 ms (0 to 50 ms) against 60 ms: %s (%s); want pass", g.Verdict, g.Detail)
	}
	if a.LateRange == nil {
		t.Fatal("no late range on a timeline with Late")
	}
	if r := a.LateRange.MaxOverlap; r.Least != 0 || r.Most != 150*time.Millisecond {
		t.Errorf("max overlap range %+v, want 0 to 150ms", r)
	}
	if r := a.LateRange.Overlaps; r.Least != 0 || r.Most != 1 {
		t.Errorf("overlap count range %+v, want 0 to 1", r)
	}
	// Away from any fault, a possible 150 ms overlap may break "no overlap
	// without a fault" (over its 50 ms slack): the claim is not known held.
	if cl := claimOf(t, a, analysis.ClaimNoFaultlessSplit); cl.Verdict != analysis.ClaimUnknown {
		t.Errorf("no-faultless-split %q (%s); want unknown", cl.Verdict, cl.Detail)
	}
	// Read 40 ms late, b promoted at 10.01 s at the earliest: no overlap
	// for certain, and every check passes.
	tl[2].Late = 40 * time.Millisecond
	a, c = lateVerdicts(t, tl, model.Expectation{Metric: "max_overlap", Max: "0s"}, model.Expectation{Metric: "overlap_windows", Max: "0"})
	for _, m := range []string{"max_overlap", "overlap_windows"} {
		if c[m].Verdict != model.Pass {
			t.Errorf("read 40 ms late: %s %s (%s); want pass", m, c[m].Verdict, c[m].Detail)
		}
	}
	if cl := claimOf(t, a, analysis.ClaimNoFaultlessSplit); cl.Verdict != analysis.Held {
		t.Errorf("read 40 ms late: no-faultless-split %q; want held", cl.Verdict)
	}
}

// A demotion read late may hide a gap: b promoted at 10 s (exact), a's
// demotion is stamped at 10.05 s but read 0.2 s late, so a may have
// stepped down at 9.85 s, a 150 ms gap the stamps show as a 50 ms overlap.
func TestLateDemotionMayHideAGap(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").gain(10, 1, "b").
		add(model.Event{At: atSec(10.05), Kind: model.LeaderLost, Instance: 0, ID: "a", Late: 200 * time.Millisecond}).end(30)
	a, c := lateVerdicts(t, tl,
		model.Expectation{Metric: "max_gap", Max: "100ms"},
		model.Expectation{Metric: "gaps", Max: "0"},
		model.Expectation{Metric: "max_overlap", Max: "60ms"},
	)
	if a.Summary.Gaps != 0 || a.Summary.Overlaps != 1 {
		t.Fatalf("measured %d gaps, %d overlaps; want the stamps' 0 and 1", a.Summary.Gaps, a.Summary.Overlaps)
	}
	for _, m := range []string{"max_gap", "gaps"} {
		if c[m].Verdict != model.Unknown {
			t.Errorf("%s: %s (%s); want unknown: a may have stepped down 150 ms before b promoted", m, c[m].Verdict, c[m].Detail)
		}
	}
	if o := c["max_overlap"]; o.Verdict != model.Pass {
		t.Errorf("max_overlap 50 ms (0 to 50 ms) against 60 ms: %s; want pass", o.Verdict)
	}
	if r := a.LateRange.MaxGap; r.Least != 0 || r.Most != 150*time.Millisecond {
		t.Errorf("max gap range %+v, want 0 to 150ms", r)
	}
	if r := a.LateRange.Gaps; r.Least != 0 || r.Most != 1 {
		t.Errorf("gap count range %+v, want 0 to 1", r)
	}
	// A min is judged the other way round: a gap of at least 100 ms is
	// possible, not certain.
	_, c = lateVerdicts(t, tl, model.Expectation{Metric: "max_gap", Min: "100ms"}, model.Expectation{Metric: "gaps", Min: "1"})
	for _, m := range []string{"max_gap", "gaps"} {
		if c[m].Verdict != model.Unknown {
			t.Errorf("min: %s %s (%s); want unknown (was fail)", m, c[m].Verdict, c[m].Detail)
		}
	}
}

// Counts are judged over every timing: two overlap windows 0.1 s apart, the
// second opened by a promotion read 0.2 s late, may have been one; two far
// apart are two for certain. A max the least possible count is over fails.
func TestLateCounts(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").gain(5, 1, "b").lose(6, 1, "b").
		add(model.Event{At: atSec(6.1), Kind: model.LeaderGained, Instance: 2, ID: "c", Late: 200 * time.Millisecond}).lose(7, 2, "c").
		gain(20, 1, "b").lose(21, 1, "b").end(30)
	a, c := lateVerdicts(t, tl,
		model.Expectation{Metric: "overlap_windows", Max: "2"},
		model.Expectation{Metric: "leader_changes", Min: "4", Max: "4"},
	)
	if a.Summary.Overlaps != 3 {
		t.Fatalf("measured %d overlaps, want 3", a.Summary.Overlaps)
	}
	if r := a.LateRange.Overlaps; r.Least != 2 || r.Most != 3 {
		t.Errorf("overlap count range %+v, want 2 to 3", r)
	}
	if o := c["overlap_windows"]; o.Verdict != model.Unknown {
		t.Errorf("3 overlap windows (2 to 3) against max 2: %s (%s); want unknown (was fail)", o.Verdict, o.Detail)
	}
	if l := c["leader_changes"]; l.Verdict != model.Pass {
		t.Errorf("leader_changes %s: promotions are counted, not timed", l.Verdict)
	}
	for _, x := range []struct {
		max, min string
		want     model.Verdict
	}{
		{"1", "", model.Fail}, // at least 2 however the promotion came
		{"3", "", model.Pass},
		{"", "2", model.Pass},
		{"", "3", model.Unknown},
		{"", "4", model.Fail},
		{"3", "3", model.Unknown},
	} {
		_, c := lateVerdicts(t, tl, model.Expectation{Metric: "overlap_windows", Max: x.max, Min: x.min})
		if o := c["overlap_windows"]; o.Verdict != x.want {
			t.Errorf("overlap_windows 2 to 3 against max %q min %q: %s (%s); want %s", x.max, x.min, o.Verdict, o.Detail, x.want)
		}
	}
}

// A chore is timed by its line too: b's chore stamped 1.05 s after a's
// (the chore interval is 1 s) but read 0.1 s late may have run 0.95 s
// after it, a duplicate the stamps do not show.
func TestLateChores(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").chore(5, 0, "a", "scheduler").lose(5.5, 0, "a").gain(5.5, 1, "b").
		add(model.Event{At: atSec(6.05), Kind: model.ChoreRan, Instance: 1, ID: "b", Chore: "scheduler", Late: 100 * time.Millisecond}).end(30)
	a, c := lateVerdicts(t, tl, model.Expectation{Metric: "duplicate_chores", Max: "0"})
	if a.Summary.DuplicateChores != 0 {
		t.Fatalf("measured %d duplicate chores, want 0", a.Summary.DuplicateChores)
	}
	if d := c["duplicate_chores"]; d.Verdict != model.Unknown {
		t.Errorf("duplicate_chores 0 (0 to 1) against 0: %s (%s); want unknown", d.Verdict, d.Detail)
	}
	tl[4].Late = 40 * time.Millisecond
	_, c = lateVerdicts(t, tl, model.Expectation{Metric: "duplicate_chores", Max: "0"})
	if d := c["duplicate_chores"]; d.Verdict != model.Pass {
		t.Errorf("read 40 ms late, 1.01 s apart at the least: duplicate_chores %s (%s); want pass", d.Verdict, d.Detail)
	}
}

// A timeline without Late is judged as before, on its stamps alone, and its
// analysis has no late range (result.json is unchanged); one whose lines
// were all read a millisecond late, far from every limit, passes as well.
func TestNoLateUntouched(t *testing.T) {
	build := func(late time.Duration) model.Timeline {
		var s analysisScript
		for _, e := range []model.Event{
			{At: 0, Kind: model.LeaderGained, Instance: 0, ID: "a"},
			{At: atSec(10), Kind: model.LeaderLost, Instance: 0, ID: "a"},
			{At: atSec(10.05), Kind: model.LeaderGained, Instance: 1, ID: "b"},
			{At: atSec(12), Kind: model.ChoreRan, Instance: 1, ID: "b", Chore: "scheduler"},
		} {
			e.Late = late
			s.add(e)
		}
		return s.end(30)
	}
	expect := []model.Expectation{
		{Metric: "max_overlap", Max: "0s"},
		{Metric: "overlap_windows", Max: "0"},
		{Metric: "max_gap", Max: "60ms", Min: "40ms"},
		{Metric: "gaps", Min: "1", Max: "1"},
		{Metric: "duplicate_chores", Max: "0"},
	}
	a, c := lateVerdicts(t, build(0), expect...)
	if a.LateRange != nil {
		t.Errorf("late range %+v on a timeline without Late", a.LateRange)
	}
	js, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), `"late_range"`) || strings.Contains(string(js), `"longer"`) || strings.Contains(string(js), `"shorter"`) {
		t.Errorf("the analysis of a timeline without Late has lateness fields: %s", js)
	}
	for _, e := range expect {
		if c[string(e.Metric)].Verdict != model.Pass {
			t.Errorf("no Late: %s %s (%s); want pass", e.Metric, c[string(e.Metric)].Verdict, c[string(e.Metric)].Detail)
		}
	}
	a, c = lateVerdicts(t, build(time.Millisecond), expect...)
	if a.LateRange == nil {
		t.Fatal("no late range on a timeline with Late")
	}
	for _, e := range expect {
		if c[string(e.Metric)].Verdict != model.Pass {
			t.Errorf("1 ms late: %s %s (%s); want pass", e.Metric, c[string(e.Metric)].Verdict, c[string(e.Metric)].Detail)
		}
	}
}

// A chore's line read late says its writes landed earlier: a's chore
// stamped 30 ms after its key passed to b is stale on its stamp, but read
// 50 ms late it may have landed while the key was still a's.
func TestLateStaleChore(t *testing.T) {
	tl := new(analysisScript).holder(0, "a", 0).gain(0, 0, "a").holder(10, "b", 0).gain(10, 1, "b").
		add(model.Event{At: atSec(10.03), Kind: model.ChoreRan, Instance: 0, ID: "a", Chore: "scheduler", Late: 50 * time.Millisecond}).
		lose(10.5, 0, "a").end(30)
	a, c := lateVerdicts(t, tl, model.Expectation{Metric: "stale_chores", Max: "0"})
	if a.Summary.StaleChores != 1 {
		t.Fatalf("measured %d stale chores, want 1", a.Summary.StaleChores)
	}
	if r := a.LateRange.StaleChores; r.Least != 0 || r.Most != 1 {
		t.Errorf("stale chore range %+v, want 0 to 1", r)
	}
	if s := c["stale_chores"]; s.Verdict != model.Unknown {
		t.Errorf("stale_chores 1 (0 to 1) against 0: %s (%s); want unknown (was fail)", s.Verdict, s.Detail)
	}
	tl[4].Late = 5 * time.Millisecond // landed 10.025 s at the earliest: stale however it came
	_, c = lateVerdicts(t, tl, model.Expectation{Metric: "stale_chores", Max: "0"})
	if s := c["stale_chores"]; s.Verdict != model.Fail {
		t.Errorf("read 5 ms late: stale_chores %s (%s); want fail", s.Verdict, s.Detail)
	}
}

// A fault's failover is timed only where the fault did the same on every
// timing: b's demotion, stamped 50 ms after a partition cut it off but
// read 0.2 s late, may have come before it, when the fault hit no leader
// and there was no failover to time. Measured (2 s against 20 s) it
// passed; it is unknown.
func TestLateFailoverStructure(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").lose(5, 0, "a").gain(5, 1, "b").
		fault(10, 0, "partition", "blackhole", 1).
		add(model.Event{At: atSec(10.05), Kind: model.LeaderLost, Instance: 1, ID: "b", Late: 200 * time.Millisecond}).
		gain(12, 2, "c").heal(15, 0).end(40)
	sc := crashScenario
	sc.Expect = []model.Expectation{{Metric: "failover", Max: "20s"}}
	a, ev := evaluateOn(sc, tl)
	if len(a.Faults) != 1 || a.Faults[0].Failover == nil || *a.Faults[0].Failover != 2*time.Second {
		t.Fatalf("on the stamps the partition demoted b and c took over 2 s after it: %+v", a.Faults)
	}
	if f := checkOf(t, ev, "failover"); f.Verdict != model.Unknown {
		t.Errorf("failover: %s (%s); want unknown: b may have stepped down before the fault", f.Verdict, f.Detail)
	}
	if a.LateRange.Failover != nil {
		t.Errorf("failover range %+v: some timing has no failover to time", a.LateRange.Failover)
	}
	// Read 40 ms late, b stepped down after the fault however it came.
	tl[4].Late = 40 * time.Millisecond
	a, ev = evaluateOn(sc, tl)
	if f := checkOf(t, ev, "failover"); f.Verdict != model.Pass {
		t.Errorf("read 40 ms late: failover %s (%s); want pass", f.Verdict, f.Detail)
	}
	if r := a.LateRange.Failover; r == nil || r.Least != 2*time.Second || r.Most != 2*time.Second {
		t.Errorf("read 40 ms late: failover range %+v, want 2s", r)
	}
}

// A demotion line read after the harness recorded its agent's crash may
// have been written before it: a crashed at 10 s (exact), its demotion line
// read at 10.05 s, 0.2 s late, says it may have stepped down at 9.85 s,
// before b promoted at 10 s: a 150 ms gap the crash's stamp alone hides.
func TestLateLineAfterACrash(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").crash(10, 0, "a").gain(10, 1, "b").
		add(model.Event{At: atSec(10.05), Kind: model.LeaderLost, Instance: 0, ID: "a", Late: 200 * time.Millisecond}).end(30)
	a, c := lateVerdicts(t, tl, model.Expectation{Metric: "max_gap", Max: "100ms"})
	if a.Summary.Gaps != 0 || a.Beliefs[0].Shorter != 150*time.Millisecond {
		t.Fatalf("gaps %d, a's belief %+v: want none, and a's end up to 150 ms early", a.Summary.Gaps, a.Beliefs[0])
	}
	if g := c["max_gap"]; g.Verdict != model.Unknown {
		t.Errorf("max_gap: %s (%s); want unknown", g.Verdict, g.Detail)
	}
}

// A promotion line read after the harness recorded its agent's crash (the
// harness records the crash, then kills; lines already buffered are read
// after): a's promotion is stamped 10.05 s, read up to 0.2 s late, its
// crash recorded at 10 s, while b leads from 0 to 20 s. a led at most from
// 9.85 s to its crash, an overlap of 0 to 150 ms, never the 9.95 s to the
// run's end its stamp would give. A promotion whose earliest time is after
// the crash is no leadership at all.
func TestLatePromotionAfterCrashEndsAtTheCrash(t *testing.T) {
	tl := new(analysisScript).gain(0, 1, "b").
		crash(10, 0, "a").
		add(model.Event{At: atSec(10.05), Kind: model.LeaderGained, Instance: 0, ID: "a", Late: 200 * time.Millisecond}).
		lose(20, 1, "b").end(30)
	a, c := lateVerdicts(t, tl, model.Expectation{Metric: "max_overlap", Max: "1s"}, model.Expectation{Metric: "overlap_windows", Max: "1"})
	for _, m := range []string{"max_overlap", "overlap_windows"} {
		if c[m].Verdict != model.Pass {
			t.Errorf("%s: %s (%s); want pass: a led at most 150 ms, up to its crash", m, c[m].Verdict, c[m].Detail)
		}
	}
	if r := a.LateRange.MaxOverlap; r.Least != 0 || r.Most != 150*time.Millisecond {
		t.Errorf("max overlap range %+v, want 0 to 150ms", r)
	}
	tl = new(analysisScript).gain(0, 1, "b").
		crash(10, 0, "a").
		add(model.Event{At: atSec(10.3), Kind: model.LeaderGained, Instance: 0, ID: "a", Late: 200 * time.Millisecond}).
		lose(20, 1, "b").end(30)
	a, _ = lateVerdicts(t, tl)
	for _, b := range a.Beliefs {
		if b.ID == "a" {
			t.Errorf("belief %+v from a promotion at 10.1 s at the earliest, after a's crash at 10 s", b)
		}
	}
}

// An old incarnation's demotion read late, after the new incarnation (a
// restart, a new id) promoted: it still says the old belief may have ended
// earlier than the crash that ended it on the stamps.
func TestLateOldDemotionAfterRestartCounts(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").
		crash(10, 0, "a").
		start(10.1, 0, "a2").gain(10.2, 0, "a2").
		add(model.Event{At: atSec(10.3), Kind: model.LeaderLost, Instance: 0, ID: "a", Late: 500 * time.Millisecond}).
		lose(20, 0, "a2").end(30)
	a, _ := lateVerdicts(t, tl)
	if len(a.Beliefs) == 0 || a.Beliefs[0].ID != "a" || a.Beliefs[0].Shorter != 200*time.Millisecond {
		t.Fatalf("beliefs %+v; want a's first, up to 200 ms shorter (its demotion 9.8 s at the earliest)", a.Beliefs)
	}
}
