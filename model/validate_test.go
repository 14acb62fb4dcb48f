package model

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestValidateReportsEveryProblem: a time scale out of range, or a run too
// long once scaled, stops only the checks that need the scaled timings; the
// faults' own problems are reported beside it, so that one edit fixes all.
func TestValidateReportsEveryProblem(t *testing.T) {
	faults := []Fault{
		{At: 12 * time.Second, Kind: FaultPause, Target: Target{Indexes: []int{0}}},
		{At: time.Second, Kind: "crsh", Target: Target{Indexes: []int{1}}},
		{At: time.Second, For: time.Second, Kind: FaultPause, Target: Target{Indexes: []int{5}}},
	}
	want := []string{"faults[0].at", "faults[1].kind", "faults[2].target"}
	for _, c := range []struct {
		name  string
		edit  func(*Scenario)
		first string
	}{
		{"time scale out of range", func(sc *Scenario) { sc.TimeScale = 0.001 }, "time_scale"},
		{"run too long once scaled", func(sc *Scenario) { sc.TimeScale, sc.Recovery = 100, 1e6*time.Hour }, "duration"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := Scenario{Name: "t", Instances: 3, Duration: 10 * time.Second, Faults: faults}
			c.edit(&sc)
			var verr *ValidationError
			if err := sc.Validate(); !errors.As(err, &verr) {
				t.Fatalf("Validate = %v; want a *ValidationError", err)
			}
			var got []string
			for _, p := range verr.Problems {
				got = append(got, p.Field)
			}
			for _, f := range append([]string{c.first}, want...) {
				if !slices.Contains(got, f) {
					t.Errorf("no problem of %s among %q", f, got)
				}
			}
		})
	}
}

// TestTwoStopsOfOneInstance: a pause and a suspend of one instance at once
// both stop its process, and the first heal would resume it under the
// other; refused as two faults of one kind are. One after the other, or on
// two instances, they are fine.
func TestTwoStopsOfOneInstance(t *testing.T) {
	on := func(i int) Target { return Target{Indexes: []int{i}} }
	for _, c := range []struct {
		name   string
		faults []Fault
		ok     bool
	}{
		{"pause then suspend", []Fault{{At: time.Second, For: 4 * time.Second, Kind: FaultPause, Target: on(0)}, {At: 3 * time.Second, For: time.Second, Kind: FaultSuspend, Target: on(0)}}, false},
		{"suspend until the end, then pause", []Fault{{At: time.Second, Kind: FaultSuspend, Target: on(0)}, {At: 3 * time.Second, For: time.Second, Kind: FaultPause, Target: on(0)}}, false},
		{"one after the other", []Fault{{At: time.Second, For: 2 * time.Second, Kind: FaultPause, Target: on(0)}, {At: 3 * time.Second, For: time.Second, Kind: FaultSuspend, Target: on(0)}}, true},
		{"two instances", []Fault{{At: time.Second, For: 4 * time.Second, Kind: FaultPause, Target: on(0)}, {At: 3 * time.Second, For: time.Second, Kind: FaultSuspend, Target: on(1)}}, true},
		{"a clock fault beside a pause", []Fault{{At: time.Second, For: 4 * time.Second, Kind: FaultPause, Target: on(0)}, {At: 3 * time.Second, For: time.Second, Kind: FaultClock, Rate: 2, Target: on(0)}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := Scenario{Name: "t", Instances: 3, Duration: 10 * time.Second, Faults: c.faults}
			err := sc.Validate()
			if c.ok && err != nil {
				t.Fatalf("Validate = %v; want nil", err)
			}
			var verr *ValidationError
			if !c.ok {
				if !errors.As(err, &verr) || len(verr.Problems) != 1 || verr.Problems[0].Field != "faults[1]" {
					t.Fatalf("Validate = %v; want one problem of faults[1]", err)
				}
			}
		})
	}
}
