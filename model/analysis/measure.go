package analysis

import (
	"github.com/leaselab/leaselab/model"

	"fmt"
	"time"
)

// WithinUncertainty makes a check whose limit lies within the
// measurement's uncertainty unknown. Where agents' lines were read late
// (the event came up to that much earlier, never later: Analysis.LateRange),
// a check of a metric their timing bears on is judged over every timing
// (timings.judge). Otherwise, for an observed fleet's estimates (± either
// way) a max of a window's length fails only if some window is over it
// however its ends really came, passes only if every window is within it
// however they came (LongestWithin); a min the other way round
// (longestReaches). A check with both fails if either side fails for
// certain and passes only if both pass for certain. A check that does not
// fail for certain is unknown if one of its windows' ends was stamped more
// than MaxStampUncertainty late.
func WithinUncertainty(c *model.Check, a Analysis) {
	if a.timings != nil && a.timings.judge(c, a) {
		return
	}
	ws, ok := metricWindows(c.Metric, a)
	// A window still open at the run's end fails a max by policy (it could
	// still exceed the limit), however its start was stamped.
	if !ok || (!c.HasMax && !c.HasMin) || c.NotMeasured || (c.HasMax && c.Open) || (c.Verdict != model.Fail && c.Verdict != model.Pass) {
		return
	}
	v, spread := model.Pass, time.Duration(0)
	for _, side := range []struct {
		has   bool
		judge func([]model.Window, time.Duration) (model.Verdict, time.Duration)
		limit time.Duration
	}{{c.HasMax, LongestWithin, c.Max}, {c.HasMin, longestReaches, c.Min}} {
		if !side.has {
			continue
		}
		sv, ss := side.judge(ws, side.limit)
		v, spread = model.Worse(v, sv), max(spread, ss)
	}
	if v == model.Fail {
		spread = 0
	}
	msg := fmt.Sprintf("the limit lies within the measurement's uncertainty (± %v)", spread)
	if v != model.Fail && tooLate(ws) {
		// A fail however the windows' ends came stands; anything else was
		// judged on lateness past what a run can be measured with.
		v, msg = model.Unknown, fmt.Sprintf("stamping lateness over %v at one of its windows' ends: the run was too loaded to judge", MaxStampUncertainty)
	}
	c.Verdict = v
	if v == model.Unknown {
		if c.Detail == "" {
			c.Detail = msg
		} else {
			c.Detail += "; " + msg
		}
	}
}

// Measure is metric's duration value in a, with why it may be missing,
// unknown or undecided (model.Measurement).
func Measure(metric model.Metric, a Analysis) model.Measurement {
	var m model.Measurement
	longest := func(w model.Window) {
		m.Value = max(m.Value, w.Duration)
		m.Open = m.Open || w.Open
	}
	switch metric {
	case model.MetricMaxGap:
		for _, g := range a.Gaps {
			longest(g.Window)
		}
	case model.MetricMaxOverlap:
		for _, o := range a.Overlaps {
			longest(o.Window)
		}
	case model.MetricTotalOverlap:
		for _, o := range a.Overlaps {
			m.Value += o.Duration
			m.Open = m.Open || o.Open
		}
	case model.MetricStaleLeadership:
		if !a.Redis.Observed {
			m.Missing = "the Redis lane observed nothing (no keyspace notification reached the harness)"
			break
		}
		for _, s := range a.Redis.Stale {
			longest(s.Window)
		}
		if u := a.Redis.Unknown; len(u) > 0 {
			m.Undecided = fmt.Sprintf("who held the key is unknown for %d stretches of leadership (%s): %s", len(u), sumWindows(u), a.Identity.Cause())
		}
	case model.MetricFailover:
		// Over the faults that demoted a leader they hit.
		hit := 0
		for _, f := range a.Faults {
			if f.Demotion == nil {
				continue
			}
			hit++
			if f.Failover == nil {
				m.Missing = fmt.Sprintf("fault %d (%s): %s", f.ID, f.Kind, NonEmpty(f.Note, "no stable leader after it"))
				break
			}
			m.Value = max(m.Value, *f.Failover)
		}
		if hit == 0 && m.Missing == "" {
			m.Unknown = "no fault demoted a leader: there was no failover to time"
		}
	case model.MetricHealToStable:
		healed := 0
		for _, f := range a.Faults {
			if f.Open {
				continue
			}
			healed++
			if f.Recovery == nil {
				m.Missing = fmt.Sprintf("fault %d (%s): no stable leader after its heal before the run ended", f.ID, f.Kind)
				break
			}
			m.Value = max(m.Value, *f.Recovery)
		}
		if healed == 0 && m.Missing == "" {
			m.Missing = "no fault was healed"
		}
	}
	return m
}

// NonEmpty is s, or otherwise when s is empty.
func NonEmpty(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}
