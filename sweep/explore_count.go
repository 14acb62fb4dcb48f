package sweep

import (
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/leaselab/leaselab/model"
)

// countExpectation is the check a search reads a count from: a maximum no
// run reaches, so that the check measures and never fails (a count has
// no "predicted" limit; its bound, where one exists, is
// bounds.ChoreBound's).
func countExpectation(m string) model.Expectation {
	return model.Expectation{Metric: model.Metric(m), Max: strconv.Itoa(math.MaxInt32)}
}

// judgeCount reads a count's check into w: the count, and its bound where
// the model has one (duplicate chores against the overlap bound,
// bounds.ChoreBound), else unbounded with why.
func judgeCount(w *Worst, c *model.Check, r *verdict.Result) {
	w.Count = true
	if c.NotMeasured || (c.Verdict == model.Unknown && c.MeasuredCount == 0) {
		w.Unknown, w.Why = 1, c.Detail
		return
	}
	w.Found = true
	w.Measured = time.Duration(c.MeasuredCount)
	w.Predicted, w.Formula = model.Unbounded, countNoBound(string(c.Metric))
	if c.Metric == model.MetricDuplicateChores {
		eff := r.Scenario.Scaled()
		eff.Params = r.Params
		if n, formula, ok := bounds.ChoreBound(eff, r.Analysis, r.Predictions); ok {
			w.Predicted, w.Formula = time.Duration(n), formula
		} else {
			w.Formula = formula
		}
	}
	if w.Predicted > 0 && w.Predicted != model.Unbounded {
		w.Ratio = math.Round(float64(w.Measured)/float64(w.Predicted)*1e4) / 1e4
	}
	w.Violated = w.Predicted != model.Unbounded && w.Measured > w.Predicted
}

// countNoBound says why a count has no bound.
func countNoBound(m string) string {
	switch m {
	case exStaleChores:
		return "no bound known: a stale chore needs a leader that believes it leads after its key expired and reaches Redis, which safe mode's fence refuses; how many land depends on how long the stale belief lasts and the chore interval"
	case exDupTasks:
		return "no bound known: a task runs again when its entry is reclaimed (idle for ClaimIdle) or a lossy failover's replica still holds it; how many depends on the workload in flight"
	}
	return "no bound known"
}

// Value prints a measurement of w's metric: a duration, or a count.
func (w Worst) Value(d time.Duration) string {
	if w.Count {
		return strconv.FormatInt(int64(d), 10)
	}
	return model.DurationText(d)
}

// Texts prints w's worst measured value and its bound as a report shows
// them side by side: by the one rounding rule, with the digits that tell
// the two apart when they differ.
func (w Worst) Texts() (measured, bound string) {
	if w.Count || w.Predicted == NoLimit {
		return w.Value(w.Measured), w.BoundValue()
	}
	return model.DurationsApart(w.Measured, w.Predicted)
}

// BoundValue prints w's bound: a duration, a count, or unbounded.
func (w Worst) BoundValue() string {
	if w.Count && w.Predicted != model.Unbounded {
		return strconv.FormatInt(int64(w.Predicted), 10)
	}
	if w.Count {
		return "unknown"
	}
	return bounds.BoundText(w.Predicted)
}

// value prints a measurement of x's metric: a duration, or a count.
func (x Robust) value(d time.Duration) string {
	return Worst{Count: x.Count}.Value(d)
}

// countScenarioExpect is the expectation a worst or robust scenario file
// carries for a count: its bound where there is one, else the worst
// found (so that rerunning the file shows whether it comes back).
func countScenarioExpect(metric string, predicted, measured time.Duration) model.Expectation {
	if predicted != model.Unbounded {
		return model.Expectation{Metric: model.Metric(metric), Max: fmt.Sprint(int64(predicted))}
	}
	return model.Expectation{Metric: model.Metric(metric), Max: fmt.Sprint(int64(measured))}
}
