package model

import (
	"testing"
	"time"
)

// TestFailReadsAsFail: a check that fails by less than DurationText's
// precision (an explore worst file's slack is 1ms) prints its measured
// value and its limit with the digits that tell them apart, and only
// those: "measured 1.5063s" against "≤ 1.506s", not "1.506s ≤ 1.506s —
// fail"; a value equal to its limit, or already apart, keeps the rule's.
func TestFailReadsAsFail(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		check       Check
		want, value string
	}{
		{Check{HasMax: true, Max: 1506 * ms, Measured: 1506*ms + 300*time.Microsecond, Verdict: Fail}, "≤ 1.506s", "1.5063s"},
		{Check{HasMax: true, Max: 2 * time.Second, Measured: 2*time.Second - 1, Open: true, Verdict: Fail}, "≤ 2s", "≥ 1.999999999s, still open"},
		{Check{HasMin: true, Min: 800 * ms, Measured: 800*ms - 20*time.Microsecond, Verdict: Fail}, "≥ 800ms", "799.98ms"},
		{Check{HasMax: true, Max: 1506 * ms, Measured: 1506 * ms, Verdict: Pass}, "≤ 1.506s", "1.506s"},
		{Check{HasMax: true, Max: 1506 * ms, Measured: 1152122096, Verdict: Pass}, "≤ 1.506s", "1.152s"},
	} {
		if w, v := c.check.Want(), c.check.Value(); w != c.want || v != c.value {
			t.Errorf("%v against %v: %s, %s; want %s, %s", c.check.Measured, c.check.Max, v, w, c.value, c.want)
		}
	}
}

// TestDurationsApart: a measurement beside its bound reads differently
// from it exactly when it differs, with no more digits than that takes.
func TestDurationsApart(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		a, b time.Duration
		x, y string
	}{
		{7554978502, 7565 * ms, "7.555s", "7.565s"},
		{7564900000, 7565 * ms, "7.5649s", "7.565s"},
		{7565 * ms, 7565 * ms, "7.565s", "7.565s"},
		{7565*ms + 1, 7565 * ms, "7.565000001s", "7.565s"},
		{448038404, time.Second, "448.04ms", "1s"},
		{0, Unbounded, "0s", "unbounded"},
	} {
		if x, y := DurationsApart(c.a, c.b); x != c.x || y != c.y {
			t.Errorf("DurationsApart(%v, %v) = %s, %s; want %s, %s", c.a, c.b, x, y, c.x, c.y)
		}
	}
}
