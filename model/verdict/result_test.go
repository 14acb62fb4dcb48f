package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"strings"
	"testing"
	"time"
)

// A run's findings are its claims not held, whatever its verdict.
func TestResultFindings(t *testing.T) {
	res := &Result{}
	res.Verdict = model.Pass
	res.Analysis.Claims = []analysis.Claim{{Name: analysis.ClaimGap, Verdict: analysis.Held}, {Name: analysis.ClaimSplitBrain, Verdict: analysis.NotHeld}, {Name: analysis.ClaimNoFaultlessSplit, Verdict: analysis.NotExercised}}
	if f := res.Findings(); len(f) != 1 || f[0].Name != analysis.ClaimSplitBrain {
		t.Errorf("Findings = %+v, want the split-brain claim alone", f)
	}
}

// The fault lateness is the worst applied fault's lateness against its
// scaled schedule; an event naming no scheduled fault counts for nothing.
func TestResultFaultLateness(t *testing.T) {
	res := &Result{TimeScale: 0.5, Scenario: model.Scenario{Faults: []model.Fault{{At: 2 * time.Second}, {At: 4 * time.Second}}},
		Timeline: model.Timeline{
			{At: 1003 * time.Millisecond, Kind: model.FaultApplied, FaultID: 0},
			{At: 2020 * time.Millisecond, Kind: model.FaultApplied, FaultID: 1},
			{At: 9 * time.Second, Kind: model.FaultHealed, FaultID: 1},
			{At: 9 * time.Second, Kind: model.FaultApplied, FaultID: 7},
		}}
	if got := res.FaultLateness(); got != 20*time.Millisecond {
		t.Errorf("FaultLateness = %v, want 20ms", got)
	}
	res.TimeScale = 0 // unscaled: faults early, none late
	if got := res.FaultLateness(); got != 0 {
		t.Errorf("unscaled FaultLateness = %v, want 0", got)
	}
}

// A check whose predicted bound the tool's own search beat is unknown, with
// the reason, whether it passed or failed; checks of other limits, and of
// other metrics, keep their verdicts, and the run's verdict follows.
func TestDistrustBeatenBounds(t *testing.T) {
	res := &Result{Complete: true, Evaluation: Evaluation{Checks: []model.Check{
		{Metric: "max_overlap", Limit: "predicted", HasMax: true, Max: time.Second, Measured: time.Second / 2, Verdict: model.Pass},
		{Metric: "max_gap", Limit: "predicted", HasMax: true, Max: time.Second, Measured: 2 * time.Second, Verdict: model.Fail},
		{Metric: "stale_leadership", Limit: "1s", HasMax: true, Max: time.Second, Measured: time.Second / 2, Verdict: model.Pass},
	}}}
	res.Verdict, res.Reasons = model.Fail, []string{res.Checks[1].String()}
	res.Distrust(map[model.Metric]string{"max_overlap": "the search measured 1.2s", "max_gap": "the search measured 3s", "stale_leadership": "the search measured 2s"})
	want := []model.Verdict{model.Unknown, model.Unknown, model.Pass}
	for i, c := range res.Checks {
		if c.Verdict != want[i] {
			t.Errorf("%s: %s, want %s", c.Metric, c.Verdict, want[i])
		}
	}
	if !strings.Contains(res.Checks[0].Detail, "the tool's own search beat this bound: the search measured 1.2s") {
		t.Errorf("detail %q", res.Checks[0].Detail)
	}
	if res.Verdict != model.Unknown || len(res.Reasons) != 2 {
		t.Errorf("verdict %s, reasons %q; want unknown with 2", res.Verdict, res.Reasons)
	}
}
