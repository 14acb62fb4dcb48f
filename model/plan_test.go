package model

import (
	"reflect"
	"testing"
	"time"
)

// The plan: delayed starts first at their moment, each fault's injection
// and (unless instant) its heal at At+For or the end of the fault phase,
// stably by time.
func TestFaultPlan(t *testing.T) {
	s := time.Second
	sc := Scenario{Instances: 3, Duration: 10 * s, Starts: []time.Duration{0, 2 * s},
		Faults: []Fault{
			{At: 2 * s, For: 3 * s, Kind: FaultPause},
			{At: 1 * s, Kind: FaultPartition},          // heals at the end of the phase
			{At: 4 * s, For: 20 * s, Kind: FaultPause}, // For past the phase: healed at its end
			{At: 5 * s, Kind: FaultScriptFlush},        // instant: no heal
		}}
	want := []Action{
		{At: 1 * s, Kind: ActionInject, Index: 1},
		{At: 2 * s, Kind: ActionStart, Index: 1},
		{At: 2 * s, Kind: ActionInject, Index: 0},
		{At: 4 * s, Kind: ActionInject, Index: 2},
		{At: 5 * s, Kind: ActionHeal, Index: 0},
		{At: 5 * s, Kind: ActionInject, Index: 3},
		{At: 10 * s, Kind: ActionHeal, Index: 1},
		{At: 10 * s, Kind: ActionHeal, Index: 2},
	}
	if got := sc.FaultPlan(); !reflect.DeepEqual(got, want) {
		t.Errorf("plan:\n got %v\nwant %v", got, want)
	}
}
