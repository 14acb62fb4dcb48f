package model

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultSlack is added to "predicted" limits for measurement error. It
// does not shrink with the time scale: scheduling delay, notification
// lateness and loopback round trips do not either.
const DefaultSlack = 250 * time.Millisecond

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

// worse returns the worse of two verdicts: fail over unknown over pass.
func worse(a, b Verdict) Verdict {
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

// Check is one expectation evaluated against a run.
type Check struct {
	Metric string `json:"metric"`
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

// CheckExpectation validates an expectation without running anything, by
// Validate's rules for one expectation in any mode: the metric exists, a
// limit is given, each limit parses and evaluates with p, min is not above
// max. The error is the first problem found.
func CheckExpectation(e Expectation, p Params) error {
	if ps := e.problems("", p); len(ps) > 0 {
		return errors.New(ps[0].Field + ": " + ps[0].Msg)
	}
	return nil
}

// Evaluation is what a run's expectations and preconditions say.
type Evaluation struct {
	Verdict Verdict `json:"verdict"`
	// Reasons say why the verdict is not pass: run-level ones (no leader
	// ever, a skipped fault) and one line per check that did not pass.
	Reasons []string `json:"reasons,omitempty"`
	Checks  []Check  `json:"checks"`
}

// Evaluate checks a run's expectations against its analysis. sc is the
// effective (scaled) scenario; preds are the predictions for the faults the
// run applied (PredictApplied).
//
// The run's own preconditions come first: a run in which no instance ever
// led measured nothing about leadership, so every check is unknown; a fault
// that was skipped (its role matched nobody) makes the run unknown unless
// the scenario allows it (Fault.AllowSkipped). With sc.StrictClaims, every
// spec claim the run exercised becomes a check too (not held fails).
func Evaluate(sc Scenario, a Analysis, preds []Prediction) Evaluation {
	var ev Evaluation
	noLeader := len(a.Beliefs) == 0
	if noLeader {
		ev.Reasons = append(ev.Reasons, "no instance ever led: the run measured nothing about leadership")
	}
	for _, s := range a.Skipped {
		if s.ID >= 0 && s.ID < len(sc.Faults) && sc.Faults[s.ID].AllowSkipped {
			continue
		}
		why := fmt.Sprintf("fault %d (%s) was skipped at %v: %s; the run never created the situation it is about (allow_skipped: true accepts this)",
			s.ID, s.Kind, s.At.Round(time.Millisecond), nonEmpty(s.Detail, "no target"))
		// No leader to hit, on a loaded machine, is likelier the load's
		// doing (a call timed out while the process stood still) than the
		// election's: name the stall.
		if late, n, worst := stalled(a.Stalls, s.At-sc.Params.TTL-sc.Params.Wait, s.At); worst != nil {
			why += fmt.Sprintf("; the machine was loaded before it (%s)", stallText(late, n, worst))
		}
		ev.Reasons = append(ev.Reasons, why)
	}
	missed := missedFaults(sc, a)
	ev.Reasons = append(ev.Reasons, missed...)
	if len(ev.Reasons) > 0 {
		ev.Verdict = Unknown
	}
	for _, e := range sc.Expect {
		c := evaluate(e, sc, a, preds)
		if noLeader && c.Verdict != Fail {
			c.Verdict, c.Detail = Unknown, "no instance ever led"
		}
		withinUncertainty(&c, a)
		explainedByStalls(&c, a)
		countExplainedByStalls(&c, a, sc.Params)
		writtenForSpecClient(&c, e, sc.Params)
		if len(missed) > 0 && c.Verdict == Pass {
			c.Verdict, c.Detail = Unknown, joinDetail(c.Detail, "a fault caused nothing it is about, so passing tells nothing")
		}
		ev.Checks = append(ev.Checks, c)
	}
	if sc.StrictClaims {
		for _, cl := range a.Claims {
			if cl.Verdict == NotExercised {
				continue // says nothing either way; Claims shows it
			}
			c := Check{Metric: "claim " + cl.Name, Limit: "held", HasMax: true, Max: cl.Bound + cl.Slack,
				Measured: cl.Measured, Verdict: Pass, Detail: cl.Statement + ": " + cl.Detail}
			switch cl.Verdict {
			case NotHeld:
				c.Verdict = Fail
			case ClaimUnknown:
				c.Verdict = Unknown
			}
			ev.Checks = append(ev.Checks, c)
		}
	}
	for _, c := range ev.Checks {
		ev.Verdict = worse(ev.Verdict, c.Verdict)
		if c.Verdict != Pass {
			ev.Reasons = append(ev.Reasons, c.String())
		}
	}
	if ev.Verdict == "" {
		ev.Verdict = Pass
	}
	return ev
}

// withinUncertainty makes a check whose limit lies within the
// measurement's uncertainty unknown. Where agents' lines were read late
// (the event came up to that much earlier, never later: Analysis.LateRange),
// a check of a metric their timing bears on is judged over every timing
// (timings.judge). Otherwise, for an observed fleet's estimates (± either
// way) a max of a window's length fails only if some window is over it
// however its ends really came, passes only if every window is within it
// however they came (longestWithin); a min the other way round
// (longestReaches). A check with both fails if either side fails for
// certain and passes only if both pass for certain. A check that does not
// fail for certain is unknown if one of its windows' ends was stamped more
// than MaxStampUncertainty late.
func withinUncertainty(c *Check, a Analysis) {
	if a.timings != nil && a.timings.judge(c, a) {
		return
	}
	ws, ok := metricWindows(c.Metric, a)
	// A window still open at the run's end fails a max by policy (it could
	// still exceed the limit), however its start was stamped.
	if !ok || (!c.HasMax && !c.HasMin) || c.NotMeasured || (c.HasMax && c.Open) || (c.Verdict != Fail && c.Verdict != Pass) {
		return
	}
	v, spread := Pass, time.Duration(0)
	for _, side := range []struct {
		has   bool
		judge func([]Window, time.Duration) (Verdict, time.Duration)
		limit time.Duration
	}{{c.HasMax, longestWithin, c.Max}, {c.HasMin, longestReaches, c.Min}} {
		if !side.has {
			continue
		}
		sv, ss := side.judge(ws, side.limit)
		v, spread = worse(v, sv), max(spread, ss)
	}
	if v == Fail {
		spread = 0
	}
	msg := fmt.Sprintf("the limit lies within the measurement's uncertainty (± %v)", spread)
	if v != Fail && tooLate(ws) {
		// A fail however the windows' ends came stands; anything else was
		// judged on lateness past what a run can be measured with.
		v, msg = Unknown, fmt.Sprintf("stamping lateness over %v at one of its windows' ends: the run was too loaded to judge", MaxStampUncertainty)
	}
	c.Verdict = v
	if v == Unknown {
		if c.Detail == "" {
			c.Detail = msg
		} else {
			c.Detail += "; " + msg
		}
	}
}

// evaluate checks one expectation.
func evaluate(e Expectation, sc Scenario, a Analysis, preds []Prediction) Check {
	c := Check{Metric: e.Metric, Limit: limitText(e), Line: e.Line, Count: CountMetric(e.Metric)}
	if err := CheckExpectation(e, sc.Params); err != nil {
		c.Verdict, c.Detail = Fail, err.Error()
		return c
	}
	maxS, minS := strings.TrimSpace(e.Max), strings.TrimSpace(e.Min)
	if c.Count {
		c.HasMax, c.HasMin = maxS != "", minS != ""
		c.MaxCount, _ = strconv.Atoi(maxS)
		c.MinCount, _ = strconv.Atoi(minS)
		c.MeasuredCount = measuredCount(e.Metric, a)
		c.Verdict = Pass
		if e.Metric == "stale_chores" && !a.Redis.Observed {
			c.NotMeasured, c.Verdict = true, Fail
			c.Detail = "not measured: the Redis lane observed nothing, so no chore can be judged against the key"
			return c
		}
		if (c.HasMax && c.MeasuredCount > c.MaxCount) || (c.HasMin && c.MeasuredCount < c.MinCount) {
			c.Verdict = Fail
		}
		if e.Metric == "stale_chores" && c.Verdict == Pass && len(a.Redis.Unknown) > 0 {
			c.Verdict = Unknown
			c.Detail = fmt.Sprintf("who held the key is unknown for %d stretches of leadership: %s", len(a.Redis.Unknown), a.Identity.cause())
		}
		if e.Metric == "duplicate_tasks" {
			judgeRepeats(&c, a)
		}
		return c
	}

	m := measure(e.Metric, a)
	c.Measured, c.Open = m.value, m.open
	var details []string
	if minS == predicted {
		c.HasMin = true
		var how string
		c.Min, how = predictedMin(e, sc, a, preds)
		details = append(details, how)
	} else if minS != "" {
		c.HasMin = true
		c.Min, _ = EvalDuration(minS, sc.Params)
	}
	if maxS != "" {
		c.HasMax = true
		if maxS == "predicted" {
			slack := e.Slack
			if slack == 0 {
				slack = DefaultSlack
			}
			bound, how, formula, broken := predictedLimit(e.Metric, sc, a, preds)
			c.Max, c.Formula = bound, formula
			if bound != Unbounded {
				c.Max = bound + slack
			}
			details = append(details, fmt.Sprintf("%s + slack %v", how, slack))
			switch {
			case broken != "":
				c.Verdict = Unknown
				details = append(details, "the bound's precondition does not hold: "+broken)
			case bound == Unbounded:
				c.Verdict = Unknown
				details = append(details, "the predicted bound is unbounded, so the measurement cannot be checked against it")
			}
		} else {
			c.Max, _ = EvalDuration(maxS, sc.Params)
		}
	}
	switch {
	case m.unknown != "":
		c.Verdict = Unknown
		details = append(details, m.unknown)
	case m.missing != "":
		c.NotMeasured, c.Verdict = true, Fail
		details = append(details, "not measured: "+m.missing)
	case c.Verdict == Unknown:
	case c.HasMin && c.Measured < c.Min:
		c.Verdict = Fail
	case c.HasMax && c.Measured > c.Max:
		c.Verdict = Fail
	case c.HasMax && c.Open:
		c.Verdict = Fail
		details = append(details, "a window was still open when the run ended and could still exceed the limit")
	default:
		c.Verdict = Pass
	}
	if v := c.decided(c.Verdict, m); v != c.Verdict {
		c.Verdict = v
		details = append(details, m.undecided)
	}
	c.Detail = strings.Join(details, "; ")
	return c
}

// Fixed limits a guard changes by design, per side: it ends beliefs
// sooner, so it may leave longer or more gaps and more leader changes
// (guardMaxes) and less overlap or stale leadership than a limit
// demonstrating the spec's elector asks for (guardMins). A broken maximum
// on overlap or stale leadership is never its doing: a guard only shortens
// belief.
var (
	guardMaxes = map[string]bool{"max_gap": true, "gaps": true, "failover": true, "heal_to_stable": true, "leader_changes": true}
	guardMins  = map[string]bool{"stale_leadership": true, "max_overlap": true, "total_overlap": true, "overlap_windows": true}
)

// writtenForSpecClient makes unknown a check that fails only on the side
// of a fixed limit that a declared client stepping down at its lease's
// validity (ClientParams.ValidityMargin, outside safe mode) changes by
// design: such a limit (the stale leadership a partition must cause, "no
// gap under latency") demonstrates the spec's elector, not a promise, and
// a safer client that misses it is not at fault. Its "predicted" limits
// are the promise, computed for the guard, and are judged as ever, as are
// a window still open at the end and a limit that could not be read.
func writtenForSpecClient(c *Check, e Expectation, p Params) {
	if c.Verdict != Fail || c.NotMeasured || c.Open || p.Safe || p.Client.ValidityMargin <= 0 {
		return
	}
	if CheckExpectation(e, p) != nil {
		return
	}
	var minFails, maxFails bool
	if c.Count {
		minFails = c.HasMin && c.MeasuredCount < c.MinCount
		maxFails = c.HasMax && c.MeasuredCount > c.MaxCount
	} else {
		minFails = c.HasMin && c.Measured < c.Min
		maxFails = c.HasMax && c.Measured > c.Max
	}
	excused := func(fails bool, limit string, metrics map[string]bool) bool {
		return !fails || (metrics[e.Metric] && strings.TrimSpace(limit) != predicted)
	}
	if (!minFails && !maxFails) || !excused(minFails, e.Min, guardMins) || !excused(maxFails, e.Max, guardMaxes) {
		return
	}
	c.Verdict = Unknown
	c.Detail = joinDetail(c.Detail, fmt.Sprintf("a fixed limit describing an elector that believes until its call fails; the agent's client steps down at its lease's validity (validity margin %v), which it does not describe (its predicted limits do)", p.Client.ValidityMargin))
}

// limitText is the expectation's limit as written.
func limitText(e Expectation) string {
	mx, mn := strings.TrimSpace(e.Max), strings.TrimSpace(e.Min)
	switch {
	case mn != "" && mn == mx:
		return "exactly " + mx
	case mn != "" && mx != "":
		return "min " + mn + ", max " + mx
	case mn != "":
		return "min " + mn
	}
	return mx
}

// measurement is a duration metric's value in a run. missing says why a
// value the run should have produced is absent (the check fails); unknown
// why the run never created the situation the metric is about.
type measurement struct {
	value   time.Duration
	open    bool
	missing string
	unknown string
	// undecided says why the value may be more than measured (windows
	// the analysis could not judge): a check it passes, or whose min it
	// misses, is unknown; one whose max it exceeds fails anyway.
	undecided string
}

// decided is v, or Unknown where m is undecided and v is not a fail over
// the check's max (which no more than measured could undo).
func (c Check) decided(v Verdict, m measurement) Verdict {
	if m.undecided == "" || v == Unknown || (v == Fail && c.HasMax && (m.value > c.Max || m.open)) {
		return v
	}
	return Unknown
}

func measure(metric string, a Analysis) measurement {
	var m measurement
	longest := func(w Window) {
		m.value = max(m.value, w.Duration)
		m.open = m.open || w.Open
	}
	switch metric {
	case "max_gap":
		for _, g := range a.Gaps {
			longest(g.Window)
		}
	case "max_overlap":
		for _, o := range a.Overlaps {
			longest(o.Window)
		}
	case "total_overlap":
		for _, o := range a.Overlaps {
			m.value += o.Duration
			m.open = m.open || o.Open
		}
	case "stale_leadership":
		if !a.Redis.Observed {
			m.missing = "the Redis lane observed nothing (no keyspace notification reached the harness)"
			break
		}
		for _, s := range a.Redis.Stale {
			longest(s.Window)
		}
		if u := a.Redis.Unknown; len(u) > 0 {
			m.undecided = fmt.Sprintf("who held the key is unknown for %d stretches of leadership (%s): %s", len(u), sumWindows(u), a.Identity.cause())
		}
	case "failover":
		// Over the faults that demoted a leader they hit.
		hit := 0
		for _, f := range a.Faults {
			if f.Demotion == nil {
				continue
			}
			hit++
			if f.Failover == nil {
				m.missing = fmt.Sprintf("fault %d (%s): %s", f.ID, f.Kind, nonEmpty(f.Note, "no stable leader after it"))
				break
			}
			m.value = max(m.value, *f.Failover)
		}
		if hit == 0 && m.missing == "" {
			m.unknown = "no fault demoted a leader: there was no failover to time"
		}
	case "heal_to_stable":
		healed := 0
		for _, f := range a.Faults {
			if f.Open {
				continue
			}
			healed++
			if f.Recovery == nil {
				m.missing = fmt.Sprintf("fault %d (%s): no stable leader after its heal before the run ended", f.ID, f.Kind)
				break
			}
			m.value = max(m.value, *f.Recovery)
		}
		if healed == 0 && m.missing == "" {
			m.missing = "no fault was healed"
		}
	}
	return m
}

func measuredCount(metric string, a Analysis) int {
	s := a.Summary
	switch metric {
	case "overlap_windows":
		return s.Overlaps
	case "gaps":
		return s.Gaps
	case "leader_changes":
		return s.LeaderGains
	case "elector_errors":
		return s.ElectorErrors
	case "lost_tasks":
		return s.TasksLost
	case "unfinished_tasks":
		return s.TasksUnfinished
	case "dead_tasks":
		return s.TasksDead
	case "duplicate_tasks":
		return s.TasksRepeated
	case "duplicate_chores":
		return s.DuplicateChores
	case "stale_chores":
		return s.StaleChores
	case "fenced_chores":
		return s.FencedChores
	}
	return 0
}

// judgeRepeats says what duplicate_tasks counted: how many of the repeated
// tasks may be at-least-once redelivery (RepeatedTask.Redelivered: an extra
// run may have taken over an entry a live instance held unacknowledged past
// ClaimIdle) and how many were delivered twice otherwise. A maximum that
// only such repeats exceed is unknown, not failed: a limit on repeats
// assumes every live instance acknowledges within ClaimIdle of delivery, and
// a run that breaks that (a stalled process, a machine too loaded for the
// timings) is too slow to judge it, as the runner allows such repeats by
// design. A repeat without a reclaim, or by one incarnation twice, fails it.
func judgeRepeats(c *Check, a Analysis) {
	if c.MeasuredCount == 0 {
		return
	}
	redelivered := 0
	for _, r := range a.RepeatedTasks {
		if r.Redelivered() {
			redelivered++
		}
	}
	other := c.MeasuredCount - redelivered
	c.Detail = fmt.Sprintf("%d re-ran after a reclaim (at-least-once redelivery: a live instance held the entry unacknowledged for ClaimIdle), "+
		"%d without one (delivered twice: in the stream twice, run twice by one instance, or reported twice)", redelivered, other)
	minHeld := !c.HasMin || c.MeasuredCount >= c.MinCount
	if c.Verdict == Fail && c.HasMax && other <= c.MaxCount && minHeld {
		c.Verdict = Unknown
		c.Detail += "; only redeliveries exceed the limit, which assumes every live instance acknowledges within ClaimIdle of delivery: " +
			"an instance, or Redis, was slower than that (a stalled process, a machine too loaded for the run's timings), so the run was too slow to judge"
	}
}

// predictedLimit is the prediction for the metric over the failure modes
// of the faults the run actually applied (a skipped fault predicts
// nothing): the largest predicted gap (for gaps, failover and recovery
// times) or overlap (for overlaps and stale leadership). A failover also
// always takes up to TTL + Wait + jitter (the followers must see the key
// gone, then reach their next tick), so that is its floor.
//
// formula is the derivation of the term that gave the bound (Check.Formula).
// broken, when not empty, names a precondition of the bounds that the run
// broke (Preconditions): the check is then unknown, neither pass nor fail.
func predictedLimit(metric string, sc Scenario, a Analysis, preds []Prediction) (bound time.Duration, how, formula, broken string) {
	modes := map[string]bool{}
	for _, f := range boundFaults(a) {
		modes[f.Mode] = true
	}
	overlap := metric == "max_overlap" || metric == "total_overlap" || metric == "stale_leadership"
	var names []string
	for _, p := range preds {
		if !modes[p.Mode] {
			continue
		}
		names = append(names, p.Mode)
		v, f := p.MaxGap, p.GapFormula
		if overlap {
			v, f = p.MaxOverlap, p.OverlapFormula
		}
		if metric == "stale_leadership" && p.MaxStale > v {
			v, f = p.MaxStale, p.StaleFormula
		}
		if v > bound || formula == "" {
			bound, formula = max(bound, v), p.Mode+": "+f
		}
	}
	how = "predicted for " + strings.Join(names, ", ")
	if len(names) == 0 {
		how = "predicted without faults"
	}
	for _, modes := range together(sc, boundFaults(a), overlap) {
		names := strings.Join(slices.Compact(slices.Clone(modes)), " + ")
		if overlap {
			if d, f, ok := ComposeOverlap(sc.Params, modes, AppliedFaultSize(sc, a)); ok && d > bound {
				bound, how, formula = d, "predicted for "+names+", "+f, names+", "+f
			}
		} else if d, f, ok := ComposeGap(sc.Params, modes, AppliedFaultSize(sc, a)); ok && d > bound {
			bound, how, formula = d, "predicted for "+names+", "+f, names+", "+f
		}
	}
	stopped := stoppedFollowers(sc, a)
	if !overlap && metric != "failover" && len(stopped) > 0 {
		var extra, alone time.Duration
		var fs []string
		for _, st := range stopped {
			e, al, _, f := StoppedAcquire(sc.Params, st.stop)
			extra += e
			alone = max(alone, al)
			fs = append(fs, fmt.Sprintf("fault %d: %s", st.fault.ID, f))
		}
		bound = max(addBound(bound, extra), alone)
		how += "; chained: " + strings.Join(fs, "; ")
		formula += "; chained: " + strings.Join(fs, "; ")
	}
	unseen := unseenFaults(sc, a)
	if !overlap && metric != "failover" && len(unseen) > 0 {
		e, f := unseenTerm(sc.Params, unseen)
		bound = addBound(bound, e)
		how += "; chained: " + f
		formula += "; chained: " + f
	}
	if metric == "max_overlap" {
		if d, f := chainedOverlap(sc, a, preds); d > bound {
			bound, how, formula = d, f, f
		}
	}
	if metric == "failover" {
		// The failover also counts the old leader's demotion and how long
		// the fault keeps the key out of reach (Prediction.MaxFailover),
		// and a later fault that hits the new leader before it was stable
		// restarts it (FailoverChain).
		per := map[string]Prediction{}
		var formulas []string
		for _, p := range preds {
			if modes[p.Mode] {
				per[p.Mode] = p
				formulas = append(formulas, p.Mode+": "+p.FailoverFormula)
			}
		}
		fs := boundFaults(a)
		at, reach, b := make([]time.Duration, len(fs)), make([]time.Duration, len(fs)), make([]time.Duration, len(fs))
		for i, f := range fs {
			at[i], reach[i], b[i] = f.Applied, f.Reach, per[f.Mode].MaxFailover
		}
		composed := false
		for _, g := range togetherGroups(sc, fs, false) {
			var ms []string
			var alone time.Duration
			for _, k := range g {
				ms = append(ms, fs[k].Mode)
				alone = max(alone, per[fs[k].Mode].MaxOverlap)
			}
			size := AppliedFaultSize(sc, a)
			o, _, ok := ComposeOverlap(sc.Params, ms, size)
			if !ok {
				continue
			}
			if slices.Contains(ms, ModeLatency) || slices.Contains(ms, ModeClockDrift) {
				// Latency or a slow clock with another delay may let any
				// renewal while they last be the one that lapses: the key
				// lasts up to the group's last heal + L + TTL.
				var healed time.Duration
				for _, k := range g {
					if fs[k].Open {
						healed = Unbounded
						break
					}
					healed = max(healed, fs[k].Healed)
				}
				for _, i := range g {
					v := Unbounded
					if healed != Unbounded && o != Unbounded {
						v = healed - at[i] + size.Latency + sc.Params.TTL + hop + max(o, sc.Params.Wait+sc.Params.Jitter())
					}
					if v > b[i] {
						b[i], composed = v, true
					}
				}
			}
			if o <= alone {
				continue
			}
			// Faults in force together delay the old leader more than
			// any alone (ComposeOverlap): the extra delay Δ can push both
			// the key's last extension and the demotion after it.
			delta := o - alone
			if o == Unbounded {
				delta = Unbounded
			}
			for _, i := range g {
				for _, m := range g {
					if at[m] < at[i] {
						continue
					}
					v := Unbounded
					if delta != Unbounded && b[m] != Unbounded {
						v = at[m] - at[i] + b[m] + 2*delta
					}
					if v > b[i] {
						b[i], composed = v, true
					}
				}
			}
		}
		var chained []string
		for _, st := range stopped {
			_, _, e, f := StoppedAcquire(sc.Params, st.stop)
			for i, g := range fs {
				if g.ID != st.fault.ID && overlapsInTime(sc, st.fault, g, a.End) {
					b[i] = addBound(b[i], e)
				}
			}
			chained = append(chained, fmt.Sprintf("fault %d: %s", st.fault.ID, f))
		}
		for _, u := range unseen {
			e, f := unseenTerm(sc.Params, []unseenFault{u})
			for i, g := range fs {
				if slices.Contains(u.with, g.ID) {
					b[i] = addBound(b[i], e)
				}
			}
			chained = append(chained, f)
		}
		if d := FailoverChain(sc.Params, at, reach, b); d > bound {
			bound, how = d, "predicted for "+strings.Join(names, ", ")+" (failover): "+strings.Join(formulas, "; ")
			formula = strings.Join(formulas, "; ")
			if len(at) > 1 {
				how += fmt.Sprintf("; %d faults chained (a later one that starts within a failover and a TTL lengthens it)", len(at))
			}
			if len(chained) > 0 {
				how += "; chained: " + strings.Join(chained, "; ")
			}
			if composed {
				how += "; faults in force together: twice their extra delay (ComposeOverlap beyond the largest alone), and with latency or a slow clock among them the key may last until their last heal + L + TTL"
			}
			if len(at) > 1 || len(chained) > 0 || composed {
				formula = fmt.Sprintf("%d faults chained (model.FailoverChain): %s = %s", len(at), strings.TrimPrefix(how, "predicted for "), BoundText(d))
			}
		}
	}
	if metric == "heal_to_stable" || (metric == "failover" && bound == 0) {
		floor := sc.Params.TTL + sc.Params.Wait + sc.Params.Jitter()
		if floor > bound {
			bound = floor
			how = "TTL + Wait + jitter"
			_, formula = sum(term{sym: "TTL", d: sc.Params.TTL}, term{sym: "Wait", d: sc.Params.Wait}, term{sym: "jitter", d: sc.Params.Jitter()})
		}
	}
	return bound, how, formula, strings.Join(Preconditions(sc, a, !overlap), "; ")
}

// stoppedFollower is a pause or suspend of an instance that was not
// leading, in force with a leader's fault (StoppedAcquire).
type stoppedFollower struct {
	fault FaultOutcome
	stop  time.Duration
}

// stoppedFollowers are the pauses and suspends that stopped an instance
// not leading at their injection while a fault a bound is taken for (another
// one) was in force or could still reach: that follower's acquire may have
// landed just before, and it holds the key unbelieved while stopped.
func stoppedFollowers(sc Scenario, a Analysis) []stoppedFollower {
	used := boundFaults(a)
	var out []stoppedFollower
	for _, g := range a.Faults {
		if !specOf(FaultKind(g.Kind)).Stops {
			continue
		}
		follower := slices.ContainsFunc(g.Target, func(i int) bool {
			return !slices.ContainsFunc(g.LeadersAtInjection, func(m Member) bool { return m.Instance == i })
		})
		if !follower || !slices.ContainsFunc(used, func(f FaultOutcome) bool { return f.ID != g.ID && overlapsInTime(sc, g, f, a.End) }) {
			continue
		}
		stop := g.Healed - g.Applied
		if g.Open {
			stop = Unbounded
		}
		out = append(out, stoppedFollower{g, stop})
	}
	return out
}

// addBound adds two bounds, Unbounded absorbing.
func addBound(a, b time.Duration) time.Duration {
	if a == Unbounded || b == Unbounded {
		return Unbounded
	}
	return a + b
}

// together groups the faults that are in force together, each group's
// failure modes in schedule order, once per fault: faults whose spans come
// within a renewal interval (and the longest call) of each other and, with
// sameInstance (the leader's delays, for overlaps), that hit a common
// instance (a fault on Redis hits every one); a gap also grows by a fault on
// another instance (a slow follower may win, believed late) (a renewal a pause delayed can fire into
// a partition that starts as the pause ends). Only groups of two or more
// faults are returned.
func together(sc Scenario, fs []FaultOutcome, sameInstance bool) [][]string {
	var out [][]string
	for _, g := range togetherGroups(sc, fs, sameInstance) {
		var modes []string
		for _, k := range g {
			modes = append(modes, fs[k].Mode)
		}
		out = append(out, modes)
	}
	return out
}

// chainedOverlap bounds an overlap window that faults in force together on
// different instances can make: at every moment of an overlap at most one
// believer holds the key, so some other believer is stale, and one window
// can pass from one stale leader to the next (a paused leader overlapped by
// the winner, which a second fault then keeps believing past its own key).
// The window is at most the sum of the stale bounds of the instances hit,
// each its faults' composed bound (ComposeOverlap) or its mode's.
func chainedOverlap(sc Scenario, a Analysis, preds []Prediction) (time.Duration, string) {
	per := map[string]time.Duration{}
	for _, p := range preds {
		per[p.Mode] = p.MaxOverlap
	}
	fs := boundFaults(a)
	size := AppliedFaultSize(sc, a)
	var best time.Duration
	how := ""
	for _, g := range togetherGroups(sc, fs, false) {
		// Split the group by instance: faults that share a target compose.
		var roots [][]string
		for _, sub := range connected(len(g), func(x, y int) bool { return sharesTarget(fs[g[x]], fs[g[y]]) }) {
			var ms []string
			for _, x := range sub {
				ms = append(ms, fs[g[x]].Mode)
			}
			roots = append(roots, ms)
		}
		if len(roots) < 2 {
			continue
		}
		var total time.Duration
		var parts []string
		for _, ms := range roots {
			var v time.Duration
			for _, m := range ms {
				v = max(v, per[m])
			}
			if len(ms) > 1 {
				if d, _, ok := ComposeOverlap(sc.Params, ms, size); ok {
					v = max(v, d)
				}
			}
			parts = append(parts, strings.Join(slices.Compact(slices.Clone(ms)), " + ")+" "+BoundText(v))
			if total == Unbounded || v == Unbounded {
				total = Unbounded
			} else {
				total += v
			}
		}
		if total > best {
			best = total
			how = "predicted for faults in force together on different instances: an overlap window can pass from one stale leader to the next, so the sum of their stale bounds: " + strings.Join(parts, " + ") + " = " + BoundText(total)
		}
	}
	return best, how
}

// togetherGroups is together's grouping, as indexes into fs.
func togetherGroups(sc Scenario, fs []FaultOutcome, sameInstance bool) [][]int {
	// A renewal a fault delayed, or a call it slowed, can still be going
	// a renewal interval plus the longest call after its heal.
	renew := max(sc.Params.TTL, sc.Params.TTL/2+sc.Params.Jitter()) + longestCall(sc.Params) + longestLatencyCall(sc)
	var out [][]int
	for _, m := range connected(len(fs), func(i, j int) bool {
		f, g := fs[i], fs[j]
		return (!sameInstance || sharesTarget(f, g)) && g.Applied <= f.Healed+renew && f.Applied <= g.Healed+renew
	}) {
		if len(m) >= 2 {
			out = append(out, m)
		}
	}
	return out
}

// connected partitions 0..n-1 into the classes that join (called for i < j)
// connects, each in increasing order, the classes in order of their first
// member.
func connected(n int, join func(i, j int) bool) [][]int {
	group := make([]int, n)
	for i := range group {
		group[i] = i
	}
	root := func(i int) int {
		for group[i] != i {
			i = group[i]
		}
		return i
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if join(i, j) {
				group[root(j)] = root(i)
			}
		}
	}
	members := map[int][]int{}
	var order []int
	for i := range n {
		r := root(i)
		if members[r] == nil {
			order = append(order, r)
		}
		members[r] = append(members[r], i)
	}
	out := make([][]int, 0, len(order))
	for _, r := range order {
		out = append(out, members[r])
	}
	return out
}

// boundFaults are the applied faults a prediction is taken for: those with
// a failure mode that acted on Redis or hit a leader, or slowed a follower
// that then won while it lasted (slowWinner: taken as applied at that
// win), or stopped one that won at its resume (winsAtResume: a leader's
// pause). A fault that hit only followers otherwise is no leader's failure,
// and the leader's bound says nothing about it.
func boundFaults(a Analysis) []FaultOutcome {
	var out []FaultOutcome
	for _, f := range splitByLeading(a.Faults) {
		if f.Mode == "" {
			continue
		}
		if !FaultKind(f.Kind).OnRedis() && !f.LeaderHit {
			if winsAtResume(f, a) {
				f.LeaderHit = true
			} else if won, ok := slowWinner(f, a); ok {
				f.Applied, f.LeaderHit = won, true
			} else {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// splitByLeading splits a fault that hit both a leader and an instance not
// leading at its injection into the leader's part and the followers' part,
// each with the same ID: the followers' part is then a slow winner (or a
// stop that wins at its resume) of its own, on another instance, as two
// faults would be. Taken whole, the slow follower's win was in the leader's
// fault and one clock fault at 0.2× on [leader, follower] overlapped 12.5 s
// of the 7.775 s one instance's bound allows (as two faults, 15.3 s).
func splitByLeading(fs []FaultOutcome) []FaultOutcome {
	var out []FaultOutcome
	for _, f := range fs {
		var lead, rest []int
		for _, t := range f.Target {
			if slices.ContainsFunc(f.LeadersAtInjection, func(m Member) bool { return m.Instance == t }) {
				lead = append(lead, t)
			} else {
				rest = append(rest, t)
			}
		}
		if !f.LeaderHit || len(lead) == 0 || len(rest) == 0 {
			out = append(out, f)
			continue
		}
		l, r := f, f
		l.Target, r.Target = lead, rest
		r.LeaderHit, r.LeadersAtInjection = false, nil
		out = append(out, l, r)
	}
	return out
}

// winsAtResume reports whether pause or suspend f stopped a follower whose
// acquire had landed and that believed at its resume, reading the winning
// reply it held: its key was set before the stop, so it led through the
// stop as a paused leader does, and its first renewal (TTL/2 + jitter after
// the resume) may find the key gone: P + TTL/2 + jitter − TTL. Taken for a
// follower's stop only (StoppedAcquire), a follower paused 3.9 s mid-acquire
// under 1 s replies believed 2.50 s stale of 0.755 s, one paused 4.9 s
// overlapped 0.90 s and believed 2.40 s stale of 0.25 s.
func winsAtResume(f FaultOutcome, a Analysis) bool {
	if !specOf(FaultKind(f.Kind)).Stops || f.Open {
		return false
	}
	for _, b := range a.Beliefs {
		if b.Start > f.Healed+hop+winnerStampSlack {
			break // beliefs are in order of start
		}
		if b.Start >= f.Healed && slices.Contains(f.Target, b.Instance) {
			return true
		}
	}
	return false
}

// Preconditions lists the assumptions of the predicted bounds that the run
// broke, each with what broke it (none: the bounds apply). Every bound
// assumes
//
//   - at least two instances, so that someone can take over;
//   - a fault that happened: a scenario with faults, all of them skipped or
//     none of them hitting a leader or Redis, exercised no failure mode, so
//     its run measured nothing a bound is about (a PASS there would be
//     hollow);
//
// and a gap bound (gap, failover, heal_to_stable: forGap) also assumes a
// healthy follower: while a fault a bound is taken for lasts, some instance
// other than the leaders it hit is live, not partitioned, paused or
// slowed by any fault, with a clock not slower than real time. When every
// instance is hit (a crash of all, a slow clock on all), nobody is left to
// take over on the bound's schedule: a Wait stretched to Wait/k, a
// restart's own start-up, are not modelled.
func Preconditions(sc Scenario, a Analysis, forGap bool) []string {
	var broken []string
	if n := sc.WithDefaults().Instances; n < 2 {
		broken = append(broken, fmt.Sprintf("%d instance: the bounds assume at least two, so that a follower can take over", n))
	}
	used := boundFaults(a)
	if len(used) == 0 && (len(a.Faults) > 0 || len(a.Skipped) > 0) {
		var why []string
		for _, s := range a.Skipped {
			why = append(why, fmt.Sprintf("fault %d (%s) was skipped", s.ID, s.Kind))
		}
		for _, f := range a.Faults {
			switch {
			case f.Mode == "":
				why = append(why, fmt.Sprintf("fault %d (%s) has no failure mode", f.ID, f.Kind))
			case !f.LeaderHit:
				why = append(why, fmt.Sprintf("fault %d (%s) hit no leader", f.ID, f.Kind))
			}
		}
		broken = append(broken, "no fault exercised a failure mode ("+strings.Join(why, ", ")+"): the bounds are about a leader's or Redis's fault")
	}
	if !forGap {
		return broken
	}
	n := sc.WithDefaults().Instances
	for _, f := range used {
		hit := map[int]bool{}
		for _, t := range f.Target {
			hit[t] = true
		}
		// A fault on Redis hits the leaders of its moment (a restart's
		// lost key demotes them): they are no followers to take over.
		if FaultKind(f.Kind).OnRedis() {
			for _, m := range f.LeadersAtInjection {
				hit[m.Instance] = true
			}
		}
		for _, g := range a.Faults {
			if FaultKind(g.Kind).OnRedis() || !overlapsInTime(sc, g, f, a.End) {
				continue
			}
			if spares := specOf(FaultKind(g.Kind)).sparesTakeover; spares != nil && spares(faultOf(sc, g.ID)) {
				continue // e.g. a jump or a fast clock: timers keep (or beat) real time
			}
			for _, t := range g.Target {
				hit[t] = true
			}
		}
		if n >= 2 && len(hit) >= n {
			broken = append(broken, fmt.Sprintf("no healthy follower during fault %d (%s): every instance was hit by a fault then (crashed, cut off, paused or with a clock slower than real time), and the gap bounds assume one that takes over on schedule", f.ID, f.Kind))
			break
		}
	}
	return broken
}

// overlapsInTime reports whether fault g was in force while fault f's
// bound is about (from f's injection to its reach). A crash or stop without
// restart leaves its instance down to the end of the run.
func overlapsInTime(sc Scenario, g, f FaultOutcome, runEnd time.Duration) bool {
	end := g.Healed
	switch {
	case specOf(FaultKind(g.Kind)).Downs:
		if g.ID < 0 || g.ID >= len(sc.Faults) || !sc.Faults[g.ID].Restart {
			end = runEnd
		}
	case g.Instant:
		return false // a clock jump: nothing stays broken
	}
	return g.Applied <= f.Reach && end >= f.Applied
}

// coldRenewals says whether a renewal under latency (or a replies-dropped
// partition) may have been the first
// after an empty script cache: the run's first renewal (TTL/2 + jitter
// after the first leader's promotion) or the first after a script-flush,
// redis-restart or redis-failover, with a latency fault in force then; and
// whether the reply before it was late too (the latency already in force
// at that promotion, or at the flush).
func coldRenewals(sc Scenario, a Analysis) (cold, afterLate bool) {
	renew := a.Params.TTL/2 + a.Params.Jitter()
	var empties []time.Duration // when the renew script was not cached
	if len(a.Beliefs) > 0 {
		empties = append(empties, a.Beliefs[0].Start)
	}
	for _, f := range a.Faults {
		if specOf(FaultKind(f.Kind)).EmptiesScripts {
			empties = append(empties, f.Applied)
		}
	}
	for _, f := range a.Faults {
		// A renewal's NOSCRIPT is late under latency, lost under a
		// replies-dropped partition (which then extends nothing).
		if slow := specOf(FaultKind(f.Kind)).slowsReplies; slow == nil || !slow(faultOf(sc, f.ID)) {
			continue
		}
		for _, e := range empties {
			// The first renewal after e is sent within a renewal interval
			// of the promotion of the first leader that lived to send it;
			// the latency must be in force by then.
			promoted := firstRenewer(sc, a, e, renew)
			if promoted == Unbounded {
				continue // nobody renewed
			}
			if f.Applied <= promoted+renew+hop && f.Healed >= e {
				cold = true
				if f.Applied <= promoted {
					afterLate = true
				}
			}
		}
	}
	return cold, afterLate
}

// firstRenewer is when the first leader to renew after the script cache
// emptied at e was promoted (e if one already led then): a leader that died
// before its first renewal (TTL/2 + jitter after its promotion) left the
// cache empty for the next, whose first renewal is then the cold one
// (a leader crashed 2.07 s into the run, and the follower that won next
// under 2.49 s replies believed 4.98 s past its key, of a warm bound of 0).
// Believing past that is not renewing: a leader a fault hit from its
// promotion to its first renewal's due time and the longest call after it
// (paused or cut off over it, then crashed) may never have loaded the
// script (the next winner under 2.4 s replies overlapped by 4.15 s and
// believed 4.7 s stale, of 0.25 s), so it is skipped. A skipped leader
// may have sent the cold renewal all the same, so when every leader after
// e was hit, the last one's promotion stands (a later promotion only
// widens the window in which a fault makes the renewal cold): returning
// none there judged the renewal warm, and a pause of the next leader
// lowered a cold latency's bound from 2.505 s to 0.505 s (stale 1.504 s).
// Unbounded: nobody led after e.
func firstRenewer(sc Scenario, a Analysis, e, renew time.Duration) time.Duration {
	call := longestCall(a.Params) + longestLatencyCall(sc)
	last := Unbounded
	for _, b := range a.Beliefs {
		p := max(b.Start, e)
		if !b.Open && b.End <= p+renew {
			continue
		}
		hit := slices.ContainsFunc(a.Faults, func(f FaultOutcome) bool {
			if !slices.Contains(f.Target, b.Instance) && (len(f.Target) > 0 || !specOf(FaultKind(f.Kind)).hitsAllUntargeted) {
				return false
			}
			end := f.Healed
			if f.Open || specOf(FaultKind(f.Kind)).Downs {
				end = max(end, f.Applied)
			}
			if f.Open {
				end = Unbounded
			}
			return f.Applied <= p+renew+call && end >= p
		})
		if !hit {
			return p
		}
		last = p
	}
	return last
}

// sharesTarget reports whether two faults hit a common instance (a fault on
// Redis hits every one).
func sharesTarget(f, g FaultOutcome) bool {
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

// longestLatencyCall is the longest call any latency fault of sc can
// make, every round trip just inside the attempt timeout.
func longestLatencyCall(sc Scenario) time.Duration {
	if !slices.ContainsFunc(sc.Faults, func(f Fault) bool { return specOf(f.Kind).stretchesCalls }) {
		return 0
	}
	d, _ := latencyCall(sc.Params, Unbounded, 0)
	if d == Unbounded {
		return 0
	}
	return d
}

// longestCall is the longest failing call of any partition mode.
func longestCall(p Params) time.Duration {
	var d time.Duration
	for _, m := range []string{ModePartitionBlackhole, ModePartitionRefuse, ModePartitionReset} {
		if c := CallBound(p, m); c != Unbounded {
			d = max(d, c)
		}
	}
	return d
}

// clockRate is the rate of clock fault id of sc (1 when none is given).
func clockRate(sc Scenario, id int) float64 {
	if id < 0 || id >= len(sc.Faults) || sc.Faults[id].Rate <= 0 {
		return 1
	}
	return sc.Faults[id].Rate
}

func nonEmpty(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// AppliedFaultSize is the size of the faults the run actually applied, as
// the predictions should assume it: the largest latency (plus its jitter),
// the longest pause as it lasted (pauses of one instance less than a
// renewal interval apart add up: the frozen clock counts neither, so one
// renewal is late by both), the slowest clock rate, Redis's downtime in a
// restart, the longest replies-dropped partition (Unbounded if it never
// healed), the shortest blackhole and the number of refusals. sc is the effective
// scenario the fault IDs index.
func AppliedFaultSize(sc Scenario, a Analysis) FaultSize {
	var s FaultSize
	// Pauses of one instance add up while no renewal succeeds between them:
	// within a renewal interval, or a safe-mode guard period, plus the
	// longest failing call, since a call that hangs between two pauses
	// keeps the belief (and the guard's count) going.
	window := max(a.Params.TTL, a.Params.TTL/2+a.Params.Jitter()) + longestCall(a.Params)
	z := &sizing{s: &s, sc: sc, a: a, stopped: map[int][]stopSpan{}}
	for _, f := range a.Faults {
		if f.ID < 0 || f.ID >= len(sc.Faults) {
			continue
		}
		if size := specOf(FaultKind(f.Kind)).size; size != nil {
			size(z, f, sc.Faults[f.ID])
		}
	}
	s.ColdRenewal, s.ColdAfterLateReply = coldRenewals(sc, a)
	for _, ps := range z.stopped {
		slices.SortFunc(ps, func(x, y stopSpan) int { return int(x.from - y.from) })
		var run time.Duration
		for i, p := range ps {
			if i > 0 && p.from-ps[i-1].to >= window {
				run = 0
			}
			run += p.to - p.from
			s.Pause = max(s.Pause, run)
			if !p.leader {
				continue // a follower's: StoppedAcquire chains it
			}
			if d := p.to - p.from; d > 0 && (s.PauseMin == 0 || d < s.PauseMin) {
				s.PauseMin = d
			}
			for _, d := range []time.Duration{p.to - p.from, run} {
				if d > 0 && d <= a.Params.TTL {
					s.PauseShortMax = max(s.PauseShortMax, d)
				}
			}
		}
	}
	return s
}
