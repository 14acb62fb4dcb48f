package model

import (
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
