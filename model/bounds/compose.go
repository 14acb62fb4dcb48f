package bounds

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"fmt"
	"slices"
	"strings"
	"time"
)

// DefaultSlack is added to "predicted" limits for measurement error. It
// does not shrink with the time scale: scheduling delay, notification
// lateness and loopback round trips do not either.
const DefaultSlack = 250 * time.Millisecond

// PredictedLimit is the prediction for the metric over the failure modes
// of the faults the run actually applied (a skipped fault predicts
// nothing): the largest predicted gap (for gaps, failover and recovery
// times) or overlap (for overlaps and stale leadership). A failover also
// always takes up to TTL + Wait + jitter (the followers must see the key
// gone, then reach their next tick), so that is its floor.
//
// formula is the derivation of the term that gave the bound (Check.Formula).
// broken, when not empty, names a precondition of the bounds that the run
// broke (Preconditions): the check is then unknown, neither pass nor fail.
func PredictedLimit(metric model.Metric, sc model.Scenario, a analysis.Analysis, preds []Prediction) (bound time.Duration, how, formula, broken string) {
	modes := map[string]bool{}
	for _, f := range BoundFaults(a) {
		modes[f.Mode] = true
	}
	overlap := metric == model.MetricMaxOverlap || metric == model.MetricTotalOverlap || metric == model.MetricStaleLeadership
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
		if metric == model.MetricStaleLeadership && p.MaxStale > v {
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
	for _, modes := range together(sc, BoundFaults(a), overlap) {
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
	if !overlap && metric != model.MetricFailover && len(stopped) > 0 {
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
	if !overlap && metric != model.MetricFailover && len(unseen) > 0 {
		e, f := unseenTerm(sc.Params, unseen)
		bound = addBound(bound, e)
		how += "; chained: " + f
		formula += "; chained: " + f
	}
	if metric == model.MetricMaxOverlap {
		if d, f := chainedOverlap(sc, a, preds); d > bound {
			bound, how, formula = d, f, f
		}
	}
	if metric == model.MetricFailover {
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
		fs := BoundFaults(a)
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
			if slices.Contains(ms, model.ModeLatency) || slices.Contains(ms, model.ModeClockDrift) {
				// Latency or a slow clock with another delay may let any
				// renewal while they last be the one that lapses: the key
				// lasts up to the group's last heal + L + TTL.
				var healed time.Duration
				for _, k := range g {
					if fs[k].Open {
						healed = model.Unbounded
						break
					}
					healed = max(healed, fs[k].Healed)
				}
				for _, i := range g {
					v := model.Unbounded
					if healed != model.Unbounded && o != model.Unbounded {
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
			if o == model.Unbounded {
				delta = model.Unbounded
			}
			for _, i := range g {
				for _, m := range g {
					if at[m] < at[i] {
						continue
					}
					v := model.Unbounded
					if delta != model.Unbounded && b[m] != model.Unbounded {
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
				formula = fmt.Sprintf("%d faults chained (bounds.FailoverChain): %s = %s", len(at), strings.TrimPrefix(how, "predicted for "), BoundText(d))
			}
		}
	}
	if metric == model.MetricHealToStable || (metric == model.MetricFailover && bound == 0) {
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
	fault model.FaultOutcome
	stop  time.Duration
}

// stoppedFollowers are the pauses and suspends that stopped an instance
// not leading at their injection while a fault a bound is taken for (another
// one) was in force or could still reach: that follower's acquire may have
// landed just before, and it holds the key unbelieved while stopped.
func stoppedFollowers(sc model.Scenario, a analysis.Analysis) []stoppedFollower {
	used := BoundFaults(a)
	var out []stoppedFollower
	for _, g := range a.Faults {
		if !model.KindSpecOf(model.FaultKind(g.Kind)).Stops {
			continue
		}
		follower := slices.ContainsFunc(g.Target, func(i int) bool {
			return !slices.ContainsFunc(g.LeadersAtInjection, func(m model.Member) bool { return m.Instance == i })
		})
		if !follower || !slices.ContainsFunc(used, func(f model.FaultOutcome) bool { return f.ID != g.ID && overlapsInTime(sc, g, f, a.End) }) {
			continue
		}
		stop := g.Healed - g.Applied
		if g.Open {
			stop = model.Unbounded
		}
		out = append(out, stoppedFollower{g, stop})
	}
	return out
}

// addBound adds two bounds, Unbounded absorbing.
func addBound(a, b time.Duration) time.Duration {
	if a == model.Unbounded || b == model.Unbounded {
		return model.Unbounded
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
func together(sc model.Scenario, fs []model.FaultOutcome, sameInstance bool) [][]string {
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
func chainedOverlap(sc model.Scenario, a analysis.Analysis, preds []Prediction) (time.Duration, string) {
	per := map[string]time.Duration{}
	for _, p := range preds {
		per[p.Mode] = p.MaxOverlap
	}
	fs := BoundFaults(a)
	size := AppliedFaultSize(sc, a)
	var best time.Duration
	how := ""
	for _, g := range togetherGroups(sc, fs, false) {
		// Split the group by instance: faults that share a target compose.
		var roots [][]string
		for _, sub := range connected(len(g), func(x, y int) bool { return model.SharesTarget(fs[g[x]], fs[g[y]]) }) {
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
			if total == model.Unbounded || v == model.Unbounded {
				total = model.Unbounded
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
func togetherGroups(sc model.Scenario, fs []model.FaultOutcome, sameInstance bool) [][]int {
	// A renewal a fault delayed, or a call it slowed, can still be going
	// a renewal interval plus the longest call after its heal.
	renew := max(sc.Params.TTL, sc.Params.TTL/2+sc.Params.Jitter()) + longestCall(sc.Params) + longestLatencyCall(sc)
	var out [][]int
	for _, m := range connected(len(fs), func(i, j int) bool {
		f, g := fs[i], fs[j]
		return (!sameInstance || model.SharesTarget(f, g)) && g.Applied <= f.Healed+renew && f.Applied <= g.Healed+renew
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

// BoundFaults are the applied faults a prediction is taken for: those with
// a failure mode that acted on Redis or hit a leader, or slowed a follower
// that then won while it lasted (slowWinner: taken as applied at that
// win), or stopped one that won at its resume (winsAtResume: a leader's
// pause). A fault that hit only followers otherwise is no leader's failure,
// and the leader's bound says nothing about it.
func BoundFaults(a analysis.Analysis) []model.FaultOutcome {
	var out []model.FaultOutcome
	for _, f := range splitByLeading(a.Faults) {
		if f.Mode == "" {
			continue
		}
		if !model.FaultKind(f.Kind).OnRedis() && !f.LeaderHit {
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
func splitByLeading(fs []model.FaultOutcome) []model.FaultOutcome {
	var out []model.FaultOutcome
	for _, f := range fs {
		var lead, rest []int
		for _, t := range f.Target {
			if slices.ContainsFunc(f.LeadersAtInjection, func(m model.Member) bool { return m.Instance == t }) {
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
//
// It is the target's first belief since the stop, told by two signs. The
// time: it came by a hop (and the harness's stamping) after the heal,
// sooner than a clean win's round trip. Or, stamped later (a loaded
// machine runs the resumed process late), the Redis lane's: the key took
// the follower's value before the heal and not again before its belief (no
// clean win after the resume set it), for a belief stamped within
// laneStampSlack of the heal.
func winsAtResume(f model.FaultOutcome, a analysis.Analysis) bool {
	if !model.KindSpecOf(model.FaultKind(f.Kind)).Stops || f.Open {
		return false
	}
	for _, b := range a.Beliefs {
		if b.Start <= f.Applied || !slices.Contains(f.Target, b.Instance) {
			continue
		}
		// The first belief of a target since the stop. A stopped
		// instance does nothing, so it came at the resume: possibly
		// stamped before the heal, which the harness records once the
		// resume has returned (CI: the resumed follower believed first,
		// and a rule that began at the heal judged its 2.511 s stale
		// against the crash's 0.755 s).
		if b.Start <= f.Healed+hop+winnerStampSlack {
			return true
		}
		if b.Start > f.Healed+hop+laneStampSlack(a) {
			return false
		}
		landed, ok := lastLanding(a.Redis.Holders, b)
		return ok && landed < f.Healed
	}
	return false
}

// lastLanding is when the key last took b's value at or before b began,
// as the Redis lane saw it: the landing of the SET NX whose reply b read
// (false: no lane, or never).
func lastLanding(hs []analysis.Holding, b analysis.Belief) (time.Duration, bool) {
	last, ok := time.Duration(0), false
	for _, h := range hs {
		if h.Start > b.Start {
			break // holdings are in order of start
		}
		if h.Holder == b.ID && h.Instance == b.Instance && !h.Shared {
			last, ok = h.Start, true
		}
	}
	return last, ok
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
func Preconditions(sc model.Scenario, a analysis.Analysis, forGap bool) []string {
	var broken []string
	if n := sc.WithDefaults().Instances; n < 2 {
		broken = append(broken, fmt.Sprintf("%d instance: the bounds assume at least two, so that a follower can take over", n))
	}
	used := BoundFaults(a)
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
		if model.FaultKind(f.Kind).OnRedis() {
			for _, m := range f.LeadersAtInjection {
				hit[m.Instance] = true
			}
		}
		for _, g := range a.Faults {
			if model.FaultKind(g.Kind).OnRedis() || !overlapsInTime(sc, g, f, a.End) {
				continue
			}
			if spares := model.KindSpecOf(model.FaultKind(g.Kind)).SparesTakeover; spares != nil && spares(model.FaultOf(sc, g.ID)) {
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
func overlapsInTime(sc model.Scenario, g, f model.FaultOutcome, runEnd time.Duration) bool {
	end := g.Healed
	switch {
	case model.KindSpecOf(model.FaultKind(g.Kind)).Downs:
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
func coldRenewals(sc model.Scenario, a analysis.Analysis) (cold, afterLate bool) {
	renew := a.Params.TTL/2 + a.Params.Jitter()
	var empties []time.Duration // when the renew script was not cached
	if len(a.Beliefs) > 0 {
		empties = append(empties, a.Beliefs[0].Start)
	}
	for _, f := range a.Faults {
		if model.KindSpecOf(model.FaultKind(f.Kind)).EmptiesScripts {
			empties = append(empties, f.Applied)
		}
	}
	for _, f := range a.Faults {
		// A renewal's NOSCRIPT is late under latency, lost under a
		// replies-dropped partition (which then extends nothing).
		if slow := model.KindSpecOf(model.FaultKind(f.Kind)).SlowsReplies; slow == nil || !slow(model.FaultOf(sc, f.ID)) {
			continue
		}
		for _, e := range empties {
			// The first renewal after e is sent within a renewal interval
			// of the promotion of the first leader that lived to send it;
			// the latency must be in force by then.
			promoted := firstRenewer(sc, a, e, renew)
			if promoted == model.Unbounded {
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
func firstRenewer(sc model.Scenario, a analysis.Analysis, e, renew time.Duration) time.Duration {
	call := longestCall(a.Params) + longestLatencyCall(sc)
	last := model.Unbounded
	for _, b := range a.Beliefs {
		p := max(b.Start, e)
		if !b.Open && b.End <= p+renew {
			continue
		}
		hit := slices.ContainsFunc(a.Faults, func(f model.FaultOutcome) bool {
			if !slices.Contains(f.Target, b.Instance) && (len(f.Target) > 0 || !model.KindSpecOf(model.FaultKind(f.Kind)).HitsAllUntargeted) {
				return false
			}
			end := f.Healed
			if f.Open || model.KindSpecOf(model.FaultKind(f.Kind)).Downs {
				end = max(end, f.Applied)
			}
			if f.Open {
				end = model.Unbounded
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

// longestLatencyCall is the longest call any latency fault of sc can
// make, every round trip just inside the attempt timeout.
func longestLatencyCall(sc model.Scenario) time.Duration {
	if !slices.ContainsFunc(sc.Faults, func(f model.Fault) bool { return model.KindSpecOf(f.Kind).StretchesCalls }) {
		return 0
	}
	d, _ := latencyCall(sc.Params, model.Unbounded, 0)
	if d == model.Unbounded {
		return 0
	}
	return d
}

// longestCall is the longest failing call of any partition mode.
func longestCall(p model.Params) time.Duration {
	var d time.Duration
	for _, m := range []string{model.ModePartitionBlackhole, model.ModePartitionRefuse, model.ModePartitionReset} {
		if c := CallBound(p, m); c != model.Unbounded {
			d = max(d, c)
		}
	}
	return d
}

// AppliedFaultSize is the size of the faults the run actually applied, as
// the predictions should assume it: the largest latency (plus its jitter),
// the longest pause as it lasted (pauses of one instance less than a
// renewal interval apart add up: the frozen clock counts neither, so one
// renewal is late by both), the slowest clock rate, Redis's downtime in a
// restart, the longest replies-dropped partition (Unbounded if it never
// healed), the shortest blackhole and the number of refusals. sc is the effective
// scenario the fault IDs index.
func AppliedFaultSize(sc model.Scenario, a analysis.Analysis) model.FaultSize {
	var s model.FaultSize
	// Pauses of one instance add up while no renewal succeeds between them:
	// within a renewal interval, or a safe-mode guard period, plus the
	// longest failing call, since a call that hangs between two pauses
	// keeps the belief (and the guard's count) going.
	window := max(a.Params.TTL, a.Params.TTL/2+a.Params.Jitter()) + longestCall(a.Params)
	z := &model.Sizing{Size: &s, Scenario: sc, Faults: a.Faults, Stopped: map[int][]model.StopSpan{}}
	for _, f := range a.Faults {
		if f.ID < 0 || f.ID >= len(sc.Faults) {
			continue
		}
		if size := model.KindSpecOf(model.FaultKind(f.Kind)).Size; size != nil {
			size(z, f, sc.Faults[f.ID])
		}
	}
	s.ColdRenewal, s.ColdAfterLateReply = coldRenewals(sc, a)
	for _, ps := range z.Stopped {
		slices.SortFunc(ps, func(x, y model.StopSpan) int { return int(x.From - y.From) })
		var run time.Duration
		for i, p := range ps {
			if i > 0 && p.From-ps[i-1].To >= window {
				run = 0
			}
			run += p.To - p.From
			s.Pause = max(s.Pause, run)
			if !p.Leader {
				continue // a follower's: StoppedAcquire chains it
			}
			if d := p.To - p.From; d > 0 && (s.PauseMin == 0 || d < s.PauseMin) {
				s.PauseMin = d
			}
			for _, d := range []time.Duration{p.To - p.From, run} {
				if d > 0 && d <= a.Params.TTL {
					s.PauseShortMax = max(s.PauseShortMax, d)
				}
			}
		}
	}
	return s
}
