package model

import (
	"testing"
	"time"
)

// A mode whose size nobody gave is predicted at the example size and says
// so; one given, or one that needs no size, at the size given.
func TestPredictGiven(t *testing.T) {
	p := Params{}.WithDefaults()
	example := map[string]Prediction{}
	for _, pr := range Predict(p, ExampleFaultSize) {
		example[pr.Mode] = pr
	}
	sized := map[string]bool{ModeLatency: true, ModePause: true, ModeSuspend: true, ModeClockDrift: true}
	for _, tc := range []struct {
		size  FaultSize
		given map[string]bool // of the sized modes
	}{
		{FaultSize{}, map[string]bool{}},
		{FaultSize{Pause: 3 * time.Second}, map[string]bool{ModePause: true, ModeSuspend: true}},
		{FaultSize{Latency: time.Second, ClockRate: 0.7}, map[string]bool{ModeLatency: true, ModeClockDrift: true}},
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
	if pr, _ := PredictMode(p, ModePause, ExampleFaultSize); pr.MaxOverlap == 0 || pr.MaxOverlap == Unbounded {
		t.Errorf("the example pause shows no bound worth showing: %v", pr.MaxOverlap)
	}
}
