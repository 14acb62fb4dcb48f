package analysis

import (
	"github.com/leaselab/leaselab/model"

	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"
)

// An agent's line read late (Event.Late) says the agent acted up to Late
// before its stamp, never after. A window's own ends then bound only that
// window (Window.Longer, Shorter): the other events may move too, so that
// a window the stamps do not show may have been (a promotion read late
// before another's demotion stamped exactly: an overlap), two may have
// been one, or one two. The verdicts are therefore taken on two extreme
// timings instead, each belief at its longest (begun by its Late early,
// ended at its stamp: the most overlap, the least gap) and at its shortest
// (begun at its stamp, ended by its Late early: the least overlap, the most
// gap). Every real timing's leader count lies between theirs at every
// instant, so a figure that only grows with the beliefs (the longest and
// total overlap, the longest stale window) or only shrinks (the longest
// gap) lies between its values on the two; the rest (failover, recovery,
// counts, chores, the overlaps away from faults) have bounds of their own
// below, and TestLateRangeHoldsEveryTiming searches for a timing that
// breaks them. Harness events (faults, crashes, the Redis lane) are exact.
// A check passes only if it passes at both ends, fails only if it fails at
// both on the same side, and is unknown otherwise.

// timings is a run's leadership on its two extreme timings.
type timings struct {
	// most has every belief at its longest, least at its shortest; each
	// has Beliefs, Overlaps, Gaps (explained) and Redis (stale windows).
	most, least Analysis
	// mostFaults and leastFaults are the fault spans with each fault's
	// Reach at its earliest and latest (an instant fault reaches to the
	// first stable leader): the unexplained overlaps at their most and
	// least.
	mostFaults, leastFaults []model.FaultSpan
	// surely and maybe are the stretches in which one incarnation led
	// alone on every timing (its shortest belief, everyone else's longest
	// apart) and on some timing (its longest, the others' shortest).
	surely, maybe []stretch
	// edges are when each belief of the stamps' Analysis may really have
	// begun and ended; starts and ends the same, of the beliefs that lead
	// on some timing (ends of closed ones only).
	edges        []beliefEdges
	starts, ends []edgeRange
	// dupes and staleChores bound the chore counts.
	dupes, staleChores CountRange
	// chores is the greatest Late of a chore's line.
	chores time.Duration
	ttl    time.Duration
	end    time.Duration
}

// edgeRange is when an event may really have come: [early, late].
type edgeRange struct{ early, late time.Duration }

// beliefEdges is when a belief may really have begun and ended. skip: it
// leads on no timing (no length on its stamps, nothing read late).
type beliefEdges struct {
	start, end edgeRange
	open, skip bool
}

// LateRange is what a run's figures may really have been given its agents'
// stamping lateness (Event.Late): Least and Most over every timing. The
// longest and total overlap and the longest gap and stale window are their
// values on the two extreme timings (timings); the counts are bounds that
// every timing keeps within.
type LateRange struct {
	MaxOverlap   Span `json:"max_overlap"`
	TotalOverlap Span `json:"total_overlap"`
	MaxGap       Span `json:"max_gap"`
	MaxStale     Span `json:"max_stale,omitzero"`
	// Failover and HealToStable are the range of the longest failover and
	// recovery (the metrics failover and heal_to_stable), when every
	// timing measures one: omitted otherwise.
	Failover     *Span `json:"failover,omitempty"`
	HealToStable *Span `json:"heal_to_stable,omitempty"`

	Overlaps        CountRange `json:"overlaps"`
	Gaps            CountRange `json:"gaps"`
	DuplicateChores CountRange `json:"duplicate_chores,omitzero"`
	StaleChores     CountRange `json:"stale_chores,omitzero"`
}

// Span is the least and most a duration may really have been.
type Span struct {
	Least time.Duration `json:"least"`
	Most  time.Duration `json:"most"`
}

// CountRange is the least and most a count may really have been.
type CountRange struct {
	Least int `json:"least"`
	Most  int `json:"most"`
}

// timingsOf builds the extreme timings of a's beliefs, nil when no event
// has Late (then the stamps are the timing). spans are the fault spans
// without their Reach, blocked the windows nobody could lead in.
func timingsOf(a Analysis, ev []model.Event, lates []beliefLate, spans []model.FaultSpan, blocked []model.Window) *timings {
	if !slices.ContainsFunc(ev, func(e model.Event) bool { return e.Late > 0 }) {
		return nil
	}
	x := &timings{ttl: a.Params.TTL, end: a.End}
	var longest, shortest []Belief
	var marks []time.Duration
	for i, b := range a.Beliefs {
		l := lates[i]
		e := beliefEdges{open: b.Open, skip: b.Duration == 0 && l.start == 0 && l.end == 0}
		e.start = edgeRange{b.Start - l.start, b.Start}
		// It ended no earlier than it began.
		e.end = edgeRange{max(b.End-l.end, e.start.early), b.End}
		x.edges = append(x.edges, e)
		if e.skip {
			continue // no leadership on any timing, as on the stamps
		}
		x.starts = append(x.starts, e.start)
		lb, sb := b, b
		lb.Window = NewWindow(e.start.early, b.End, b.Open)
		if !b.Open {
			end := e.end
			x.ends = append(x.ends, end)
			sb.Window = NewWindow(b.Start, max(b.Start, end.early), false)
			if sb.Duration == 0 {
				// Too short to lead on this timing, but it may have
				// ended here, after which a gap may begin.
				marks = append(marks, end.early)
			}
		}
		longest = append(longest, lb)
		shortest = append(shortest, sb)
	}
	longest = mergeSame(longest)
	x.surely, x.maybe = alone(shortest, longest), alone(longest, shortest)

	// Each fault's reach at its earliest and latest.
	p := a.Params
	x.mostFaults, x.leastFaults = slices.Clone(spans), slices.Clone(spans)
	for i, f := range spans {
		next := nextOnLeader(spans, i, a.Beliefs, nil)
		lo, hi := reachOf(f, next, nil, p, a.End, nil), reachOf(f, next, nil, p, a.End, nil)
		if f.Instant && !f.Open {
			if at, _, ok := stableAfter(x.maybe, f.Healed, p.TTL); ok {
				lo = min(lo, at)
			}
			if at, _, ok := stableAfter(x.surely, f.Healed, p.TTL); ok {
				hi = min(hi, at)
			}
		}
		x.mostFaults[i].Reach, x.leastFaults[i].Reach = lo, hi
	}

	for _, t := range []struct {
		out     *Analysis
		beliefs []Belief
		marks   []time.Duration
		faults  []model.FaultSpan
		lateAt  func(w *model.Window)
	}{
		{&x.most, longest, nil, x.mostFaults, x.lateAt(true)},
		{&x.least, shortest, marks, x.leastFaults, x.lateAt(false)},
	} {
		o := t.out
		o.Params, o.End, o.Beliefs = a.Params, a.End, t.beliefs
		o.Overlaps, o.Gaps, _, _ = sweep(t.beliefs, t.marks, a.End)
		explainGaps(o.Gaps, t.faults, blocked)
		o.Redis = redisLane(ev, t.beliefs, a.Identity.Shared, a.End)
		for i := range o.Overlaps {
			t.lateAt(&o.Overlaps[i].Window)
		}
		for i := range o.Gaps {
			t.lateAt(&o.Gaps[i].Window)
		}
		for i := range o.Redis.Stale {
			t.lateAt(&o.Redis.Stale[i].Window)
		}
	}
	x.dupes, x.chores = duplicateRange(ev, p.ChoreInterval)
	x.staleChores = staleChoreRange(ev, a.Redis)
	return x
}

// lateAt returns what sets the lateness of an extreme timing's window from
// the beliefs' ends it begins and ends at (for the "too loaded to judge"
// rule): on the longest timing (most) a belief begins at its earliest and
// ends at its stamp, on the shortest the other way round.
func (x *timings) lateAt(most bool) func(w *model.Window) {
	at := map[time.Duration]time.Duration{}
	for _, e := range x.edges {
		if e.skip {
			continue
		}
		t := e.start.late
		if most {
			t = e.start.early
		}
		at[t] = max(at[t], e.start.late-e.start.early)
		if !e.open {
			t = e.end.early
			if most {
				t = e.end.late
			}
			at[t] = max(at[t], e.end.late-e.end.early)
		}
	}
	return func(w *model.Window) {
		w.Longer, w.Shorter = at[w.Start], 0
		if !w.Open {
			w.Shorter = at[w.End]
		}
	}
}

// mergeSame joins beliefs of one incarnation that overlap or touch (on the
// longest timing a belief may begin before the same incarnation's previous
// one ended), so that it believes once at every instant.
func mergeSame(bs []Belief) []Belief {
	out := slices.Clone(bs)
	slices.SortStableFunc(out, func(x, y Belief) int { return cmp.Compare(x.Start, y.Start) })
	last := map[model.Member]int{}
	kept := out[:0]
	for _, b := range out {
		if k, ok := last[b.Member]; ok && (kept[k].Open || b.Start <= kept[k].End) {
			if !kept[k].Open && (b.Open || b.End > kept[k].End) {
				kept[k].Window = NewWindow(kept[k].Start, b.End, b.Open)
				kept[k].EndedBy = b.EndedBy
			}
			continue
		}
		last[b.Member] = len(kept)
		kept = append(kept, b)
	}
	return kept
}

// alone returns the stretches in which one incarnation believed, by its
// beliefs in own, while nobody else did, by theirs in others: with own the
// shortest timing's and others the longest's, where it led alone on every
// timing; the other way round, on some. Touching stretches of one
// incarnation are one; the stretches are in order of start.
func alone(own, others []Belief) []stretch {
	var members []model.Member
	for _, b := range own {
		if !slices.Contains(members, b.Member) {
			members = append(members, b.Member)
		}
	}
	var out []stretch
	for _, m := range members {
		var mine, rest []model.Window
		for _, b := range own {
			if b.Member == m && b.Duration > 0 {
				mine = append(mine, b.Window)
			}
		}
		for _, b := range others {
			if b.Member != m && b.Duration > 0 {
				rest = append(rest, b.Window)
			}
		}
		for _, w := range minus(union(mine), union(rest)) {
			out = append(out, stretch{Member: m, Window: w})
		}
	}
	slices.SortStableFunc(out, func(x, y stretch) int { return cmp.Compare(x.Start, y.Start) })
	return out
}

// union merges windows that overlap or touch, in order of start.
func union(ws []model.Window) []model.Window {
	ws = slices.Clone(ws)
	slices.SortFunc(ws, func(x, y model.Window) int { return cmp.Compare(x.Start, y.Start) })
	var out []model.Window
	for _, w := range ws {
		if n := len(out); n > 0 && w.Start <= out[n-1].End {
			if w.End > out[n-1].End || w.Open {
				out[n-1] = NewWindow(out[n-1].Start, max(w.End, out[n-1].End), w.Open || out[n-1].Open)
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// minus is the parts of ws (disjoint, in order) that no window of cut
// (likewise) covers.
func minus(ws, cut []model.Window) []model.Window {
	var out []model.Window
	j := 0 // the first cut that may reach into w: both lists are in order
	for _, w := range ws {
		for j < len(cut) && cut[j].End <= w.Start {
			j++
		}
		from := w.Start
		for _, c := range cut[j:] {
			if c.Start >= w.End {
				break
			}
			if c.End <= from {
				continue
			}
			if c.Start > from {
				out = append(out, NewWindow(from, c.Start, false))
			}
			from = max(from, c.End)
		}
		if from < w.End {
			out = append(out, NewWindow(from, w.End, w.Open))
		}
	}
	return out
}

// stableAfter is stableFrom for stretches that may overlap (one for each
// incarnation that may have led alone then): the first moment at or after
// t from which one of them lasts at least w.
func stableAfter(st []stretch, t, w time.Duration) (time.Duration, model.Member, bool) {
	best, found := time.Duration(0), false
	var who model.Member
	for _, s := range st {
		from := max(s.Start, t)
		if s.End-from >= w && (!found || from < best) {
			best, who, found = from, s.Member, true
		}
	}
	return best, who, found
}

// countRange bounds the number of windows of a kind on every timing,
// given the windows on the timing with the most of that kind (possible:
// every real one lies within one of them) and on the one with the least
// (certain: every real timing has them), and when the events that begin
// (rises) and end (falls) such a window may have come. A possible window
// that holds a certain one holds a real one; and it holds no more real
// ones than its certain ones plus, in each stretch of it outside them, the
// windows that both begin and end there, each at an event of its own.
func countRange(possible, certain []model.Window, rises, falls []edgeRange, end time.Duration) CountRange {
	var r CountRange
	for _, k := range possible {
		var in []model.Window
		for _, c := range certain {
			if c.Start < k.End && k.Start < c.End {
				in = append(in, c)
			}
		}
		if len(in) > 0 {
			r.Least++
		}
		r.Most += len(in)
		for _, u := range minus([]model.Window{k}, in) {
			begin, finish := 0, 0
			for _, e := range rises {
				if e.early < u.End && e.late >= u.Start {
					begin++
				}
			}
			for _, e := range falls {
				if e.late > u.Start && e.early <= u.End {
					finish++
				}
			}
			if u.Open || u.End == end {
				finish = begin // it may run into the end of the run
			}
			r.Most += min(begin, finish)
		}
	}
	return r
}

// duplicateRange bounds the duplicate chores (duplicateChores) on every
// timing of the chores' lines: a chore run and another instance's are
// apart by their stamps' distance give or take their Late. It also returns
// the greatest Late of a chore's line.
func duplicateRange(ev []model.Event, interval time.Duration) (CountRange, time.Duration) {
	type run struct {
		instance int
		at, late time.Duration
		pos      int
	}
	byChore := map[string][]run{}
	var kinds []string
	var latest time.Duration
	for i, e := range ev {
		if e.Kind != model.ChoreRan {
			continue
		}
		if _, ok := byChore[e.Chore]; !ok {
			kinds = append(kinds, e.Chore)
		}
		byChore[e.Chore] = append(byChore[e.Chore], run{e.Instance, e.At, e.Late, i})
		latest = max(latest, e.Late)
	}
	var r CountRange
	for _, k := range kinds {
		runs := byChore[k] // in order of At
		for j, e := range runs {
			// Per other instance: may one of its runs have come at most
			// interval before e (possible), or must one have (certain)?
			maybe, surely := map[int]bool{}, map[int]bool{}
			lo := sort.Search(len(runs), func(i int) bool { return runs[i].at >= e.at-e.late-interval })
			for i := lo; i < len(runs) && runs[i].at <= e.at+latest; i++ {
				p := runs[i]
				if i == j || p.instance == e.instance {
					continue
				}
				// e came after p by d ∈ [least, most].
				least, most := e.at-e.late-p.at, e.at-p.at+p.late
				before := func(d time.Duration) bool { return d > 0 || (d == 0 && p.pos < e.pos) }
				if before(most) && least < interval {
					maybe[p.instance] = true
				}
				if before(least) && most < interval {
					surely[p.instance] = true
				}
			}
			r.Least += len(surely)
			r.Most += len(maybe)
		}
	}
	return r, latest
}

// staleChoreRange bounds the stale chores (choreFences) on every timing of
// the chores' lines: a line read Late late says its writes landed up to
// Late earlier than its stamp says.
func staleChoreRange(ev []model.Event, lane RedisLane) CountRange {
	var r CountRange
	if !lane.Observed || len(lane.Holders) == 0 {
		return r
	}
	first := lane.Holders[0].Start
	for _, e := range ev {
		if e.Kind != model.ChoreRan || e.ID == "" {
			continue
		}
		// Stale at a moment t of the line if the lane saw the key then
		// (t ≥ first - TruthResolution) and no holding of its own came
		// within [t - Took - TruthResolution, t + TruthResolution]: own
		// holdings rule out the moments [Start - TR, End + Took + TR).
		from, to := max(e.At-e.Late, first-TruthResolution), e.At
		var own []model.Window
		for _, h := range lane.Holders {
			if h.Holder == e.ID || h.Unannounced {
				own = append(own, NewWindow(h.Start-TruthResolution, h.End+e.Took+TruthResolution, false))
			}
		}
		own = union(own)
		surely := from == e.At-e.Late && from <= to
		maybe := false
		cursor := from
		for _, w := range own {
			if w.End <= from || w.Start > to {
				continue
			}
			surely = false
			if w.Start > cursor {
				maybe = true
			}
			cursor = max(cursor, w.End)
		}
		if cursor <= to {
			maybe = true
		}
		if from > to {
			maybe, surely = false, false
		}
		if maybe {
			r.Most++
		}
		if surely {
			r.Least++
		}
	}
	return r
}

// failoverRange is the failover metric (Measure) at its least and most:
// over the faults that demoted a leader they hit, injection to the first
// stable leader after the last demotion. A fault whose hit leaders may or
// may not have led at its injection, or kept believing through its reach,
// depending on the timing, counts only at the most, as not measured.
func (x *timings) failoverRange(a Analysis) (least, most model.Measurement) {
	hit := [2]int{}
	for fi, f := range a.Faults {
		lo, hi := x.mostFaults[fi].Reach, x.leastFaults[fi].Reach
		ambiguous, demoted, kept := false, false, false
		var last edgeRange
		for i, b := range a.Beliefs {
			be := x.edges[i]
			if !f.Hits(b.Instance) || be.skip {
				continue
			}
			e := be.end
			if b.Open {
				e = edgeRange{a.End, a.End}
			}
			// Led at its injection (outcome's LeadersAtInjection) on every
			// timing, or on none.
			in := b.Start < f.Applied && e.early >= f.Applied && b.Duration > 0
			out := be.start.early >= f.Applied || (!b.Open && b.End < f.Applied)
			switch {
			case !in && !out:
				ambiguous = true
			case in && (b.Open || e.early > hi):
				kept = true // believed through the fault's reach on every timing
			case in && !b.Open && b.End <= lo:
				demoted = true
				last = edgeRange{max(last.early, e.early), max(last.late, e.late)}
			case in:
				ambiguous = true
			}
		}
		if ambiguous {
			hit[1]++
			if most.Missing == "" {
				most.Missing = fmt.Sprintf("fault %d (%s): the stamping lateness leaves open whether it demoted a leader it hit", f.ID, f.Kind)
			}
			continue
		}
		if kept || !demoted || f.Demotion == nil {
			continue
		}
		hit[0]++
		hit[1]++
		for _, side := range []struct {
			m      *model.Measurement
			st     []stretch
			demote time.Duration
		}{{&least, x.maybe, last.early}, {&most, x.surely, last.late}} {
			if side.m.Missing != "" {
				continue
			}
			at, _, ok := stableAfter(side.st, side.demote, x.ttl)
			if !ok {
				side.m.Missing = fmt.Sprintf("fault %d (%s): %s", f.ID, f.Kind, "no stable leader before the run ended")
				continue
			}
			side.m.Value = max(side.m.Value, at-f.Applied)
		}
	}
	for i, m := range []*model.Measurement{&least, &most} {
		if hit[i] == 0 && m.Missing == "" {
			m.Unknown = "no fault demoted a leader: there was no failover to time"
		}
	}
	return least, most
}

// healRange is the heal_to_stable metric at its least and most.
func (x *timings) healRange(a Analysis) (least, most model.Measurement) {
	healed := 0
	for _, f := range a.Faults {
		if f.Open {
			continue
		}
		healed++
		for _, side := range []struct {
			m  *model.Measurement
			st []stretch
		}{{&least, x.maybe}, {&most, x.surely}} {
			if side.m.Missing != "" {
				continue
			}
			at, _, ok := stableAfter(side.st, f.Healed, x.ttl)
			if !ok {
				side.m.Missing = fmt.Sprintf("fault %d (%s): no stable leader after its heal before the run ended", f.ID, f.Kind)
				continue
			}
			side.m.Value = max(side.m.Value, at-f.Healed)
		}
	}
	if healed == 0 {
		least.Missing, most.Missing = "no fault was healed", "no fault was healed"
	}
	return least, most
}

// measures is a duration metric at its least and most over every timing,
// and whether the timing bears on it.
func (x *timings) measures(metric model.Metric, a Analysis) (least, most model.Measurement, ok bool) {
	switch metric {
	case model.MetricMaxOverlap, model.MetricTotalOverlap, model.MetricStaleLeadership:
		return Measure(metric, x.least), Measure(metric, x.most), true
	case model.MetricMaxGap:
		return Measure(metric, x.most), Measure(metric, x.least), true
	case model.MetricFailover:
		least, most = x.failoverRange(a)
		return least, most, true
	case model.MetricHealToStable:
		least, most = x.healRange(a)
		return least, most, true
	}
	return model.Measurement{}, model.Measurement{}, false
}

// counts is a count metric's range over every timing, and whether the
// timing bears on it.
func (x *timings) counts(metric model.Metric) (CountRange, bool) {
	switch metric {
	case model.MetricOverlapWindows:
		return countRange(windowsOf(x.most.Overlaps), windowsOf(x.least.Overlaps), x.starts, x.ends, x.end), true
	case model.MetricGaps:
		return countRange(windowsOf(x.least.Gaps), windowsOf(x.most.Gaps), x.ends, x.starts, x.end), true
	case model.MetricDuplicateChores:
		return x.dupes, true
	case model.MetricStaleChores:
		return x.staleChores, true
	}
	return CountRange{}, false
}

// windowsOf returns the windows of overlaps or gaps.
func windowsOf[T interface{ Overlap | Gap }](xs []T) []model.Window {
	out := make([]model.Window, 0, len(xs))
	for _, x := range xs {
		switch v := any(x).(type) {
		case Overlap:
			out = append(out, v.Window)
		case Gap:
			out = append(out, v.Window)
		}
	}
	return out
}

// tooLate says whether a check of metric is judged on lateness past what a
// run can be measured with (MaxStampUncertainty): one of the metric's
// windows, on the stamps or on either extreme timing, has an end read that
// late (a chore's line, for the chore counts).
func (x *timings) tooLate(metric model.Metric, a Analysis) bool {
	switch metric {
	case model.MetricDuplicateChores, model.MetricStaleChores:
		return x.chores > MaxStampUncertainty
	case model.MetricOverlapWindows:
		metric = model.MetricMaxOverlap
	case model.MetricGaps:
		metric = model.MetricMaxGap
	}
	for _, an := range []Analysis{a, x.most, x.least} {
		if ws, ok := metricWindows(metric, an); ok && tooLate(ws) {
			return true
		}
	}
	return false
}

// ranges is a's LateRange.
func (x *timings) ranges(a *Analysis) *LateRange {
	r := &LateRange{}
	span := func(metric model.Metric) Span {
		lo, hi, _ := x.measures(metric, *a)
		return Span{lo.Value, hi.Value}
	}
	r.MaxOverlap, r.TotalOverlap, r.MaxGap = span(model.MetricMaxOverlap), span(model.MetricTotalOverlap), span(model.MetricMaxGap)
	if a.Redis.Observed {
		r.MaxStale = span(model.MetricStaleLeadership)
	}
	for _, m := range []struct {
		metric model.Metric
		to     **Span
	}{{model.MetricFailover, &r.Failover}, {model.MetricHealToStable, &r.HealToStable}} {
		lo, hi, _ := x.measures(m.metric, *a)
		if lo.Missing == "" && hi.Missing == "" && lo.Unknown == "" && hi.Unknown == "" {
			*m.to = &Span{lo.Value, hi.Value}
		}
	}
	r.Overlaps, _ = x.counts(model.MetricOverlapWindows)
	r.Gaps, _ = x.counts(model.MetricGaps)
	r.DuplicateChores, r.StaleChores = x.dupes, x.staleChores
	return r
}

// claimVerdict judges a claim that the longest of a kind of window is
// within bound + slack over every timing, as a check is: not held only if
// some window is over it on the timing with the least of them (best), held
// only if every window is within it on the one with the most (worst), and
// not held or unknown if one of the windows, on the stamps (measured) or on
// either timing, has an end read more than MaxStampUncertainty late.
func (x *timings) claimVerdict(measured, best, worst []model.Window, bound, slack time.Duration) ClaimVerdict {
	if bound == model.Unbounded || bound > model.Unbounded-slack {
		return Held
	}
	limit := bound + slack
	if slices.ContainsFunc(best, func(w model.Window) bool { return w.Duration > limit }) {
		return NotHeld
	}
	if slices.ContainsFunc(worst, func(w model.Window) bool { return w.Duration > limit }) ||
		tooLate(measured) || tooLate(best) || tooLate(worst) {
		return ClaimUnknown
	}
	return Held
}

// judge judges c over every timing of the agents' lines: pass only if it
// passes on the timings that make its metric least and most, fail only if
// it fails on both on the same side (under the min on both, or over the
// max), unknown otherwise, with the range in its detail; and, unless it
// fails, unknown if the metric's windows have an end read more than
// MaxStampUncertainty late. A window still open at the end of the run
// fails a max by policy, as on the stamps. It returns false for a metric
// the timing does not bear on (a count of tasks), which keeps its verdict.
func (x *timings) judge(c *model.Check, a Analysis) bool {
	var lo, hi model.Judged
	var least, most string
	if c.Count {
		r, ok := x.counts(c.Metric)
		if !ok {
			return false
		}
		r.Least, r.Most = min(r.Least, c.MeasuredCount), max(r.Most, c.MeasuredCount)
		lo, hi = c.AtCount(r.Least), c.AtCount(r.Most)
		least, most = strconv.Itoa(r.Least), strconv.Itoa(r.Most)
	} else {
		l, m, ok := x.measures(c.Metric, a)
		if !ok {
			return false
		}
		lo, hi = c.At(l), c.At(m)
		least, most = l.String(), m.String()
	}
	if (!c.HasMax && !c.HasMin) || (c.Count && c.NotMeasured) || (c.HasMax && c.Open) || (c.Verdict != model.Fail && c.Verdict != model.Pass) {
		return true // nothing to judge, or decided whatever the timing
	}
	var msg string
	switch {
	case lo.V == model.Fail && hi.V == model.Fail && lo.Under == hi.Under:
		c.Verdict = model.Fail
	case lo.V == model.Pass && hi.V == model.Pass:
		c.Verdict = model.Pass
	default:
		c.Verdict = model.Unknown
		msg = fmt.Sprintf("the stamping lateness of agents' lines leaves it anywhere from %s to %s", least, most)
	}
	if c.Verdict != model.Fail && x.tooLate(c.Metric, a) {
		c.Verdict, msg = model.Unknown, fmt.Sprintf("stamping lateness over %v at one of its windows' ends: the run was too loaded to judge", MaxStampUncertainty)
	}
	if c.Verdict == model.Unknown {
		if c.Detail == "" {
			c.Detail = msg
		} else {
			c.Detail += "; " + msg
		}
	}
	return true
}

// unexplainedLeast and unexplainedMost bound the overlaps away from any
// fault (the no-faultless-split claim) on every timing. Not the overlaps of
// the two timings: a longer overlap may touch a fault a shorter one did
// not, and so be explained. An overlap is away from every fault on every
// timing if the most it could have been (a window of the longest timing)
// touches no fault even at its latest reach: then it is at least its part
// certain on every timing (the shortest timing's windows within it). And
// on any timing an overlap away from every fault lies in a window of the
// longest timing, outside every fault's span at its earliest reach: at
// most the longest such part.
func (x *timings) unexplainedLeast() []model.Window {
	var out []model.Window
	least := windowsOf(x.least.Overlaps)
	for _, k := range windowsOf(x.most.Overlaps) {
		if slices.ContainsFunc(x.leastFaults, func(f model.FaultSpan) bool { return f.Touches(k) }) {
			continue
		}
		for _, c := range least {
			if c.Start < k.End && k.Start < c.End {
				out = append(out, c)
			}
		}
	}
	return out
}

func (x *timings) unexplainedMost() []model.Window {
	var spans []model.Window
	for _, f := range x.mostFaults {
		if f.Reach > f.Applied {
			spans = append(spans, NewWindow(f.Applied, f.Reach, false))
		}
	}
	spans = union(spans)
	var out []model.Window
	for _, k := range windowsOf(x.most.Overlaps) {
		// Touching is sharing time with [Applied, Reach): a window that
		// ends at a span's start, or begins at its end, touches nothing.
		for _, w := range minus([]model.Window{k}, spans) {
			out = append(out, w)
		}
	}
	return out
}
