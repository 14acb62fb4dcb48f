package model

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestOverridesApply(t *testing.T) {
	sc := Scenario{Name: "x", Seed: 3, TimeScale: 0.5, Params: Params{Safe: true, SafeMargin: 70 * time.Millisecond}}
	if got := (Overrides{}).Apply(sc); got.Seed != 3 || got.TimeScale != 0.5 || got.StrictClaims || !got.Params.Safe || got.Params.SafeMargin != 70*time.Millisecond {
		t.Fatalf("the zero Overrides changed the scenario: %+v", got)
	}
	off := false
	got := Overrides{Seed: 9, TimeScale: 0.2, StrictClaims: true, Safe: &off}.Apply(sc)
	if got.Seed != 9 || got.TimeScale != 0.2 || !got.StrictClaims || got.Params.Safe || got.Params.SafeMargin != 0 {
		t.Fatalf("overridden: %+v", got)
	}
	on := true
	if got := (Overrides{Safe: &on}).Apply(Scenario{}); !got.Params.Safe {
		t.Fatal("Safe on did not turn safe mode on")
	}
	if sc.Seed != 3 || !sc.Params.Safe || sc.Params.SafeMargin != 70*time.Millisecond {
		t.Fatalf("Apply changed the caller's scenario: %+v", sc)
	}
}

// ApplyAll overrides every scenario and refuses the first the overrides
// make invalid.
func TestOverridesApplyAll(t *testing.T) {
	scs := []Scenario{{Name: "a", Seed: 1}, {Name: "b", Seed: 2}}
	if err := (Overrides{Seed: 7}).ApplyAll(scs); err != nil || scs[0].Seed != 7 || scs[1].Seed != 7 {
		t.Fatalf("seeds %d %d, %v", scs[0].Seed, scs[1].Seed, err)
	}
	long := []Scenario{{Name: "long", Duration: MaxRunLength / 2}}
	if err := long[0].Validate(); err != nil {
		t.Fatalf("at time scale 1: %v", err)
	}
	if err := (Overrides{TimeScale: MaxTimeScale}).ApplyAll(long); err == nil {
		t.Errorf("a %v run at time scale %v accepted", long[0].Duration, MaxTimeScale)
	}
	if err := (Overrides{TimeScale: MaxTimeScale}).ApplyAll(nil); err != nil {
		t.Errorf("no scenarios: %v", err)
	}
}

func TestValidTimeScale(t *testing.T) {
	for k, want := range map[float64]bool{1: true, MinTimeScale: true, MaxTimeScale: true, 0.2: true, 0: false, 1e-300: false, 1000: false, math.Inf(1): false, math.Inf(-1): false, -1: false} {
		if got := ValidTimeScale(k); got != want {
			t.Errorf("ValidTimeScale(%v) = %v, want %v", k, got, want)
		}
		if k == 0 {
			continue // 0 is the default (1), not a factor Validate sees
		}
		err := (Scenario{TimeScale: k}).Validate()
		if refused := err != nil && strings.Contains(err.Error(), "time_scale"); refused == want {
			t.Errorf("time scale %v: ValidTimeScale %v but Validate says %v", k, want, err)
		}
	}
	if ValidTimeScale(math.NaN()) {
		t.Error("ValidTimeScale(NaN) = true")
	}
}

// A suite's scenarios pick its backend only when they all name the same.
func TestSharedBackend(t *testing.T) {
	for _, c := range []struct {
		backends []string
		want     string
	}{
		{nil, ""},
		{[]string{"virtual"}, "virtual"},
		{[]string{"process", "process"}, "process"},
		{[]string{"process", ""}, ""},
		{[]string{"", "virtual"}, ""},
		{[]string{"real", "virtual"}, ""},
	} {
		var scs []Scenario
		for _, b := range c.backends {
			scs = append(scs, Scenario{Backend: b})
		}
		if got := SharedBackend(scs); got != c.want {
			t.Errorf("SharedBackend(%q) = %q, want %q", c.backends, got, c.want)
		}
	}
}
