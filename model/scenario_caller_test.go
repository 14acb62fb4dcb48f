package model

import (
	"reflect"
	"testing"
	"time"
)

// WithDefaults, Validate, Scaled and Length work on copies: the caller's
// scenario, its faults among them, is the same afterwards. (WithDefaults
// used to fill a partition's mode and a latency's direction in the caller's
// Faults array, through Validate's value receiver too.)
func TestWithDefaultsAndValidateLeaveTheCallersScenario(t *testing.T) {
	mk := func() Scenario {
		return Scenario{Name: "caller", TimeScale: 0.5, Starts: []time.Duration{0, time.Second},
			Faults: []Fault{
				{At: time.Second, For: time.Second, Kind: FaultPartition, Target: Target{Indexes: []int{0}}},
				{At: 2 * time.Second, For: time.Second, Kind: FaultLatency, Latency: 100 * time.Millisecond},
			},
			Expect: []Expectation{{Metric: "max_gap", Max: "predicted"}}}
	}
	sc, want := mk(), mk()
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	if d := sc.WithDefaults(); d.Faults[0].Mode != PartitionBlackhole || d.Faults[1].Direction != DirectionBoth {
		t.Fatalf("WithDefaults filled no defaults: %+v", d.Faults)
	}
	_ = sc.Scaled()
	_ = sc.Length()
	if !reflect.DeepEqual(sc, want) {
		t.Errorf("the caller's scenario changed:\n got %+v\nwant %+v", sc, want)
	}
}
