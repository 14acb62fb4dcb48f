package live

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
)

// A run's status line follows its events: the leaders (sorted), the active
// faults, and how far the run is.
func TestRunStatus(t *testing.T) {
	sc := model.Scenario{Name: "leader-crash", Duration: 30 * time.Second}
	r := NewRun(sc)
	if r.Total != sc.Length() || sc.Length() != 43*time.Second {
		t.Fatalf("total %v, want the scenario's length %v (43s)", r.Total, sc.Length())
	}
	if got, want := r.Status(), "leader-crash 0s/43s leader none faults none"; got != want {
		t.Errorf("before any event: %q, want %q", got, want)
	}
	for _, e := range []model.Event{
		{At: time.Second, Kind: model.LeaderGained, Instance: 2},
		{At: 2 * time.Second, Kind: model.LeaderGained, Instance: 0},
		{At: 3 * time.Second, Kind: model.FaultApplied, FaultID: 0, Fault: "partition", Target: []int{2}},
		{At: 4 * time.Second, Kind: model.FaultApplied, FaultID: 1, Fault: "crash", Target: []int{1}},
		{At: 5 * time.Second, Kind: model.FaultHealed, FaultID: 1},
	} {
		r.Observe(e)
	}
	if got, want := r.Status(), "leader-crash 5s/43s leader #0,#2 faults partition [2]"; got != want {
		t.Errorf("status %q, want %q", got, want)
	}
	if r.Left() != 38*time.Second {
		t.Errorf("left %v, want 38s", r.Left())
	}
	r.Observe(model.Event{At: 6 * time.Second, Kind: model.InstanceCrashed, Instance: 2})
	if got := r.Status(); !strings.Contains(got, "leader #0 faults") {
		t.Errorf("a crashed leader still shown: %q", got)
	}
}

// An event's line has every field it carries, ids cut short, and no
// trailing space.
func TestEventLine(t *testing.T) {
	e := model.Event{At: 1500 * time.Millisecond, Kind: model.LeaderGained, Instance: 1, ID: "0123456789abcdef", Detail: "won"}
	if got, want := EventLine("x", e), "x      1.5s leader-gained    #1 id=01234567 won"; got != want {
		t.Errorf("EventLine = %q, want %q", got, want)
	}
	f := model.Event{At: time.Second, Kind: model.FaultApplied, Fault: "crash", Target: []int{0}}
	if got := FaultLine("x", f); strings.HasSuffix(got, " ") || !strings.Contains(got, "crash [0]") {
		t.Errorf("FaultLine = %q", got)
	}
}

func withFinding(v model.Verdict) *verdict.Result {
	res := &verdict.Result{Complete: true}
	res.Verdict = v
	res.Analysis.Claims = []analysis.Claim{
		{Name: analysis.ClaimGap, Verdict: analysis.Held},
		{Name: analysis.ClaimSplitBrain, Verdict: analysis.NotHeld, Bound: 2 * time.Second, Measured: 3 * time.Second},
	}
	return res
}

// The verdict shows the findings beside it; the verdict lines carry the
// reasons, harness errors and an error around the run.
func TestVerdictLines(t *testing.T) {
	res := withFinding(model.Fail)
	res.VirtualTime = true
	res.Reasons = []string{"max_overlap ≤ 0: measured 3s"}
	res.Errors = []string{"heal failed"}
	if got := Verdict(res); got != "FAIL · 1 finding" {
		t.Errorf("Verdict = %q", got)
	}
	lines := VerdictLines("split", res, errors.New("writing the report: disk full"))
	want := []string{
		"split: FAIL · 1 finding  max gap 0s, max overlap 0s, failover max 0s, stale max 0s",
		"  fail: max_overlap ≤ 0: measured 3s",
		"  harness error: heal failed",
		"  ERROR: writing the report: disk full",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("VerdictLines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// Each check's reason is labelled with the check's own verdict, not the
// run's: a FAIL run's unknown check read "fail: stale_leadership … — unknown"
// (redsync's partition-blackhole with the library's own lease values, whose
// fail was max_gap).
func TestVerdictLinesLabelEachCheck(t *testing.T) {
	res := &verdict.Result{Complete: true, VirtualTime: true}
	res.Checks = []model.Check{
		{Metric: "stale_leadership", Limit: "predicted", HasMin: true, Min: time.Second, Verdict: model.Unknown, Detail: "who held the key is unknown"},
		{Metric: "max_gap", Limit: "predicted", HasMax: true, Max: time.Second, Measured: 2 * time.Second, Verdict: model.Fail},
	}
	res.Verdict = model.Fail
	res.Reasons = []string{"fault 0 (crash) was skipped", res.Checks[0].String(), res.Checks[1].String()}
	lines := VerdictLines("redsync", res, nil)
	want := []string{
		"  fail: fault 0 (crash) was skipped",
		"  unknown: " + res.Checks[0].String(),
		"  fail: " + res.Checks[1].String(),
	}
	if len(lines) != 4 || strings.Join(lines[1:], "\n") != strings.Join(want, "\n") {
		t.Errorf("VerdictLines:\n%s\nwant after the first:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// A lease value that leaves the key's holder unknown is named on the
// terminal too, after the verdict's reasons.
func TestVerdictLinesNameIdentity(t *testing.T) {
	res := withFinding(model.Unknown)
	res.VirtualTime = true
	res.Analysis.Identity.Unannounced = []analysis.UnannouncedValue{{Value: "9Kwn6V", Held: time.Second}}
	lines := VerdictLines("redislock", res, nil)
	if len(lines) != 2 || !strings.HasPrefix(lines[1], `  identity: the key held values no agent announced ("9Kwn6V")`) {
		t.Errorf("VerdictLines:\n%s", strings.Join(lines, "\n"))
	}
}

// The measurement note is for a run in wall-clock time: a run in virtual
// time measures exactly and shows none, whatever its backend's name. The
// fault lateness is the Result's (verdict.Result.FaultLateness).
func TestMeasurementNote(t *testing.T) {
	res := &verdict.Result{Backend: "any", Scenario: model.Scenario{Faults: []model.Fault{{At: time.Second}}},
		Timeline: model.Timeline{{At: 1012 * time.Millisecond, Kind: model.FaultApplied, FaultID: 0}}}
	if got, want := MeasurementNote(res), "; measurement error: notifications none timed, faults ≤ 12ms late"; got != want {
		t.Errorf("MeasurementNote = %q, want %q", got, want)
	}
	res.VirtualTime = true
	if got := MeasurementNote(res); got != "" {
		t.Errorf("a run in virtual time: %q, want none", got)
	}
}

// The totals count every outcome and list each finding under its scenario.
func TestTotals(t *testing.T) {
	pass := withFinding(model.Pass)
	var w bytes.Buffer
	Totals(&w, []reports.SuiteRun{
		{Name: "leader-crash", Result: pass},
		{Name: "steady-state", Refused: "runner mode is not modelled"},
		{Name: "late", NotStarted: true},
		{Name: "broken", Err: errors.New("no redis")},
		{Name: "cut", Result: &verdict.Result{}},
	})
	want := "5 scenarios: 1 passed, 1 failed, 0 unknown, 1 incomplete, 1 not started, 1 refused; 1 with findings\n" +
		"findings (1 spec claims not held):\n" +
		"  leader-crash  " + reports.ShortFinding(pass.Analysis.Claims[1]) + "\n"
	if w.String() != want {
		t.Errorf("Totals:\n%s\nwant:\n%s", w.String(), want)
	}
	w.Reset()
	Totals(&w, nil)
	if !strings.Contains(w.String(), "findings: none") {
		t.Errorf("no runs: %q", w.String())
	}
}
