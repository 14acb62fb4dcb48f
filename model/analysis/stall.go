package analysis

import (
	"github.com/leaselab/leaselab/model"

	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Stall is a moment the harness measured itself late in real time: an
// instance's timer that fired after its deadline (the elector's renewal
// or next attempt, a runner's timer), or the harness's own wake-up probe
// (Instance -1), which sleeps to a deadline all run long. On a loaded
// machine the instances' goroutines run late, and a window that runs past
// its bound by no more than the lateness measured inside it says nothing
// about the election: its check is unknown, naming the stall, never a
// fail (Evaluate).
type Stall struct {
	// Instance is the instance whose timer was late, -1 for the probe.
	Instance int `json:"instance"`
	// At is when the late timer fired (or the probe woke), on the run's
	// clock; it was due Late earlier.
	At   time.Duration `json:"at"`
	Late time.Duration `json:"late"`
	// Leader says the instance believed it led when its timer fired (its
	// renewal was late), as the analysis read its beliefs; false: a
	// follower's (its next attempt).
	Leader bool `json:"leader,omitempty"`
	// Agent marks an agent's own report (the process backend's stall
	// event): its process woke late, a timer or its probe.
	Agent bool `json:"agent,omitempty"`
}

// String names the stall for a verdict's detail: "i1's timer fired 454ms
// late at 12.345s (a follower: its next attempt)".
func (s Stall) String() string {
	if s.Instance < 0 {
		return fmt.Sprintf("the harness's wake-up probe woke %v late at %v (the process's goroutines were not run on time)",
			model.DurationText(s.Late), model.DurationText(s.At))
	}
	role := "a follower: its next attempt"
	if s.Leader {
		role = "the leader: its renewal"
	}
	if s.Agent {
		role = strings.TrimSuffix(strings.TrimSuffix(role, ": its next attempt"), ": its renewal")
		return fmt.Sprintf("i%d's agent process woke %v late at %v (%s)", s.Instance, model.DurationText(s.Late), model.DurationText(s.At), role)
	}
	return fmt.Sprintf("i%d's timer fired %v late at %v (%s)", s.Instance, model.DurationText(s.Late), model.DurationText(s.At), role)
}

// MinStall is the least lateness the harness records as a Stall: below
// it, a timer's or a goroutine's lateness is the scheduler's ordinary
// noise, a hundredth of DefaultSlack.
const MinStall = 2 * time.Millisecond

// stallsOf collects the run's Stall events, each with the role its
// instance had when it fired (from the beliefs). An instance's stall that
// reaches into a pause of that instance is the fault's, not the
// machine's, and left out: an agent stopped by SIGSTOP finds its probe
// late by the pause when it resumes (in-process clocks do not report
// what a Stall held).
func stallsOf(ev []model.Event, beliefs []Belief) []Stall {
	var out []Stall
	paused := map[int]time.Duration{}  // an instance's last pause, while it lasts
	resumed := map[int]time.Duration{} // its last resume
	for _, e := range ev {
		switch e.Kind {
		case model.InstancePaused:
			paused[e.Instance] = e.At
			continue
		case model.InstanceResumed:
			delete(paused, e.Instance)
			resumed[e.Instance] = e.At
			continue
		case model.StallKind:
		default:
			continue
		}
		if e.Instance >= 0 {
			if _, ok := paused[e.Instance]; ok {
				continue
			}
			if r, ok := resumed[e.Instance]; ok && r >= e.At-e.Lateness {
				continue
			}
		}
		s := Stall{Instance: e.Instance, At: e.At, Late: e.Lateness, Agent: e.Detail == model.AgentStall}
		for _, b := range beliefs {
			if b.Instance == e.Instance && b.Start <= e.At && (b.Open || e.At <= b.End) {
				s.Leader = true
			}
		}
		out = append(out, s)
	}
	return out
}

// Stalled is how much of [from, to] lies within some stall's lateness
// (the union of [At-Late, At] over stalls, clipped), how many stalls it
// is made of, and the stall that covers most of it.
func Stalled(stalls []Stall, from, to time.Duration) (time.Duration, int, *Stall) {
	type span struct{ lo, hi time.Duration }
	var spans []span
	var worst *Stall
	var most time.Duration
	for i, s := range stalls {
		lo, hi := max(s.At-s.Late, from), min(s.At, to)
		if hi <= lo {
			continue
		}
		spans = append(spans, span{lo, hi})
		if hi-lo > most {
			most, worst = hi-lo, &stalls[i]
		}
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	var total, reach time.Duration
	reach = from
	for _, s := range spans {
		lo := max(s.lo, reach)
		if s.hi > lo {
			total += s.hi - lo
			reach = s.hi
		}
	}
	return total, len(spans), worst
}

// StallText says how late the harness ran in a stretch: "i1's timer
// fired 454ms late at 12.3s (…)", or, made of several stalls, "late
// 912ms in all over 40 stalls, the longest: …".
func StallText(late time.Duration, n int, worst *Stall) string {
	if n == 1 {
		return worst.String()
	}
	return fmt.Sprintf("%v late in all over %d stalls, the longest: %s", model.DurationText(late), n, worst)
}

// ExplainedByStalls makes unknown a check that fails on a max only
// because the harness ran late: every window over the limit is over it by
// no more than the lateness measured inside it (Stalled), so that on time
// it may have kept the limit. A window over it by more, an open one or a
// count keep their fail: load only delays, and a bound broken past what the
// load explains is broken. (A missed min is MinExplainedByStalls's.)
func ExplainedByStalls(c *model.Check, a Analysis) {
	if c.Verdict != model.Fail || !c.HasMax || c.Count || c.NotMeasured || c.Open || len(a.Stalls) == 0 ||
		(c.HasMin && c.Measured < c.Min) {
		return
	}
	ws, ok := metricWindows(c.Metric, a)
	if !ok {
		return
	}
	var why string
	var over time.Duration
	for _, w := range ws {
		if w.Least() <= c.Max {
			continue
		}
		if w.Open {
			return
		}
		d, n, s := Stalled(a.Stalls, stallFrom(w, a), w.End)
		if s == nil || w.Least()-d > c.Max {
			return
		}
		if w.Least()-c.Max >= over {
			over = w.Least() - c.Max
			why = fmt.Sprintf("the harness ran %v late inside the window, more than its %v over the limit: %s; the machine was too loaded to judge",
				model.DurationText(d), model.DurationText(over), StallText(d, n, s))
		}
	}
	if why == "" {
		return
	}
	c.Verdict, c.Stalled = model.Unknown, true
	c.Detail = JoinDetail(c.Detail, why)
}

// CountExplainedByStalls makes unknown a count check over its maximum
// (leader changes, overlap windows, gaps, duplicate and stale chores) when
// a leader's timer, or the harness's probe, fired so
// late that its renewal may have come after its key expired: an extra
// election, and with it an overlap or a gap, that the load, not the
// election, made. "So late" is half the renewal's slack, (TTL/2 −
// jitter)/2: a renewal due TTL/2 + jitter after the last has TTL/2 −
// jitter before the key lapses, less its round trip (a latency built-in's
// 1 s). Measured: .ci/load's third run at load 6 had latency's leader
// timer fire 1.626 s late, leader_changes 2 and overlap_windows 1 against
// 1 and 0, a FAIL the election did not earn. A count under its minimum,
// and a count over it with no such stall, keep their fail.
func CountExplainedByStalls(c *model.Check, a Analysis, p model.Params) {
	if c.Verdict != model.Fail || !c.Count || !c.HasMax || c.MeasuredCount <= c.MaxCount || (c.HasMin && c.MeasuredCount < c.MinCount) {
		return
	}
	switch c.Metric {
	case model.MetricLeaderChanges, model.MetricOverlapWindows, model.MetricGaps,
		// A leader whose key lapsed for the load runs a chore after the
		// next leader's (its tick in flight at its demotion): leader-crash
		// on the process backend, every process stopped 4.8 s, measured a
		// duplicate scheduler run 12 ms apart.
		model.MetricDuplicateChores, model.MetricStaleChores:
	default:
		return
	}
	p = p.WithDefaults()
	limit := (p.TTL/2 - p.Jitter()) / 2
	var worst *Stall
	for i, s := range a.Stalls {
		// The probe's stall is every in-process goroutine's, the leader's
		// renewal (or its call's reply) among them: latency's leader, its
		// renewal in flight, lost its key to a 4.1 s stop of the process
		// tree with no timer of its own late.
		if (s.Instance < 0 || s.Leader) && s.Late >= limit && (worst == nil || s.Late > worst.Late) {
			worst = &a.Stalls[i]
		}
	}
	if worst == nil {
		return
	}
	c.Verdict, c.Stalled = model.Unknown, true
	c.Detail = JoinDetail(c.Detail, fmt.Sprintf("a leader's timer fired %v late (%s), past half its renewal's slack ((TTL/2 - jitter)/2 = %v): its key may have lapsed for the load, not the election; the machine was too loaded to judge",
		model.DurationText(worst.Late), worst, model.DurationText(limit)))
}

// stallFrom is where the stalls that may have lengthened w start: at its
// start, or, for a window inside a fault's stretch, half a TTL before the
// fault was applied (the leader's last renewal interval before it, whose
// cadence the bounds assume). A stall before the window moves its end
// too: a partitioned leader whose renewal timer fired 3.555 s late sends
// the call that ends its belief 3.555 s late (partition-one-way with the
// process tree stopped for 3.7 s: an overlap of 9.279 s against 7.815 s,
// every second of the stall before the overlap began). Earlier stalls
// only move phases, and the bounds hold at every phase.
func stallFrom(w model.Window, a Analysis) time.Duration {
	from := w.Start
	for _, f := range a.Faults {
		if f.Applied <= w.End && w.Start <= max(f.Reach, f.Healed) {
			from = min(from, f.Applied-a.Params.TTL/2)
		}
	}
	return from
}

// MinExplainedByStalls makes unknown a check that fails only on its
// minimum (a built-in's demonstration that its fault causes at least so
// much: stale leadership, lost tasks, a second leader) when the harness
// stalled inside a fault's stretch, from a TTL before it was applied to
// its reach. Load cannot make a window shorter the way it makes one
// longer, but it moves the fault against the election: a partition
// applied after the renewal it was meant to catch, a lossy failover's lag
// whose writes never ran because the instances and Redis stood still in
// it. Measured: redis-failover-lossy with its process tree stopped for
// 5 s inside the 5 s lag lost no task (lost_tasks ≥ 1, measured 0), a
// FAIL the election did not earn. The stall must be at least the
// shortfall (a duration) or half the renewal's slack, (TTL/2 − jitter)/2
// (a count: as CountExplainedByStalls); a miss with no such stall keeps
// its fail.
func MinExplainedByStalls(c *model.Check, a Analysis, p model.Params) {
	if c.Verdict != model.Fail || !c.HasMin || c.NotMeasured || len(a.Stalls) == 0 || len(a.Faults)+len(a.Skipped) == 0 {
		return
	}
	if c.HasMax && ((c.Count && c.MeasuredCount > c.MaxCount) || (!c.Count && c.Measured > c.Max)) {
		return // it fails on its maximum too
	}
	p = p.WithDefaults()
	need := (p.TTL/2 - p.Jitter()) / 2
	switch {
	case c.Count && c.MeasuredCount < c.MinCount:
	case !c.Count && c.Measured < c.Min:
		need = c.Min - c.Measured
	default:
		return
	}
	var late time.Duration
	var n int
	var worst *Stall
	for _, f := range a.Faults {
		d, k, s := Stalled(a.Stalls, f.Applied-p.TTL, max(f.Reach, f.Healed))
		if s != nil && d > late {
			late, n, worst = d, k, s
		}
	}
	// A fault skipped for want of a leader never met the election at all:
	// pause-safe with every process stopped 5.3 s just before it had no
	// leader to pause (its key lapsed in the stop), and its stale
	// leadership ≥ TTL/2 measured 0. The stretch is the one Evaluate names
	// beside the skip.
	for _, f := range a.Skipped {
		d, k, s := Stalled(a.Stalls, f.At-p.TTL-p.Wait, f.At)
		if s != nil && d > late {
			late, n, worst = d, k, s
		}
	}
	if worst == nil || late < need {
		return
	}
	c.Verdict, c.Stalled = model.Unknown, true
	c.Detail = JoinDetail(c.Detail, fmt.Sprintf("the harness ran %v late around a fault (from a TTL before it to its reach), at least the %v the minimum needed: %s; the fault did not meet the election as scheduled, and the machine was too loaded to judge",
		model.DurationText(late), model.DurationText(need), StallText(late, n, worst)))
}

// StallLateness is the worst lateness of the run's stalls: of an
// instance's timers (instances true) or of the harness's wake-up probe.
func (a Analysis) StallLateness(instances bool) time.Duration { return a.StallStats(instances).Max }

// StallStats are the lateness figures of the run's stalls of instances'
// timers (instances true) or of the harness's wake-up probe.
func (a Analysis) StallStats(instances bool) DurationStats {
	var late []time.Duration
	for _, s := range a.Stalls {
		if (s.Instance >= 0) == instances {
			late = append(late, s.Late)
		}
	}
	return durationStats(late)
}
