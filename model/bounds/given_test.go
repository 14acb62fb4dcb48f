package bounds

import (
	"github.com/leaselab/leaselab/model"

	"testing"
	"time"
)

// A mode whose size nobody gave is predicted at the example size and says
// so; one given, or one that needs no size, at the size given.
func TestPredictGiven(t *testing.T) {
	p := model.Params{}.WithDefaults()
	example := map[string]Prediction{}
	for _, pr := range Predict(p, ExampleFaultSize) {
		example[pr.Mode] = pr
	}
	sized := map[string]bool{model.ModeLatency: true, model.ModePause: true, model.ModeSuspend: true, model.ModeClockDrift: true}
	for _, tc := range []struct {
		size  model.FaultSize
		given map[string]bool // of the sized modes
	}{
		{model.FaultSize{}, map[string]bool{}},
		{model.FaultSize{Pause: 3 * time.Second}, map[string]bool{model.ModePause: true, model.ModeSuspend: true}},
		{model.FaultSize{Latency: time.Second, ClockRate: 0.7}, map[string]bool{model.ModeLatency: true, model.ModeClockDrift: true}},
	} {
		got := PredictGiven(p, tc.size)
		want := Predict(p, tc.size)
		if len(got) != len(want) {
			t.Fatalf("%+v: %d modes, Predict has %d", tc.size, len(got), len(want))
		}
		for i, g := range got {
			mode := want[i].Mode
			notGiven := sized[mode] && !tc.given[mode]
			if g.Example != notGiven || tc.size.Gives(mode) == notGiven {
				t.Errorf("%+v: %s example %v, want %v", tc.size, mode, g.Example, notGiven)
			}
			if wantPr := map[bool]Prediction{false: want[i], true: example[mode]}[notGiven]; g.Prediction != wantPr {
				t.Errorf("%+v: %s is not the prediction at the %s size", tc.size, mode, map[bool]string{false: "given", true: "example"}[notGiven])
			}
		}
	}
	if pr, _ := PredictMode(p, model.ModePause, ExampleFaultSize); pr.MaxOverlap == 0 || pr.MaxOverlap == model.Unbounded {
		t.Errorf("the example pause shows no bound worth showing: %v", pr.MaxOverlap)
	}
}
