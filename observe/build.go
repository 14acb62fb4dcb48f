package observe

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
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

// MaxTTL is the longest lease TTL or Wait Build takes from an entry: a
// publisher's beyond it (or below 0) is impossible, clamped and reported
// (finding impossible-ttl).
const MaxTTL = 24 * time.Hour

// noteLost is the widened placement from which Build notes it.
const noteLost = 50 * time.Millisecond

// Limits turn a watch into a check: a window longer than a limit fails it.
// nil means no limit; a limit of 0 allows no window at all.
type Limits struct {
	MaxOverlap, MaxGap, MaxStale *time.Duration
}

// placed is an entry placed on Redis's clock.
type placed struct {
	*publish.Entry
	at  time.Time
	u   time.Duration
	rtt time.Duration // the round trip taken for its write
	// lost is how much time the instance's monotonic clock may have lost
	// before this transition, when that widened its placement (0 if not).
	lost time.Duration
}

// Build turns a recording into a Result, the same a harness run produces,
// with the observation's description in Result.Observed and the limits as
// expectations. It is pure: the same recording gives the same result. Its
// time and memory are linear in the recording (BenchmarkBuild); it
// returns ctx's error when ctx ends first.
func Build(ctx context.Context, rec *Recording, lim Limits) (*verdict.Result, error) {
	h := rec.Header
	if h.Start.IsZero() {
		return nil, fmt.Errorf("observe: the recording's header has no start time")
	}
	entries, findings := screen(rec)
	end := rec.End
	if end.IsZero() {
		end = h.Start
		for _, hc := range rec.Holders {
			end = maxTime(end, hc.At)
		}
		for _, e := range entries {
			end = maxTime(end, e.Redis)
		}
	}
	obs := &analysis.Observed{Group: h.Group, Key: h.Key, Stream: h.Stream, Source: h.Source, Lane: h.Lane,
		Resolution: h.Resolution, Start: h.Start, RTT: h.RTT}
	if h.LaneNote != "" {
		obs.Notes = append(obs.Notes, h.LaneNote)
	}
	var doubts []string // what keeps the verdict from a pass
	if n := rec.DroppedEntries(); n > 0 {
		d := fmt.Sprintf("%d entries dropped: %s", n, dropReasons(rec.Dropped))
		obs.Notes = append(obs.Notes, d+" (the watch could not read them: a transition among them is missing from this report)")
		doubts = append(doubts, d+": a transition among them would be missing")
	}
	for _, f := range findings {
		obs.Notes = append(obs.Notes, f.name+": "+f.text())
		doubts = append(doubts, "finding "+f.name+": "+f.what)
	}
	perPub := dedupe(entries)
	pl, err := place(ctx, perPub, h.RTT)
	if err != nil {
		return nil, err
	}

	// Instances, in order of their first transition.
	slices.SortStableFunc(pl, func(a, b placed) int { return a.at.Compare(b.at) })
	index := map[string]int{}
	for _, p := range pl {
		if _, ok := index[p.Instance]; !ok {
			index[p.Instance] = len(index)
		}
	}
	off := func(t time.Time) time.Duration { return t.Sub(h.Start) }

	tl := make(model.Timeline, 0, len(pl)+len(rec.Holders)+1)
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
	for i, p := range pl {
		if i%cancelEvery == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
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
		metric model.Metric
		d      *time.Duration
	}{{model.MetricMaxOverlap, lim.MaxOverlap}, {model.MetricMaxGap, lim.MaxGap}, {model.MetricStaleLeadership, lim.MaxStale}} {
		if l.d != nil {
			sc.Expect = append(sc.Expect, model.Expectation{Metric: l.metric, Max: l.d.String()})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a := analysis.Analyze(tl, p)
	res := &verdict.Result{
		RunID: h.Start.UTC().Format("20060102-150405") + "-observed", Backend: reports.BackendObserve, Scenario: sc,
		BackendAbout: "a live fleet, watched from outside: its published transitions and the lease key; every time is an estimate on Redis's clock, shown with its uncertainty",
		Params:       a.Params, TimeScale: 1, Started: h.Start, Elapsed: end.Sub(h.Start), Complete: ended == "complete",
		Timeline: tl, Analysis: a, Observed: obs,
	}
	if !res.Complete {
		res.Incomplete = ended
	}
	res.Evaluation = verdict.Evaluate(sc, a, nil) // a limit within the uncertainty: unknown
	res.Settle()
	if len(doubts) > 0 {
		// Data no watch can have seen, or entries it could not read: what
		// was measured may not be what happened.
		if res.Verdict == model.Pass {
			res.Verdict = model.Unknown
		}
		res.Reasons = append(res.Reasons, doubts...)
	}
	return res, nil
}

// Bounds of what a recording's entries can hold (screen).
const (
	// maxHistory is how long before the watch's start a stream entry may
	// have been written (the stream keeps 10,000 entries, however old).
	maxHistory = 366 * 24 * time.Hour
	// maxAhead is how far past the watch's end (or an entry's own stream
	// ID) an entry's Redis time may lie: the observer's tie to Redis's
	// clock, a failover's clock step.
	maxAhead = time.Minute
	// maxMono is the longest a publisher's monotonic clock may have run.
	maxMono = 10 * 366 * 24 * time.Hour
	// maxWallOffset is the furthest an instance's wall clock may be from
	// Redis's for its offset to be a clock that drifted or jumped, not
	// garbage.
	maxWallOffset = 366 * 24 * time.Hour
)

// finding is one kind of impossible value in a recording: its name, what
// it means, how many entries carried it, the first one.
type finding struct {
	name, what string
	n          int
	example    string
}

func (f *finding) text() string {
	return fmt.Sprintf("%s: %d entries, the first %s", f.what, f.n, f.example)
}

// screen returns the entries Build places — those whose times a publisher
// can have written, TTL and Wait clamped to [0, MaxTTL] — and the
// findings of impossible values, in a fixed order. It copies the entries
// only when it changes or leaves one out.
func screen(rec *Recording) ([]publish.Entry, []*finding) {
	h := rec.Header
	from, to := h.Start.Add(-maxHistory), time.Time{}
	if !rec.End.IsZero() {
		to = rec.End.Add(maxAhead)
	}
	fs := []*finding{
		{name: "impossible-time", what: "a Redis time outside the watch (or later than its own stream entry's ID): left out of the timeline"},
		{name: "impossible-clock", what: fmt.Sprintf("a monotonic clock below 0, beyond %v, or later at the transition than at its write: left out of the timeline", maxMono)},
		{name: "impossible-ttl", what: fmt.Sprintf("a TTL or Wait below 0 or beyond %v: clamped to that range", MaxTTL)},
		{name: "impossible-wall-clock", what: fmt.Sprintf("a wall clock more than %v from Redis's: left out of the instance's clock offset", maxWallOffset)},
	}
	timeF, clockF, ttlF, wallF := fs[0], fs[1], fs[2], fs[3]
	note := func(f *finding, e *publish.Entry, format string, args ...any) {
		if f.n == 0 {
			f.example = fmt.Sprintf("instance %s seq %d (stream entry %s): ", short(e.Instance), e.Seq, cmp.Or(e.StreamID, "?")) + fmt.Sprintf(format, args...)
		}
		f.n++
	}
	var out []publish.Entry // nil while every entry is kept as it is
	for i := range rec.Entries {
		e := &rec.Entries[i]
		drop, clamp := false, false
		switch idAt, ok := streamIDTime(e.StreamID); {
		case e.Redis.Before(from) || !to.IsZero() && e.Redis.After(to):
			note(timeF, e, "Redis time %s, the watch %s to %s", e.Redis.UTC().Format(time.RFC3339Nano),
				h.Start.UTC().Format(time.RFC3339), rec.End.UTC().Format(time.RFC3339))
			drop = true
		case ok && e.Redis.After(idAt.Add(maxAhead)):
			note(timeF, e, "Redis time %s, its stream ID's %s", e.Redis.UTC().Format(time.RFC3339Nano), idAt.UTC().Format(time.RFC3339Nano))
			drop = true
		}
		if !drop && (e.Mono < 0 || e.PubMono < e.Mono || e.PubMono > maxMono) {
			note(clockF, e, "monotonic %v at the transition, %v at its write", e.Mono, e.PubMono)
			drop = true
		}
		if !drop && (e.TTL < 0 || e.TTL > MaxTTL || e.Wait < 0 || e.Wait > MaxTTL) {
			note(ttlF, e, "TTL %v, Wait %v", e.TTL, e.Wait)
			clamp = true
		}
		if !drop && e.Redis.Sub(e.PubWall).Abs() > maxWallOffset {
			note(wallF, e, "wall clock %s at its write, Redis %s", e.PubWall.UTC().Format(time.RFC3339), e.Redis.UTC().Format(time.RFC3339))
		}
		if (drop || clamp) && out == nil {
			out = make([]publish.Entry, i, len(rec.Entries))
			copy(out, rec.Entries[:i])
		}
		switch {
		case drop:
		case clamp:
			c := *e
			c.TTL, c.Wait = min(max(c.TTL, 0), MaxTTL), min(max(c.Wait, 0), MaxTTL)
			out = append(out, c)
		case out != nil:
			out = append(out, *e)
		}
	}
	if out == nil {
		out = rec.Entries
	}
	var found []*finding
	for _, f := range fs {
		if f.n > 0 {
			found = append(found, f)
		}
	}
	return out, found
}

// streamIDTime is the time in a stream entry's ID (<ms>-<seq>).
func streamIDTime(id string) (time.Time, bool) {
	ms, _, ok := strings.Cut(id, "-")
	if !ok {
		return time.Time{}, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(n), true
}

// dropReasons says why entries were dropped, the most frequent reason
// first: `2 format version "2", want "1"; 1 field id is empty`.
func dropReasons(d map[string]int) string {
	rs := slices.SortedFunc(maps.Keys(d), func(a, b string) int { return cmp.Or(cmp.Compare(d[b], d[a]), cmp.Compare(a, b)) })
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%d %s", d[r], r)
	}
	return strings.Join(parts, "; ")
}

// switchNote says that the watch followed a failover, when, and what it may
// have missed: the key unseen in the move, and the transitions written to
// the old primary that the observer had not read and the new one never
// got (holes in their publishers' sequences around the move).
func switchNote(sw Switch, per map[string][]*publish.Entry, start time.Time) string {
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
// still have landed; the first read is kept — and groups the entries by
// publisher, in Seq order.
func dedupe(in []publish.Entry) map[string][]*publish.Entry {
	per := map[string][]*publish.Entry{}
	for i := range in {
		per[in[i].Publisher] = append(per[in[i].Publisher], &in[i])
	}
	for pub, es := range per {
		slices.SortStableFunc(es, func(a, b *publish.Entry) int { return cmp.Compare(a.Seq, b.Seq) })
		per[pub] = slices.CompactFunc(es, func(a, b *publish.Entry) bool { return a.Seq == b.Seq })
	}
	return per
}

// cancelEvery is how many entries Build handles between looks at its
// context.
const cancelEvery = 1 << 12

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
//
// The writes weighed are the tieWindow nearest on each side, so a long
// watch is placed in time linear in its entries (every write against
// every other was quadratic: 53 s for 100,000 transitions). Nothing is
// lost: a farther write ties the clock worse by the rate error over the
// distance, and a disagreement beyond the window (the clock lost time
// there) is settled by the writes in between, which agree with i's own.
func place(ctx context.Context, per map[string][]*publish.Entry, observerRTT time.Duration) ([]placed, error) {
	n := 0
	pubs := make([]string, 0, len(per))
	for p, es := range per {
		pubs = append(pubs, p)
		n += len(es)
	}
	out := make([]placed, 0, n)
	slices.Sort(pubs)
	for _, pub := range pubs {
		es := per[pub]
		rtts := make([]time.Duration, len(es)) // 0: unknown
		zeros := make([]int64, len(es))        // zero_j, in Unix nanoseconds: bounds weighs each many times
		for j := range es {
			if j+1 < len(es) && es[j+1].Seq == es[j].Seq+1 && es[j+1].RTT > 0 {
				rtts[j] = es[j+1].RTT
			}
			zeros[j] = es[j].Redis.UnixNano() - int64(es[j].PubMono)
		}
		for i, e := range es {
			if len(out)%cancelEvery == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			lo, hi, lost := bounds(es, zeros, rtts, i)
			if lo == noBound {
				lo = hi - int64(max(observerRTT, time.Microsecond)) // no known round trip: the observer's
			}
			half := (hi - lo) / 2
			at, u := lo+half, half
			if time.Duration(lost) >= noteLost {
				switch e.Kind {
				case election.Promoted:
					at, u = lo, 2*half
				case election.Demoted:
					at, u = hi, 2*half
				}
			}
			out = append(out, placed{Entry: e, at: time.Unix(0, at).UTC(), u: max(time.Duration(u), time.Microsecond), rtt: rtts[i], lost: lost})
		}
	}
	return out, nil
}

// noBound is bounds' lo when nothing bounds a transition from below.
const noBound = math.MinInt64

// bounds returns the earliest and latest Redis time transition i can have
// happened at (see place), in Unix nanoseconds; lo is noBound when nothing
// bounds it from below. lost is how far a disagreeing write widened it.
// zeros are the writes' zero_j.
func bounds(es []*publish.Entry, zeros []int64, rtts []time.Duration, i int) (lo, hi int64, lost time.Duration) {
	mono := es[i].Mono
	own := zeros[i]
	hi, lo = own+int64(mono), noBound
	if rtts[i] > 0 {
		lo = hi - int64(rtts[i])
	}
	wider := int64(noBound) // the earliest a disagreeing write allows, when i's round trip is unknown
	for j := max(0, i-tieWindow); j < min(len(es), i+tieWindow+1); j++ {
		if j == i {
			continue
		}
		drift := time.Duration(float64((mono - es[j].PubMono).Abs()) * AssumedRateError)
		zj := zeros[j]
		if own-zj <= int64(rtts[j]+rtts[i]+2*drift+time.Microsecond) {
			// Agrees with i's own write: intersect.
			hi = min(hi, zj+int64(mono+drift))
			if rtts[j] > 0 {
				lo = max(lo, zj+int64(mono-rtts[j]-drift))
			}
			continue
		}
		if rtts[i] > 0 || rtts[j] == 0 {
			continue // i's write was quick: the clock lost time since j
		}
		if candLo := zj + int64(mono-rtts[j]-drift); wider == noBound || candLo < wider {
			wider = candLo
		}
	}
	if wider != noBound && (lo == noBound || wider < lo) {
		if lo == noBound {
			lost = time.Duration(hi - wider)
		} else {
			lost = time.Duration(lo - wider)
		}
		lo = wider
	}
	if lo != noBound && lo > hi {
		lo = hi // the writes agree to within their round trips
	}
	return lo, hi, lost
}

// instances summarizes each instance's record and wall-clock offset.
func instances(entries []placed, per map[string][]*publish.Entry, index map[string]int) []analysis.ObservedInstance {
	byID := map[string]*analysis.ObservedInstance{}
	samples := map[string][]offsetSample{}
	for _, e := range entries {
		oi := byID[e.Instance]
		if oi == nil {
			oi = &analysis.ObservedInstance{Member: model.Member{Instance: index[e.Instance], ID: e.Instance}}
			byID[e.Instance] = oi
		}
		oi.Entries++
		if e.Late {
			oi.Late++
		}
		oi.Dropped = max(oi.Dropped, int(e.Dropped))
		oi.MaxDelay = max(oi.MaxDelay, e.PubMono-e.Mono)
		if d := e.Redis.Sub(e.PubWall); d.Abs() <= maxWallOffset { // else garbage: a finding
			samples[e.Instance] = append(samples[e.Instance], offsetSample{d, e.rtt})
		}
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
	var out []analysis.ObservedInstance
	for id, oi := range byID {
		if len(samples[id]) > 0 {
			oi.ClockOffset, oi.ClockOffsetUncertainty = wallOffset(samples[id])
		}
		out = append(out, *oi)
	}
	slices.SortFunc(out, func(a, b analysis.ObservedInstance) int { return cmp.Compare(a.Instance, b.Instance) })
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

// tieWindow is how many of a publisher's writes on each side of a
// transition bounds weighs (see place): 129 writes, minutes of an
// elector's transitions, seconds of a flapping one's.
const tieWindow = 64
