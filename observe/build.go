package observe

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/publish"
	"github.com/leaselab/leaselab/reports"
)

// AssumedRateError is how far an instance's monotonic clock is taken to run
// off Redis's: 500 ppm, five times a common crystal's tolerance. It widens
// a transition's placement by the time between it and the write that
// places it.
const AssumedRateError = 500e-6

// noteLost is the widened placement from which Build notes it.
const noteLost = 50 * time.Millisecond

// Limits turn a watch into a check: a window longer than a limit fails it.
// nil means no limit; a limit of 0 allows no window at all.
type Limits struct {
	MaxOverlap, MaxGap, MaxStale *time.Duration
}

// placed is an entry placed on Redis's clock.
type placed struct {
	publish.Entry
	at  time.Time
	u   time.Duration
	rtt time.Duration // the round trip taken for its write
	// lost is how much time the instance's monotonic clock may have lost
	// before this transition, when that widened its placement (0 if not).
	lost time.Duration
}

// Build turns a recording into a Result, the same a harness run produces,
// with the observation's description in Result.Observed and the limits as
// expectations. It is pure: the same recording gives the same result.
func Build(rec *Recording, lim Limits) (*model.Result, error) {
	h := rec.Header
	if h.Start.IsZero() {
		return nil, fmt.Errorf("observe: the recording's header has no start time")
	}
	end := rec.End
	if end.IsZero() {
		end = h.Start
		for _, hc := range rec.Holders {
			end = maxTime(end, hc.At)
		}
		for _, e := range rec.Entries {
			end = maxTime(end, e.Redis)
		}
	}
	obs := &model.Observed{Group: h.Group, Key: h.Key, Stream: h.Stream, Source: h.Source, Lane: h.Lane,
		Resolution: h.Resolution, Start: h.Start, RTT: h.RTT}
	if h.LaneNote != "" {
		obs.Notes = append(obs.Notes, h.LaneNote)
	}
	perPub := dedupe(rec.Entries)
	pl := place(perPub, h.RTT)

	// Instances, in order of their first transition.
	slices.SortStableFunc(pl, func(a, b placed) int { return a.at.Compare(b.at) })
	index := map[string]int{}
	for _, p := range pl {
		if _, ok := index[p.Instance]; !ok {
			index[p.Instance] = len(index)
		}
	}
	off := func(t time.Time) time.Duration { return t.Sub(h.Start) }

	var tl model.Timeline
	firstHolder, haveHolder := "", false
	for _, hc := range rec.Holders {
		if !hc.At.After(h.Start) {
			firstHolder, haveHolder = hc.Holder, true
		}
	}
	if !haveHolder && len(rec.Holders) > 0 {
		firstHolder = rec.Holders[0].Holder
	}
	// Beliefs that began before the watch: an instance whose last
	// transition before the start was a promotion is counted as leading from
	// 0 if the key held it then or it was promoted less than a TTL before
	// (else it may have crashed since: nobody publishes a crash).
	before := map[string]placed{}
	for _, p := range pl {
		if p.at.Before(h.Start) && p.Kind != election.Errored {
			before[p.Instance] = p
		}
	}
	var seeded []string
	for id, p := range before {
		if p.Kind != election.Promoted {
			continue
		}
		if firstHolder == id || h.Start.Sub(p.at) < p.TTL {
			seeded = append(seeded, id)
		} else {
			obs.Notes = append(obs.Notes, fmt.Sprintf("instance %s was promoted %s before the watch and published nothing since, while the key held another value at the start: taken as not leading (crashed, or cut off since)", short(id), h.Start.Sub(p.at).Round(time.Millisecond)))
		}
	}
	sort.Slice(seeded, func(i, j int) bool { return index[seeded[i]] < index[seeded[j]] })
	for _, id := range seeded {
		p := before[id]
		tl = append(tl, model.Event{At: 0, Kind: model.LeaderGained, Instance: index[id], ID: id, Term: p.Term, Token: p.Token,
			Detail: "leading since before the watch"})
		obs.Notes = append(obs.Notes, fmt.Sprintf("instance %s led when the watch began (promoted %s before it): its leadership is counted from time 0", short(id), h.Start.Sub(p.at).Round(time.Millisecond)))
	}
	for _, p := range pl {
		if p.at.Before(h.Start) {
			continue
		}
		ev := model.Event{At: off(p.at), Instance: index[p.Instance], ID: p.Instance, Term: p.Term, Token: p.Token, Uncertainty: p.u}
		switch p.Kind {
		case election.Promoted:
			ev.Kind = model.LeaderGained
		case election.Demoted:
			ev.Kind, ev.Detail, ev.Err = model.LeaderLost, "demoted: "+string(p.Reason), p.Err
		case election.Errored:
			ev.Kind, ev.Err = model.ElectorError, p.Err
		}
		if p.Late {
			ev.Detail = join(ev.Detail, fmt.Sprintf("published late, %s after it happened", p.Redis.Sub(p.at).Round(time.Millisecond)))
		}
		tl = append(tl, ev)
	}
	lastHolder, started := "", false
	for _, hc := range rec.Holders {
		at := off(hc.At)
		if at < 0 {
			at = 0
		}
		if started && hc.Holder == lastHolder {
			continue
		}
		lastHolder, started = hc.Holder, true
		tl = append(tl, model.Event{At: at, Kind: model.RedisHolder, Instance: -1, Holder: hc.Holder, Uncertainty: hc.Uncertainty, Detail: hc.Note})
	}
	ended := cmp.Or(rec.Ended, "complete")
	tl = append(tl, model.Event{At: max(off(end), 0), Kind: model.RunEnded, Instance: -1, Detail: ended})
	slices.SortStableFunc(tl, func(a, b model.Event) int { return cmp.Compare(a.At, b.At) })
	// Nothing may come after the end: a late entry placed beyond it (its
	// delay estimate) moves the end.
	if n := len(tl); n > 1 && tl[n-1].Kind != model.RunEnded {
		for i := range tl {
			if tl[i].Kind == model.RunEnded {
				e := tl[i]
				e.At = tl[n-1].At
				tl = append(slices.Delete(tl, i, i+1), e)
				break
			}
		}
	}

	lost := map[string]time.Duration{}
	for _, p := range pl {
		lost[p.Instance] = max(lost[p.Instance], p.lost)
	}
	for _, id := range slices.Sorted(maps.Keys(lost)) {
		// Smaller spans (a write sent late under load) are in the
		// uncertainty; a note is for what can hide a window.
		if d := lost[id]; d >= noteLost {
			obs.Notes = append(obs.Notes, fmt.Sprintf("instance %s: a transition's write came %s later than its monotonic clock says, and its own write's round trip is unknown: the write was held (a partition) or the clock stopped (a suspended host, a clock fault); it is placed at the end of that span where its belief is longest, ± the whole span, so an overlap near it is shown with that uncertainty (a gap instead lies within it)", short(id), d.Round(time.Millisecond)))
		}
	}
	if h.Failover != "" {
		obs.Notes = append(obs.Notes, "failover: "+h.Failover)
	}
	for _, sw := range rec.Switches {
		obs.Notes = append(obs.Notes, switchNote(sw, perPub, h.Start))
	}
	obs.Instances = instances(pl, perPub, index)
	p := params(pl)
	sc := model.Scenario{Name: cmp.Or(h.Group, h.Key), Instances: len(index), Params: p,
		Description: "observed from outside: " + h.Source}
	for _, l := range []struct {
		metric string
		d      *time.Duration
	}{{"max_overlap", lim.MaxOverlap}, {"max_gap", lim.MaxGap}, {"stale_leadership", lim.MaxStale}} {
		if l.d != nil {
			sc.Expect = append(sc.Expect, model.Expectation{Metric: l.metric, Max: l.d.String()})
		}
	}
	a := model.Analyze(tl, p)
	res := &model.Result{
		RunID: h.Start.UTC().Format("20060102-150405") + "-observed", Backend: reports.BackendObserve, Scenario: sc,
		BackendAbout: "a live fleet, watched from outside: its published transitions and the lease key; every time is an estimate on Redis's clock, shown with its uncertainty",
		Params:       a.Params, TimeScale: 1, Started: h.Start, Elapsed: end.Sub(h.Start), Complete: ended == "complete",
		Timeline: tl, Analysis: a, Observed: obs,
	}
	if !res.Complete {
		res.Incomplete = ended
	}
	res.Evaluation = model.Evaluate(sc, a, nil) // a limit within the uncertainty: unknown
	res.Settle()
	return res, nil
}

// switchNote says that the watch followed a failover, when, and what it may
// have missed: the key unseen in the move, and the transitions written to
// the old primary that the observer had not read and the new one never
// got (holes in their publishers' sequences around the move).
func switchNote(sw Switch, per map[string][]publish.Entry, start time.Time) string {
	blind := sw.At.Sub(sw.LastSeen)
	missing, pubs := 0, 0
	for _, es := range per {
		n := 0
		for i := 1; i < len(es); i++ {
			if gap := int(es[i].Seq - es[i-1].Seq - 1); gap > 0 && !es[i-1].Redis.After(sw.At) && !es[i].Redis.Before(sw.LastSeen) {
				n += gap
			}
		}
		if n > 0 {
			missing += n
			pubs++
		}
	}
	lost := "no publisher's sequence has a hole across it, so no transition was lost in the move"
	if missing > 0 {
		lost = fmt.Sprintf("%d transitions of %d publishers are missing across it (holes in their sequences): written to the old primary after the observer's last read there and not replicated to the new one, or dropped by their publishers", missing, pubs)
	}
	return fmt.Sprintf("followed a failover at %s from %s to %s (%s): the lease key was not seen for %s (a change of holder in that span is placed in its middle, ± half of it); the new primary's clock is %s from the old one's, and later times are on it; %s",
		sw.At.Sub(start).Round(time.Millisecond), sw.From, sw.To, sw.Why, blind.Round(10*time.Microsecond),
		reports.Uncertain(sw.ClockStep, sw.ClockStepUncertainty), lost)
}

// dedupe drops repeats of (Publisher, Seq) — a write that timed out may
// still have landed — and groups the entries by publisher, in Seq order.
func dedupe(in []publish.Entry) map[string][]publish.Entry {
	type k struct {
		pub string
		seq uint64
	}
	seen := map[k]bool{}
	per := map[string][]publish.Entry{}
	for _, e := range in {
		key := k{e.Publisher, e.Seq}
		if seen[key] {
			continue
		}
		seen[key] = true
		per[e.Publisher] = append(per[e.Publisher], e)
	}
	for _, es := range per {
		slices.SortFunc(es, func(a, b publish.Entry) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	return per
}

// place puts every entry on Redis's clock (see the package doc). Each
// write j of a publisher ties its monotonic clock to Redis's: zero_j =
// Redis_j − PubMono_j is the Redis time of the publisher's monotonic zero,
// late by the write's one-way delay — at least 0, at most the write's round
// trip rtt_j (the next entry's RTT field, when that entry is the next
// write). A transition i lies at Mono_i + zero_j − [0, rtt_j], widened by the
// monotonic clock's possible rate error over |Mono_i − PubMono_j|.
//
// Its own write always bounds it from above (zero_i + Mono_i: the delay to
// the write is measured over a short stretch of the instance's own clock).
// The other writes tighten that where they agree with it. A write whose
// zero is earlier than i's by more than the round trips allow disagrees:
// either i's write was slow (held by a partition) or the instance's clock
// lost time in between (a suspended host's monotonic clock stops). When
// i's own round trip is known (its write was quick), it is the clock, and
// that write is not used; when it is not known, either may be, and the
// placement widens to cover both. The transition is placed at the middle
// of what is left, ± half its width — except where a disagreement widened
// it by noteLost or more (a suspended host, a held write): the middle
// could fall before another instance's promotion and hide the overlap the
// other end makes. Such a promotion is placed at the span's start and such
// a demotion at its end, where its belief is longest, ± the whole span: an
// overlap it may have made is shown, with all the uncertainty the data
// leaves (a gap it may have made instead lies within that).
func place(per map[string][]publish.Entry, observerRTT time.Duration) []placed {
	var out []placed
	pubs := make([]string, 0, len(per))
	for p := range per {
		pubs = append(pubs, p)
	}
	slices.Sort(pubs)
	for _, pub := range pubs {
		es := per[pub]
		rtts := make([]time.Duration, len(es)) // 0: unknown
		for j := range es {
			if j+1 < len(es) && es[j+1].Seq == es[j].Seq+1 && es[j+1].RTT > 0 {
				rtts[j] = es[j+1].RTT
			}
		}
		for i, e := range es {
			lo, hi, lost := bounds(es, rtts, i)
			if lo.IsZero() {
				lo = hi.Add(-max(observerRTT, time.Microsecond)) // no known round trip: the observer's
			}
			half := hi.Sub(lo) / 2
			at, u := lo.Add(half), half
			if lost >= noteLost {
				switch e.Kind {
				case election.Promoted:
					at, u = lo, 2*half
				case election.Demoted:
					at, u = hi, 2*half
				}
			}
			out = append(out, placed{Entry: e, at: at, u: max(u, time.Microsecond), rtt: rtts[i], lost: lost})
		}
	}
	return out
}

// bounds returns the earliest and latest Redis time transition i can have
// happened at (see place); lo is zero when nothing bounds it from below.
// lost is how far a disagreeing write widened it.
func bounds(es []publish.Entry, rtts []time.Duration, i int) (lo, hi time.Time, lost time.Duration) {
	mono := es[i].Mono
	zero := func(j int) time.Time { return es[j].Redis.Add(-es[j].PubMono) }
	own := zero(i)
	hi = own.Add(mono)
	if rtts[i] > 0 {
		lo = hi.Add(-rtts[i])
	}
	var wider time.Time // the earliest a disagreeing write allows, when i's round trip is unknown
	for j := range es {
		if j == i {
			continue
		}
		drift := time.Duration(float64((mono - es[j].PubMono).Abs()) * AssumedRateError)
		zj := zero(j)
		candHi := zj.Add(mono + drift)
		var candLo time.Time
		if rtts[j] > 0 {
			candLo = zj.Add(mono - rtts[j] - drift)
		}
		if own.Sub(zj) <= rtts[j]+rtts[i]+2*drift+time.Microsecond {
			// Agrees with i's own write: intersect.
			if candHi.Before(hi) {
				hi = candHi
			}
			if !candLo.IsZero() && candLo.After(lo) {
				lo = candLo
			}
			continue
		}
		if rtts[i] > 0 || candLo.IsZero() {
			continue // i's write was quick: the clock lost time since j
		}
		if wider.IsZero() || candLo.Before(wider) {
			wider = candLo
		}
	}
	if !wider.IsZero() && (lo.IsZero() || wider.Before(lo)) {
		lost = lo.Sub(wider)
		if lo.IsZero() {
			lost = hi.Sub(wider)
		}
		lo = wider
	}
	if !lo.IsZero() && lo.After(hi) {
		lo = hi // the writes agree to within their round trips
	}
	return lo, hi, lost
}

// instances summarizes each instance's record and wall-clock offset.
func instances(entries []placed, per map[string][]publish.Entry, index map[string]int) []model.ObservedInstance {
	byID := map[string]*model.ObservedInstance{}
	samples := map[string][]offsetSample{}
	for _, e := range entries {
		oi := byID[e.Instance]
		if oi == nil {
			oi = &model.ObservedInstance{Member: model.Member{Instance: index[e.Instance], ID: e.Instance}}
			byID[e.Instance] = oi
		}
		oi.Entries++
		if e.Late {
			oi.Late++
		}
		oi.Dropped = max(oi.Dropped, int(e.Dropped))
		oi.MaxDelay = max(oi.MaxDelay, e.PubMono-e.Mono)
		samples[e.Instance] = append(samples[e.Instance], offsetSample{e.Redis.Sub(e.PubWall), e.rtt})
	}
	for _, es := range per {
		for i := 1; i < len(es); i++ {
			if gap := int(es[i].Seq - es[i-1].Seq - 1); gap > 0 && byID[es[i].Instance] != nil {
				byID[es[i].Instance].Holes += gap
			}
		}
		if len(es) > 0 && es[0].Seq > 1 && byID[es[0].Instance] != nil {
			byID[es[0].Instance].Holes += int(es[0].Seq - 1)
		}
	}
	var out []model.ObservedInstance
	for id, oi := range byID {
		oi.ClockOffset, oi.ClockOffsetUncertainty = wallOffset(samples[id])
		out = append(out, *oi)
	}
	slices.SortFunc(out, func(a, b model.ObservedInstance) int { return cmp.Compare(a.Instance, b.Instance) })
	return out
}

// offsetSample is one write's Redis time minus the instance's wall clock
// just before it: the wall offset, late by the write's one-way delay (at
// most rtt; 0 when unknown).
type offsetSample struct {
	d, rtt time.Duration
}

// wallOffset estimates Redis − wall from the write with the least delay
// (the smallest sample), ± half its round trip; where quick writes (round
// trip known) disagree by more than their round trips, the wall clock
// moved during the watch, and the uncertainty covers their spread.
func wallOffset(ss []offsetSample) (time.Duration, time.Duration) {
	best := slices.MinFunc(ss, func(a, b offsetSample) int { return cmp.Compare(a.d, b.d) })
	rtt := best.rtt
	if rtt == 0 {
		rtt = time.Millisecond // unknown: a round trip on a LAN
	}
	est, u := best.d-rtt/2, rtt/2
	for _, s := range ss {
		if s.rtt > 0 {
			// s is within [θ, θ + s.rtt] for a wall clock that held still.
			if spread := s.d - best.d - s.rtt; spread > 0 {
				u = max(u, (s.d-best.d+rtt)/2)
				est = best.d - rtt/2 + (s.d-best.d)/2
			}
		}
	}
	return est, u
}

// params are the timings the instances published (the most recent entry's:
// every instance of a group must use the same).
func params(pl []placed) model.Params {
	var p model.Params
	for _, e := range pl {
		if e.TTL > 0 {
			p.TTL, p.Wait, p.Safe = e.TTL, e.Wait, e.Safe
		}
	}
	return p.WithDefaults()
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func short(id string) string {
	if len(id) > 6 {
		return id[:6]
	}
	return id
}
