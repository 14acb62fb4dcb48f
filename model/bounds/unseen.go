package bounds

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"fmt"
	"slices"
	"strings"
	"time"
)

// UnseenAcquire is what one acquire that reached Redis without its instance
// ever learning it won adds to the gap and failover bounds of a leader's
// fault in force with it: a follower crashed between its SET NX's landing
// and the reply, or cut off by a partition that let the SET NX through (a
// replies-dropped partition's warm connection, or any partition a hop after
// the send). The key it set lives a TTL that nobody renews, and nobody
// believes meanwhile.
//
// The bound without it rests on one healthy follower X whose attempt would
// have won: the unseen acquire landed before that attempt (it found the key
// free first) and its key outlives it. X tries every Wait after each
// reply, so a key of TTL blocks at most ceil(TTL/Wait) of its attempts, and
// the gap ends at most ceil(TTL/Wait) × (Wait + hop) later: 6.001 s with
// the defaults, less than the TTL + Wait of waiting the key out (the next
// attempt after its expiry comes within a Wait of the attempt it blocked).
// The keys of several such acquires (each finds the previous one's expired)
// add up, and so do their terms.
func UnseenAcquire(p model.Params) (extra time.Duration, formula string) {
	p = p.WithDefaults()
	n := (p.TTL + p.Wait - 1) / p.Wait
	extra = time.Duration(n) * (p.Wait + hop)
	return extra, fmt.Sprintf("ceil(TTL/Wait) × (Wait + hop) = %d × (%v + %v) = %v", n, p.Wait, hop, extra)
}

// unseenFault is a crash or partition of instances that were not leading,
// in force with a leader's fault, and how many unseen acquires it can leave
// (UnseenAcquire): phantomsPerFollower for each follower it hit (-1: no
// bound). A crashed follower sends
// nothing more; a partitioned one lets at most its warm connection's first
// SET NX through (the call's retries and later attempts dial anew, and the
// handshake's reply is dropped or refused first).
type unseenFault struct {
	fault model.FaultOutcome
	n     int
	// with are the IDs of the faults a bound is taken for that it was in
	// force with: their failovers wait for its keys too.
	with []int
}

// unseenFaults are the crashes and partitions of followers that can leave
// an unseen acquire in a gap a bound is taken for: a partition in force
// while that fault reaches (overlapsInTime), a crash applied from its
// injection on (a follower that died before it held no key and sends
// nothing), either applied before the first stable leader after it took
// over (once one holds the key, a SET NX finds it taken, and a
// partitioned follower's one warm connection is spent on that). Each such
// acquire lengthens the gap by UnseenAcquire, so a later one still counts
// if it comes within the reach plus the terms counted before it.
func unseenFaults(sc model.Scenario, a analysis.Analysis) []unseenFault {
	used := BoundFaults(a)
	if len(used) == 0 {
		return nil
	}
	extra, _ := UnseenAcquire(sc.Params)
	cands := slices.Clone(a.Faults)
	slices.SortStableFunc(cands, func(x, y model.FaultOutcome) int { return int(x.Applied - y.Applied) })
	var out []unseenFault
	counted := 0
	for _, g := range cands {
		k := model.KindSpecOf(model.FaultKind(g.Kind))
		if k.Phantoms == nil {
			continue
		}
		n := 0
		for _, i := range g.Target {
			if !slices.ContainsFunc(g.LeadersAtInjection, func(m model.Member) bool { return m.Instance == i }) {
				n++
			}
		}
		each := phantomsPerFollower(sc, g)
		if n == 0 || each == 0 {
			continue
		}
		if each < 0 {
			n = -1
		} else {
			n *= each
		}
		slack := model.Unbounded
		if counted >= 0 {
			slack = time.Duration(counted) * extra
		}
		var with []int
		for _, f := range used {
			reached := f
			reached.Reach = min(addBound(reached.Reach, slack), a.End)
			stable := model.Unbounded
			if f.Failover != nil {
				stable = f.Applied + *f.Failover
			}
			switch {
			case f.ID == g.ID, g.Applied >= stable:
			case k.PhantomAtInjection && g.Applied+heldRequest(sc, a, g) >= f.Applied && g.Applied <= reached.Reach,
				!k.PhantomAtInjection && overlapsInTime(sc, g, reached, a.End):
				with = append(with, f.ID)
			}
		}
		if len(with) == 0 {
			continue
		}
		out = append(out, unseenFault{g, n, with})
		if n < 0 || counted < 0 {
			counted = -1
		} else {
			counted += n
		}
	}
	return out
}

// phantomsPerFollower is how many unseen acquires one follower a crash or
// partition hit can leave: one (the SET NX already on the wire, or a
// replies-dropped partition's warm connection), except that with a shared
// pool (the runner's client) a replies-dropped partition lets every idle
// pooled connection carry a later attempt or retry to Redis (predictReplies):
// one per TTL while it lasts (each finds the previous one's key expired),
// ceil(partition/TTL) + 1, -1 (no bound) for a partition that never healed.
// A latency's count is latencyPhantoms's. Each kind's phantoms hook says.
func phantomsPerFollower(sc model.Scenario, g model.FaultOutcome) int {
	p := sc.Params.WithDefaults()
	span := g.Healed - g.Applied
	perTTL := func(extra time.Duration) int {
		if g.Open {
			return -1
		}
		return int((span+extra+p.TTL-1)/p.TTL) + 1
	}
	if phantoms := model.KindSpecOf(model.FaultKind(g.Kind)).Phantoms; phantoms != nil {
		return phantoms(p, model.FaultOf(sc, g.ID), g, perTTL)
	}
	return 1
}

// unseenTerm is the gap term of the unseen acquires (UnseenAcquire each),
// with its formula.
func unseenTerm(p model.Params, us []unseenFault) (time.Duration, string) {
	extra, f := UnseenAcquire(p)
	var total time.Duration
	var ids []string
	for _, u := range us {
		if u.n < 0 {
			total = model.Unbounded
		} else if total != model.Unbounded {
			total += time.Duration(u.n) * extra
		}
		ids = append(ids, fmt.Sprintf("fault %d (%s, %d)", u.fault.ID, u.fault.Kind, u.n))
	}
	return total, fmt.Sprintf("a follower crashed or cut off mid-acquire holds the key unbelieved for a TTL (%v): + %s each = %v", strings.Join(ids, ", "), f, total)
}

// heldRequest is the longest request latency in force on crash g's targets
// when it was applied: Toxiproxy forwards a request already in its latency
// toxic after the client closed, so a follower crashed that long before a
// leader's fault can still land its SET NX on the free key (4.9 s request
// latency, the follower crashed 0.2 s before the leader: real gap and
// failover 14.513 s of 11.25 s and 11.256 s).
func heldRequest(sc model.Scenario, a analysis.Analysis, g model.FaultOutcome) time.Duration {
	var d time.Duration
	for _, f := range a.Faults {
		held := model.KindSpecOf(model.FaultKind(f.Kind)).HoldsRequests
		if held == nil || f.ID < 0 || f.ID >= len(sc.Faults) || f.Applied > g.Applied || (!f.Open && f.Healed < g.Applied) || !model.SharesTarget(f, g) {
			continue
		}
		d = max(d, held(sc.Faults[f.ID]))
	}
	return d
}
