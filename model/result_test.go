package model

import (
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
