package model

import (
	"strings"
	"testing"
	"time"
)

// A run's findings are its claims not held, whatever its verdict.
func TestResultFindings(t *testing.T) {
	res := &Result{}
	res.Verdict = Pass
	res.Analysis.Claims = []Claim{{Name: ClaimGap, Verdict: Held}, {Name: ClaimSplitBrain, Verdict: NotHeld}, {Name: ClaimNoFaultlessSplit, Verdict: NotExercised}}
	if f := res.Findings(); len(f) != 1 || f[0].Name != ClaimSplitBrain {
		t.Errorf("Findings = %+v, want the split-brain claim alone", f)
	}
}

// The fault lateness is the worst applied fault's lateness against its
// scaled schedule; an event naming no scheduled fault counts for nothing.
func TestResultFaultLateness(t *testing.T) {
	res := &Result{TimeScale: 0.5, Scenario: Scenario{Faults: []Fault{{At: 2 * time.Second}, {At: 4 * time.Second}}},
		Timeline: Timeline{
			{At: 1003 * time.Millisecond, Kind: FaultApplied, FaultID: 0},
			{At: 2020 * time.Millisecond, Kind: FaultApplied, FaultID: 1},
			{At: 9 * time.Second, Kind: FaultHealed, FaultID: 1},
			{At: 9 * time.Second, Kind: FaultApplied, FaultID: 7},
		}}
	if got := res.FaultLateness(); got != 20*time.Millisecond {
		t.Errorf("FaultLateness = %v, want 20ms", got)
	}
	res.TimeScale = 0 // unscaled: faults early, none late
	if got := res.FaultLateness(); got != 0 {
		t.Errorf("unscaled FaultLateness = %v, want 0", got)
	}
}

// A prediction exceeds the spec's claims where its worst case passes
// TTL + Wait (the gap) or TTL (the overlap).
func TestPredictionExceedsClaims(t *testing.T) {
	p := Params{TTL: 5 * time.Second, Wait: 6 * time.Second}
	for _, c := range []struct {
		gap, overlap         time.Duration
		wantGap, wantOverlap bool
	}{
		{11 * time.Second, 5 * time.Second, false, false},
		{11*time.Second + 1, 5 * time.Second, true, false},
		{0, 5*time.Second + 1, false, true},
		{Unbounded, Unbounded, true, true},
	} {
		g, o := Prediction{MaxGap: c.gap, MaxOverlap: c.overlap}.ExceedsClaims(p)
		if g != c.wantGap || o != c.wantOverlap {
			t.Errorf("gap %v overlap %v: exceeds %v %v, want %v %v", c.gap, c.overlap, g, o, c.wantGap, c.wantOverlap)
		}
	}
}

// A check whose predicted bound the tool's own search beat is unknown, with
// the reason, whether it passed or failed; checks of other limits, and of
// other metrics, keep their verdicts, and the run's verdict follows.
func TestDistrustBeatenBounds(t *testing.T) {
	res := &Result{Complete: true, Evaluation: Evaluation{Checks: []Check{
		{Metric: "max_overlap", Limit: "predicted", HasMax: true, Max: time.Second, Measured: time.Second / 2, Verdict: Pass},
		{Metric: "max_gap", Limit: "predicted", HasMax: true, Max: time.Second, Measured: 2 * time.Second, Verdict: Fail},
		{Metric: "stale_leadership", Limit: "1s", HasMax: true, Max: time.Second, Measured: time.Second / 2, Verdict: Pass},
	}}}
	res.Verdict, res.Reasons = Fail, []string{res.Checks[1].String()}
	res.Distrust(map[string]string{"max_overlap": "the search measured 1.2s", "max_gap": "the search measured 3s", "stale_leadership": "the search measured 2s"})
	want := []Verdict{Unknown, Unknown, Pass}
	for i, c := range res.Checks {
		if c.Verdict != want[i] {
			t.Errorf("%s: %s, want %s", c.Metric, c.Verdict, want[i])
		}
	}
	if !strings.Contains(res.Checks[0].Detail, "the tool's own search beat this bound: the search measured 1.2s") {
		t.Errorf("detail %q", res.Checks[0].Detail)
	}
	if res.Verdict != Unknown || len(res.Reasons) != 2 {
		t.Errorf("verdict %s, reasons %q; want unknown with 2", res.Verdict, res.Reasons)
	}
}
