package sim

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultSlack is added to "predicted" limits for measurement error. It
// does not shrink with the time scale: scheduling delay, notification
// lateness and loopback round trips do not either.
const DefaultSlack = 250 * time.Millisecond

// Check is one expectation evaluated against a run.
type Check struct {
	Metric string `json:"metric"`
	// Limit is the expectation's Max as written.
	Limit string `json:"limit"`
	// Bound and Measured are durations for duration metrics; for counts
	// BoundCount and MeasuredCount.
	Bound         time.Duration `json:"bound,omitempty"`
	Measured      time.Duration `json:"measured,omitempty"`
	BoundCount    int           `json:"bound_count,omitempty"`
	MeasuredCount int           `json:"measured_count,omitempty"`
	Count         bool          `json:"count,omitempty"`
	Held          bool          `json:"held"`
	// Detail says how the bound was derived, or what went wrong.
	Detail string `json:"detail,omitempty"`
	Line   int    `json:"line,omitempty"`
}

// String renders the check as one line, e.g. for a JUnit failure message.
func (c Check) String() string {
	verdict := "held"
	if !c.Held {
		verdict = "NOT held"
	}
	if c.Count {
		return fmt.Sprintf("%s ≤ %d (%s): measured %d — %s", c.Metric, c.BoundCount, c.Limit, c.MeasuredCount, verdict)
	}
	return fmt.Sprintf("%s ≤ %v (%s): measured %v — %s", c.Metric, c.Bound, c.Limit, c.Measured, verdict)
}

// CheckExpectation validates an expectation without running anything: the
// metric exists and the limit parses.
func CheckExpectation(e Expectation, p Params) error {
	if _, ok := Metrics[e.Metric]; !ok {
		names := slices.Sorted(maps.Keys(Metrics))
		return fmt.Errorf("unknown metric %q; want one of %s", e.Metric, strings.Join(names, ", "))
	}
	if CountMetric(e.Metric) {
		if _, err := strconv.Atoi(strings.TrimSpace(e.Max)); err != nil {
			return fmt.Errorf("%s is a count: max %q must be a whole number", e.Metric, e.Max)
		}
		return nil
	}
	if strings.TrimSpace(e.Max) == "predicted" {
		return nil
	}
	if _, err := EvalDuration(e.Max, p); err != nil {
		return fmt.Errorf("%s: max: %v", e.Metric, err)
	}
	return nil
}

// Evaluate checks a run's expectations against its analysis. sc is the
// effective (scaled) scenario.
func Evaluate(sc Scenario, a Analysis, preds []Prediction) []Check {
	checks := make([]Check, 0, len(sc.Expect))
	for _, e := range sc.Expect {
		c := Check{Metric: e.Metric, Limit: e.Max, Line: e.Line, Count: CountMetric(e.Metric)}
		if err := CheckExpectation(e, sc.Params); err != nil {
			c.Detail = err.Error()
			checks = append(checks, c)
			continue
		}
		if c.Count {
			c.BoundCount, _ = strconv.Atoi(strings.TrimSpace(e.Max))
			c.MeasuredCount = measuredCount(e.Metric, a)
			c.Held = c.MeasuredCount <= c.BoundCount
			checks = append(checks, c)
			continue
		}
		c.Measured = measuredDuration(e.Metric, a)
		if strings.TrimSpace(e.Max) == "predicted" {
			slack := e.Slack
			if slack == 0 {
				slack = DefaultSlack
			}
			bound, how := predictedLimit(e.Metric, sc, preds)
			c.Bound, c.Detail = bound, fmt.Sprintf("%s + slack %v", how, slack)
			c.Held = Within(c.Measured, bound, slack)
			if bound != Unbounded {
				c.Bound = bound + slack
			}
		} else {
			c.Bound, _ = EvalDuration(e.Max, sc.Params)
			c.Held = c.Measured <= c.Bound
		}
		checks = append(checks, c)
	}
	return checks
}

func measuredDuration(metric string, a Analysis) time.Duration {
	s := a.Summary
	switch metric {
	case "max_gap":
		return s.MaxGap
	case "max_overlap":
		return s.MaxOverlap
	case "total_overlap":
		return s.TotalOverlap
	case "failover":
		return s.Failover.Max
	case "stale_leadership":
		return s.MaxStale
	case "heal_to_stable":
		var m time.Duration
		for _, f := range a.Faults {
			if f.Recovery != nil {
				m = max(m, *f.Recovery)
			}
		}
		return m
	}
	return 0
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
	case "duplicate_tasks":
		return s.TasksRepeated
	case "duplicate_chores":
		return s.DuplicateChores
	}
	return 0
}

// predictedLimit is the prediction for the metric over the failure modes
// the scenario's faults exercise: the largest predicted gap (for gaps,
// failover and recovery times) or overlap (for overlaps and stale
// leadership). A failover also always takes up to TTL + Wait + jitter (the
// followers must see the key gone, then reach their next tick), so that is
// its floor.
func predictedLimit(metric string, sc Scenario, preds []Prediction) (time.Duration, string) {
	modes := map[string]bool{}
	for _, f := range sc.Faults {
		if m := ModeOf(f.Kind, f.Mode); m != "" {
			modes[m] = true
		}
	}
	overlap := metric == "max_overlap" || metric == "total_overlap" || metric == "stale_leadership"
	var bound time.Duration
	var names []string
	for _, p := range preds {
		if !modes[p.Mode] {
			continue
		}
		names = append(names, p.Mode)
		v := p.MaxGap
		if overlap {
			v = p.MaxOverlap
		}
		bound = max(bound, v)
	}
	how := "predicted for " + strings.Join(names, ", ")
	if len(names) == 0 {
		how = "predicted without faults"
	}
	if metric == "failover" || metric == "heal_to_stable" {
		floor := sc.Params.TTL + sc.Params.Wait + sc.Params.Jitter()
		if floor > bound {
			bound = floor
			how = "TTL + Wait + jitter"
		}
	}
	return bound, how
}
