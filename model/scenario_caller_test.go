package model

import (
	"errors"
	"math"
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

// The rules the CLI used to check on its own are Validate's, so the Go API
// refuses what the CLI refuses: the name rule (the one scenario files use),
// the time-scale range, the longest run and the longest scaled fault.
func TestValidateNameTimeScaleAndLength(t *testing.T) {
	ok := func() Scenario { return Scenario{Name: "ok", Duration: 10 * time.Second} }
	for _, c := range []struct {
		field string
		edit  func(*Scenario)
	}{
		{"name", func(s *Scenario) { s.Name = "a b/c" }},
		{"name", func(s *Scenario) { s.Name = string(make([]byte, MaxNameLen+1)) }},
		{"name", func(s *Scenario) { s.Name = "-x" }},
		{"time_scale", func(s *Scenario) { s.TimeScale = 0.001 }},
		{"time_scale", func(s *Scenario) { s.TimeScale = math.NaN() }},
		{"time_scale", func(s *Scenario) { s.TimeScale = math.Inf(1) }},
		{"duration", func(s *Scenario) { s.Duration, s.TimeScale = 1000000*time.Hour, 100 }},
		{"faults[0]", func(s *Scenario) {
			s.Faults = []Fault{{At: time.Second, For: 2562047 * time.Hour, Kind: FaultPause}}
		}},
	} {
		sc := ok()
		c.edit(&sc)
		var verr *ValidationError
		if err := sc.Validate(); !errors.As(err, &verr) || len(verr.Problems) == 0 || verr.Problems[0].Field != c.field {
			t.Errorf("%.60q at time scale %v: %v; want a problem of %s", sc.Name, sc.TimeScale, err, c.field)
		}
	}
	for _, n := range []string{"leader-crash", "a.b_c-1", "9"} {
		if sc := (Scenario{Name: n}); sc.Validate() != nil {
			t.Errorf("%q refused: %v", n, sc.Validate())
		}
	}
	for _, s := range []string{"TestX/case#01", "", "-a", string(make([]byte, 300))} {
		if n := NameFrom(s); NameProblem(n) != "" {
			t.Errorf("NameFrom(%.20q) = %.20q: %s", s, n, NameProblem(n))
		}
	}
}
