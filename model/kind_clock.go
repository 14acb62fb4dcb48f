package model

import (
	"math"
	"math/big"
	"strconv"
	"time"
)

// FaultClock makes the instance's clock run at Rate, or jump by Jump.
const FaultClock FaultKind = "clock"

var clockKind = KindSpec{
	Kind:      FaultClock,
	Doc:       "the instance's clock drifts (rate) or steps (jump)",
	OnProcess: true,
	Params:    []string{"rate", "jump"},
	Modes:     []string{ModeClockDrift},
	Colour:    0x8c564b,
	NoStarter: "how far a deployment's clocks drift is its own to state: chaos advise --max-drift sizes a clock fault, and a starter suite has only the faults every deployment meets",
	Axes: []SizeAxis{{Param: "clock_rate", Qualifier: " with a rate",
		Sizes: func(f Fault) bool { return f.Rate != 0 },
		Set:   func(f *Fault, _ time.Duration, rate float64) { f.Rate = rate }}},
	ModeFault: func(_ string, p Params, s FaultSize, _ time.Duration) (Fault, bool) {
		if s.ClockRate <= 0 {
			return Fault{}, false
		}
		return Fault{Kind: FaultClock, For: 4 * p.TTL, Rate: s.ClockRate}, true
	},
	Needs: KindNeeds{AgentCapability: "clock"},
	Text: func(f Fault, dur func(time.Duration) string) []string {
		var p []string
		if f.Rate > 0 {
			p = append(p, "rate "+strconv.FormatFloat(f.Rate, 'g', -1, 64)+"×")
		}
		if f.Jump != 0 {
			sign := "+"
			if f.Jump < 0 {
				sign = ""
			}
			p = append(p, "jump "+sign+dur(f.Jump))
		}
		return p
	},
	instant:    func(f Fault) bool { return f.Rate == 0 },
	forProblem: "a clock jump is instant; for applies only with rate (a drift)",
	describe: func(f Fault, add func(k string, v any)) {
		if f.Rate > 0 {
			add("rate", f.Rate)
		}
		if f.Jump != 0 {
			add("jump", f.Jump)
		}
	},
	problems: func(c faultCheck) {
		switch f := c.f; {
		case f.Rate == 0 && f.Jump == 0:
			c.bad("", "a clock fault needs rate (a drift, e.g. rate: 0.5) or jump (a step, e.g. jump: -2s)")
		case f.Rate != 0 && (f.Rate < MinClockRate || f.Rate > MaxClockRate):
			// Outside this range the instance's timers either never
			// fire within a run or their durations overflow.
			c.bad(".rate", "%v; want a clock speed from %v to %v (1 = true time, 0.5 = half speed)", f.Rate, MinClockRate, MaxClockRate)
		}
	},
	Size: func(z *Sizing, f FaultOutcome, sf Fault) {
		s := z.Size
		if sf.Rate > 0 && (s.ClockRate == 0 || sf.Rate < s.ClockRate) {
			s.ClockRate = sf.Rate
		}
		if sf.Rate > 1 {
			s.ClockRateMax = max(s.ClockRateMax, sf.Rate)
		}
		if sf.Rate > 0 && sf.Rate < 1 {
			s.ClockFor = max(s.ClockFor, lasted(f))
		}
	},
	// A jump or a fast clock: timers keep (or beat) real time.
	SparesTakeover: func(sf Fault) bool { return sf.Rate <= 0 || sf.Rate >= 1 },
	SlowWinner:     true,
}

// RateFraction is a clock rate as the exact fraction Num/Den that the
// virtual model runs a clock at. It is the shortest decimal that reads back
// as the rate's float (0.2 is 1/5, not the float's nearest binary
// fraction), so a drifting clock's readings and timers are computed in
// whole nanoseconds without rounding error: a reading is the real time
// elapsed times Num/Den, rounded down. That makes the model's times affine
// in a schedule's times on each residue class modulo Lattice (what chaos
// prove walks).
type RateFraction struct{ Num, Den uint64 }

// RateFractionOf is the fraction a positive rate runs at. A rate whose
// shortest decimal does not fit 64-bit terms (none within MinClockRate and
// MaxClockRate written with fewer than 18 digits) is rounded to 10⁻¹²
// first.
func RateFractionOf(rate float64) RateFraction {
	if r, ok := new(big.Rat).SetString(strconv.FormatFloat(rate, 'g', -1, 64)); ok && r.Sign() > 0 && r.Num().IsUint64() && r.Denom().IsUint64() {
		return RateFraction{r.Num().Uint64(), r.Denom().Uint64()}
	}
	const den = 1_000_000_000_000
	num := uint64(math.Round(rate * den))
	g := gcd(num, den)
	return RateFraction{num / g, den / g}
}

// One reports whether the clock keeps real time.
func (r RateFraction) One() bool { return r.Num == r.Den }

// Lattice is the step, in nanoseconds, on which times scaled by the rates
// stay affine with integer coefficients: the product, over the rates, of
// each one's numerator times its denominator (1 when every rate is 1). On
// each residue class of a schedule's times modulo it, every reading (a real
// time elapsed times Num/Den, rounded down) and every timer (a clock
// duration times Den/Num, rounded up) rounds by the same amount, so the
// model's event times are affine in the schedule there. Each drifting
// period can divide a time's coefficients by a denominator (a timer armed
// in it fires after it healed) or multiply them by a numerator once, hence
// a factor per rate, even for a rate that repeats. It reports false when
// the step would exceed limit.
func Lattice(limit uint64, rates ...RateFraction) (uint64, bool) {
	step := uint64(1)
	for _, r := range rates {
		for _, f := range []uint64{r.Num, r.Den} {
			if f > limit/step {
				return 0, false
			}
			step *= f
		}
	}
	return step, true
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
