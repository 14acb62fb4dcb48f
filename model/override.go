package model

import "math"

// Overrides are what a caller changes in every scenario it runs, as the
// CLI's --seed, --time-scale, --strict-claims and --safe do, so that a Go
// test or another tool overrides a scenario the same way. The zero value
// changes nothing.
type Overrides struct {
	// Seed, if not 0, replaces the scenario's seed.
	Seed int64
	// TimeScale, if not 0, replaces the scenario's time scale. Validate
	// refuses one outside MinTimeScale..MaxTimeScale (ValidTimeScale).
	TimeScale float64
	// StrictClaims, if true, turns strict claims on (Scenario.StrictClaims).
	StrictClaims bool
	// Safe, if not nil, turns the elector's safe mode on or off. Off also
	// drops the safe margin, which means nothing without the guard.
	Safe *bool
}

// Apply returns sc with the overrides. sc is a value and Apply writes none
// of its slices or maps: the caller's scenario is unchanged.
func (o Overrides) Apply(sc Scenario) Scenario {
	if o.Seed != 0 {
		sc.Seed = o.Seed
	}
	if o.TimeScale != 0 {
		sc.TimeScale = o.TimeScale
	}
	if o.StrictClaims {
		sc.StrictClaims = true
	}
	if o.Safe != nil {
		sc.Params.Safe = *o.Safe
		if !*o.Safe {
			sc.Params.SafeMargin = 0
		}
	}
	return sc
}

// ApplyAll applies the overrides to each of scs in place and validates
// each result (Scenario.Validate), as a run of them needs: an override can
// make a scenario invalid (a time scale that stretches it past
// MaxRunLength). The first refused is the error; the scenarios before it
// are overridden.
func (o Overrides) ApplyAll(scs []Scenario) error {
	for i := range scs {
		scs[i] = o.Apply(scs[i])
		if err := scs[i].Validate(); err != nil {
			return err
		}
	}
	return nil
}

// ValidTimeScale reports whether k is a time scale Validate accepts: a
// finite factor from MinTimeScale to MaxTimeScale (NaN, ±Inf and 0 are
// not).
func ValidTimeScale(k float64) bool {
	return !math.IsNaN(k) && k >= MinTimeScale && k <= MaxTimeScale
}
