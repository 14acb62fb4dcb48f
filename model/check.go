package model

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Verdict is the outcome of a run or of one expectation.
//
// Unknown (Jepsen's `:valid? :unknown`) means the run did not create the
// situation the expectation is about (no instance ever led, the fault was
// skipped, no fault hit a leader, the predicted bound does not exist), or
// that the limit lies within the measurement's uncertainty (an observed
// fleet's estimates, an agent's lines stamped late), so that the windows
// may be within it or over it. It is never a pass: a measurement that was
// not made, or not made well enough, proves nothing.
type Verdict string

// Verdicts.
const (
	Pass    Verdict = "pass"
	Fail    Verdict = "fail"
	Unknown Verdict = "unknown"
)

// Check is one expectation evaluated against a run.
type Check struct {
	// Metric is the expectation's metric, or ClaimMetric(name) for a check
	// of one of the spec's claims (analysis.ClaimGap, ClaimSplitBrain).
	Metric Metric `json:"metric"`
	// Limit is the expectation as written: "predicted", "ttl + wait",
	// "min 1", "exactly 1".
	Limit string `json:"limit"`
	Count bool   `json:"count,omitempty"`
	// Max is the upper limit as evaluated (for "predicted": the prediction
	// plus slack), Min the lower one; HasMax/HasMin say which apply. Counts
	// use MaxCount and MinCount.
	HasMax   bool          `json:"has_max,omitempty"`
	HasMin   bool          `json:"has_min,omitempty"`
	Max      time.Duration `json:"max,omitempty"`
	Min      time.Duration `json:"min,omitempty"`
	MaxCount int           `json:"max_count,omitempty"`
	MinCount int           `json:"min_count,omitempty"`
	// Measured (durations) or MeasuredCount (counts) is the run's value.
	Measured      time.Duration `json:"measured,omitempty"`
	MeasuredCount int           `json:"measured_count,omitempty"`
	// Open means the measured value is a window still open when the run
	// ended: only a lower bound of what it became.
	Open bool `json:"open,omitempty"`
	// NotMeasured means the run should have measured the value and did not
	// (no stable leader after the fault, no Redis lane): the check fails.
	NotMeasured bool `json:"not_measured,omitempty"`
	// Stalled means the check failed only by what the harness measured
	// of its own lateness (Stall): it is unknown, the machine too loaded
	// to judge; run it again on a quieter one.
	Stalled bool    `json:"stalled,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Detail says how the bound was derived, or why the verdict is what it is.
	Detail string `json:"detail,omitempty"`
	// Formula is, for a predicted limit, the derivation of the term that
	// gave the bound, with its numbers ("pause: max(0, P + TTL/2 + jitter
	// - TTL) = … = 1.505s"; a composed or chained bound says so).
	Formula string `json:"formula,omitempty"`
	Line    int    `json:"line,omitempty"`
}

// Want is the limit as a relation: "≤ 3.75s", "≥ 1", "= 1", "1 to 3",
// with the digits Value's are given.
func (c Check) Want() string {
	k := c.digits()
	lo, hi := durationText(c.Min, k), durationText(c.Max, k)
	if c.Count {
		lo, hi = strconv.Itoa(c.MinCount), strconv.Itoa(c.MaxCount)
	}
	switch {
	case c.HasMin && c.HasMax && lo == hi:
		return "= " + lo
	case c.HasMin && c.HasMax:
		return lo + " to " + hi
	case c.HasMin:
		return "≥ " + lo
	case c.HasMax:
		return "≤ " + hi
	}
	return "—"
}

// Value is the measured value as a reader should see it: "3.2s",
// "≥ 2s, still open", "not measured". A value that differs from a limit by
// less than DurationText shows gets the digits that tell them apart, and
// the limit too (Want): a fail by 0.3 ms read "1.506s ≤ 1.506s — fail".
func (c Check) Value() string {
	switch {
	case c.NotMeasured:
		return "not measured"
	case c.Count:
		return strconv.Itoa(c.MeasuredCount)
	case c.Open:
		return "≥ " + durationText(c.Measured, c.digits()) + ", still open"
	}
	return durationText(c.Measured, c.digits())
}

// digits is how many decimals past DurationText's the check's durations
// need for its measured value to read differently from each limit it
// differs from (0 for most).
func (c Check) digits() int {
	if c.Count || c.NotMeasured {
		return 0
	}
	apart := func(k int, has bool, limit time.Duration) bool {
		return !has || c.Measured == limit || durationText(c.Measured, k) != durationText(limit, k)
	}
	for k := range maxExtraDigits {
		if apart(k, c.HasMax, c.Max) && apart(k, c.HasMin, c.Min) {
			return k
		}
	}
	return maxExtraDigits
}

// String renders the check as one line, e.g. for a JUnit failure message.
func (c Check) String() string {
	s := fmt.Sprintf("%s %s (%s): measured %s — %s", c.Metric, c.Want(), c.Limit, c.Value(), c.Verdict)
	if c.Verdict != Pass && c.Detail != "" {
		s += ": " + c.Detail
	}
	return s
}

// Measurement is a duration metric's value in a run. missing says why a
// value the run should have produced is absent (the check fails); unknown
// why the run never created the situation the metric is about.
type Measurement struct {
	Value   time.Duration
	Open    bool
	Missing string
	Unknown string
	// Undecided says why the value may be more than measured (windows
	// the analysis could not judge): a check it passes, or whose min it
	// misses, is unknown; one whose max it exceeds fails anyway.
	Undecided string
}

// Decided is v, or Unknown where m is undecided and v is not a fail over
// the check's max (which no more than measured could undo).
func (c Check) Decided(v Verdict, m Measurement) Verdict {
	if m.Undecided == "" || v == Unknown || (v == Fail && c.HasMax && (m.Value > c.Max || m.Open)) {
		return v
	}
	return Unknown
}

// SharesTarget reports whether two faults hit a common instance (a fault on
// Redis hits every one).
func SharesTarget(f, g FaultOutcome) bool {
	if len(f.Target) == 0 || len(g.Target) == 0 {
		return true
	}
	for _, t := range f.Target {
		if slices.Contains(g.Target, t) {
			return true
		}
	}
	return false
}

// Worse returns the worse of two verdicts: fail over unknown over pass.
func Worse(a, b Verdict) Verdict {
	rank := func(v Verdict) int {
		switch v {
		case Fail:
			return 2
		case Unknown:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
