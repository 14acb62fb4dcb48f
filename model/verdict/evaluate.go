package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/bounds"

	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CheckExpectation validates an expectation without running anything, by
// Validate's rules for one expectation in any mode: the metric exists, a
// limit is given, each limit parses and evaluates with p, min is not above
// max. The error is the first problem found.
func CheckExpectation(e model.Expectation, p model.Params) error {
	if ps := e.Problems("", p); len(ps) > 0 {
		return errors.New(ps[0].Field + ": " + ps[0].Msg)
	}
	return nil
}

// Evaluation is what a run's expectations and preconditions say.
type Evaluation struct {
	Verdict model.Verdict `json:"verdict"`
	// Reasons say why the verdict is not pass: run-level ones (no leader
	// ever, a skipped fault) and one line per check that did not pass.
	Reasons []string      `json:"reasons,omitempty"`
	Checks  []model.Check `json:"checks"`
}

// Evaluate checks a run's expectations against its analysis. sc is the
// effective (scaled) scenario; preds are the predictions for the faults the
// run applied (bounds.Predict(p, bounds.AppliedFaultSize(sc, a))).
//
// The run's own preconditions come first: a run in which no instance ever
// led measured nothing about leadership, so every check is unknown; a fault
// that was skipped (its role matched nobody) makes the run unknown unless
// the scenario allows it (Fault.AllowSkipped). With sc.StrictClaims, every
// spec claim the run exercised becomes a check too (not held fails).
func Evaluate(sc model.Scenario, a analysis.Analysis, preds []bounds.Prediction) Evaluation {
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
			s.ID, s.Kind, s.At.Round(time.Millisecond), analysis.NonEmpty(s.Detail, "no target"))
		// No leader to hit, on a loaded machine, is likelier the load's
		// doing (a call timed out while the process stood still) than the
		// election's: name the stall.
		if late, n, worst := analysis.Stalled(a.Stalls, s.At-sc.Params.TTL-sc.Params.Wait, s.At); worst != nil {
			why += fmt.Sprintf("; the machine was loaded before it (%s)", analysis.StallText(late, n, worst))
		}
		ev.Reasons = append(ev.Reasons, why)
	}
	missed := analysis.MissedFaults(sc, a)
	ev.Reasons = append(ev.Reasons, missed...)
	if len(ev.Reasons) > 0 {
		ev.Verdict = model.Unknown
	}
	for _, e := range sc.Expect {
		c := evaluate(e, sc, a, preds)
		if noLeader && c.Verdict != model.Fail {
			c.Verdict, c.Detail = model.Unknown, "no instance ever led"
		}
		analysis.WithinUncertainty(&c, a)
		analysis.ExplainedByStalls(&c, a)
		analysis.CountExplainedByStalls(&c, a, sc.Params)
		analysis.MinExplainedByStalls(&c, a, sc.Params)
		writtenForSpecClient(&c, e, sc.Params)
		if len(missed) > 0 && c.Verdict == model.Pass {
			c.Verdict, c.Detail = model.Unknown, analysis.JoinDetail(c.Detail, "a fault caused nothing it is about, so passing tells nothing")
		}
		ev.Checks = append(ev.Checks, c)
	}
	if sc.StrictClaims {
		for _, cl := range a.Claims {
			if cl.Verdict == analysis.NotExercised {
				continue // says nothing either way; Claims shows it
			}
			c := model.Check{Metric: model.ClaimMetric(cl.Name), Limit: "held", HasMax: true, Max: cl.Bound + cl.Slack,
				Measured: cl.Measured, Verdict: model.Pass, Detail: cl.Statement + ": " + cl.Detail}
			switch cl.Verdict {
			case analysis.NotHeld:
				c.Verdict = model.Fail
			case analysis.ClaimUnknown:
				c.Verdict = model.Unknown
			}
			ev.Checks = append(ev.Checks, c)
		}
	}
	for _, c := range ev.Checks {
		ev.Verdict = model.Worse(ev.Verdict, c.Verdict)
		if c.Verdict != model.Pass {
			ev.Reasons = append(ev.Reasons, c.String())
		}
	}
	if ev.Verdict == "" {
		ev.Verdict = model.Pass
	}
	return ev
}

// evaluate checks one expectation.
func evaluate(e model.Expectation, sc model.Scenario, a analysis.Analysis, preds []bounds.Prediction) model.Check {
	c := model.Check{Metric: e.Metric, Limit: limitText(e), Line: e.Line, Count: model.CountMetric(e.Metric)}
	if err := CheckExpectation(e, sc.Params); err != nil {
		c.Verdict, c.Detail = model.Fail, err.Error()
		return c
	}
	maxS, minS := strings.TrimSpace(e.Max), strings.TrimSpace(e.Min)
	if c.Count {
		c.HasMax, c.HasMin = maxS != "", minS != ""
		c.MaxCount, _ = strconv.Atoi(maxS)
		c.MinCount, _ = strconv.Atoi(minS)
		c.MeasuredCount = measuredCount(e.Metric, a)
		c.Verdict = model.Pass
		if e.Metric == model.MetricStaleChores && !a.Redis.Observed {
			c.NotMeasured, c.Verdict = true, model.Fail
			c.Detail = "not measured: the Redis lane observed nothing, so no chore can be judged against the key"
			return c
		}
		if (c.HasMax && c.MeasuredCount > c.MaxCount) || (c.HasMin && c.MeasuredCount < c.MinCount) {
			c.Verdict = model.Fail
		}
		if e.Metric == model.MetricStaleChores && c.Verdict == model.Pass && len(a.Redis.Unknown) > 0 {
			c.Verdict = model.Unknown
			c.Detail = fmt.Sprintf("who held the key is unknown for %d stretches of leadership: %s", len(a.Redis.Unknown), a.Identity.Cause())
		}
		if e.Metric == model.MetricDuplicateTasks {
			judgeRepeats(&c, a)
		}
		return c
	}

	m := analysis.Measure(e.Metric, a)
	c.Measured, c.Open = m.Value, m.Open
	var details []string
	if minS == model.Predicted {
		c.HasMin = true
		var how string
		c.Min, how = bounds.PredictedMin(e, sc, a, preds)
		details = append(details, how)
	} else if minS != "" {
		c.HasMin = true
		c.Min, _ = model.EvalDuration(minS, sc.Params)
	}
	if maxS != "" {
		c.HasMax = true
		if maxS == "predicted" {
			slack := e.Slack
			if slack == 0 {
				slack = bounds.DefaultSlack
			}
			bound, how, formula, broken := bounds.PredictedLimit(e.Metric, sc, a, preds)
			c.Max, c.Formula = bound, formula
			if bound != model.Unbounded {
				c.Max = bound + slack
			}
			details = append(details, fmt.Sprintf("%s + slack %v", how, slack))
			switch {
			case broken != "":
				c.Verdict = model.Unknown
				details = append(details, "the bound's precondition does not hold: "+broken)
			case bound == model.Unbounded:
				c.Verdict = model.Unknown
				details = append(details, "the predicted bound is unbounded, so the measurement cannot be checked against it")
			}
		} else {
			c.Max, _ = model.EvalDuration(maxS, sc.Params)
		}
	}
	switch {
	case m.Unknown != "":
		c.Verdict = model.Unknown
		details = append(details, m.Unknown)
	case m.Missing != "":
		c.NotMeasured, c.Verdict = true, model.Fail
		details = append(details, "not measured: "+m.Missing)
	case c.Verdict == model.Unknown:
	case c.HasMin && c.Measured < c.Min:
		c.Verdict = model.Fail
	case c.HasMax && c.Measured > c.Max:
		c.Verdict = model.Fail
	case c.HasMax && c.Open:
		c.Verdict = model.Fail
		details = append(details, "a window was still open when the run ended and could still exceed the limit")
	default:
		c.Verdict = model.Pass
	}
	if v := c.Decided(c.Verdict, m); v != c.Verdict {
		c.Verdict = v
		details = append(details, m.Undecided)
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
	guardMaxes = map[model.Metric]bool{model.MetricMaxGap: true, model.MetricGaps: true, model.MetricFailover: true, model.MetricHealToStable: true, model.MetricLeaderChanges: true}
	guardMins  = map[model.Metric]bool{model.MetricStaleLeadership: true, model.MetricMaxOverlap: true, model.MetricTotalOverlap: true, model.MetricOverlapWindows: true}
)

// writtenForSpecClient makes unknown a check that fails only on the side
// of a fixed limit that a declared client stepping down at its lease's
// validity (ClientParams.ValidityMargin, outside safe mode) changes by
// design: such a limit (the stale leadership a partition must cause, "no
// gap under latency") demonstrates the spec's elector, not a promise, and
// a safer client that misses it is not at fault. Its "predicted" limits
// are the promise, computed for the guard, and are judged as ever, as are
// a window still open at the end and a limit that could not be read.
func writtenForSpecClient(c *model.Check, e model.Expectation, p model.Params) {
	if c.Verdict != model.Fail || c.NotMeasured || c.Open || p.Safe || p.Client.ValidityMargin <= 0 {
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
	excused := func(fails bool, limit string, metrics map[model.Metric]bool) bool {
		return !fails || (metrics[e.Metric] && strings.TrimSpace(limit) != model.Predicted)
	}
	if (!minFails && !maxFails) || !excused(minFails, e.Min, guardMins) || !excused(maxFails, e.Max, guardMaxes) {
		return
	}
	c.Verdict = model.Unknown
	c.Detail = analysis.JoinDetail(c.Detail, fmt.Sprintf("a fixed limit describing an elector that believes until its call fails; the agent's client steps down at its lease's validity (validity margin %v), which it does not describe (its predicted limits do)", p.Client.ValidityMargin))
}

// limitText is the expectation's limit as written.
func limitText(e model.Expectation) string {
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

func measuredCount(metric model.Metric, a analysis.Analysis) int {
	s := a.Summary
	switch metric {
	case model.MetricOverlapWindows:
		return s.Overlaps
	case model.MetricGaps:
		return s.Gaps
	case model.MetricLeaderChanges:
		return s.LeaderGains
	case model.MetricElectorErrors:
		return s.ElectorErrors
	case model.MetricLostTasks:
		return s.TasksLost
	case model.MetricUnfinishedTasks:
		return s.TasksUnfinished
	case model.MetricDeadTasks:
		return s.TasksDead
	case model.MetricDuplicateTasks:
		return s.TasksRepeated
	case model.MetricDuplicateChores:
		return s.DuplicateChores
	case model.MetricStaleChores:
		return s.StaleChores
	case model.MetricFencedChores:
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
func judgeRepeats(c *model.Check, a analysis.Analysis) {
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
	if c.Verdict == model.Fail && c.HasMax && other <= c.MaxCount && minHeld {
		c.Verdict = model.Unknown
		c.Detail += "; only redeliveries exceed the limit, which assumes every live instance acknowledges within ClaimIdle of delivery: " +
			"an instance, or Redis, was slower than that (a stalled process, a machine too loaded for the run's timings), so the run was too slow to judge"
	}
}

// clockRate is the rate of clock fault id of sc (1 when none is given).
func clockRate(sc model.Scenario, id int) float64 {
	if id < 0 || id >= len(sc.Faults) || sc.Faults[id].Rate <= 0 {
		return 1
	}
	return sc.Faults[id].Rate
}
