package virtual

import (
	"cmp"
	"slices"
	"time"
)

// A run's partial order (Options.PartialOrder): which of its events could
// change what another does, and so must keep their order for two runs to
// do the same thing. Two events of one instance (its timers, its calls'
// steps) touch its machine and connection; two commands at Redis touch the
// key, but two that only read it (a follower's SET NX that fails, a GET)
// commute; the timeline's events decide its windows; and a fault, a start
// or the run's end touches everything. Events on different instances that
// touch no shared state (followers' timers, their calls in flight) may
// come in either order without changing anything either does: the full
// order would split a schedule range at every crossing of two followers'
// attempts, where only their order against the key's writes matters.
//
// Each popped event gets an owner (its instance, Redis for an expiry, or
// global) and a position in its owner's sequence; what it touched is
// learned as it runs. After the run the order is told through OnPop and
// OnCompare in a canonical order, the same in two runs of one partial
// order whatever order their independent events came in:
//   - every owner's events, owner by owner (a PopOwner pop before each),
//     a call's events naming it by its number among its instance's calls;
//   - the comparisons made while handling each event, in that order;
//   - for every resource (each instance, the timeline, Redis), the order
//     of the events that touched it, as a PopOrder pop (A, B: their
//     positions among the pops) and a comparison of their times; at
//     Redis, each read against the writes before and after it only;
//   - the run's end against every event still queued (a PopPending pop,
//     the event, and a comparison): those events did not happen.

// The pseudo-pops of a partial order (Pop.Kind), beside the queue's kinds.
const (
	PopOwner   uint8 = 250 // A: the owner of the pops that follow (-2 global, -1 Redis, else an instance)
	PopOrder   uint8 = 251 // A before B, positions among the pops; the next comparison is their times
	PopPending uint8 = 252 // an event still queued at the run's end (its owner in A), told by the pop after it; the next comparison is the end against it
)

// The owners that are no instance (PopOwner's A, PopPending's A).
const (
	ownerGlobal = -2
	ownerRedis  = -1
)

// ownerOf is who queued event e belongs to: its instance, Redis for an
// expiry, else everyone (a start, a fault, a heal, the run's end).
func ownerOf(w *world, e event) int32 {
	switch e.kind {
	case evWake, evDeadline, evStopTimeout, evProbe:
		return int32(w.incs[e.a].slot.idx)
	case evCall:
		return int32(w.calls[e.a].in.slot.idx)
	case evExpire:
		return ownerRedis
	}
	return ownerGlobal
}

// poEvent is one popped event as the partial order knows it.
type poEvent struct {
	at          time.Duration
	pop         Pop
	owner       int32
	global      bool // touched everything (a start, a fault, the run's end)
	redis       bool // reached Redis
	write       bool // changed Redis's state
	timeline    bool // recorded a timeline event
	comps, ncmp int  // its comparisons: comps[comps : comps+ncmp] of the order
	creator     int  // the event whose handling queued it, -1 the run's setup
}

// partialOrder records a run's partial order as it runs.
type partialOrder struct {
	events []poEvent
	a, b   []time.Duration // comparisons, in the order made
	cur    int             // the event being handled, -1 before the first
	snap   redisSnap
	// creators maps a queued event (by its seq) to the event whose
	// handling queued it: two events due at the same moment come in the
	// order they were queued, which their creators' order decides.
	creators map[uint64]int
	// ords counts each instance's calls: the queue names a call by its
	// number in the run, which depends on how the instances' calls
	// interleave, the partial order by its number among its instance's
	// (call.ord).
	ords []int32
}

// redisSnap is what a command may change at Redis, to tell a write.
type redisSnap struct {
	holder                              string
	expireAt                            time.Duration
	keyGen                              uint32
	token                               int64
	scripts                             uint16
	down, replicaHeld, paused, pauseAll bool
	blocked                             int
	expiryDue                           bool
}

func snapRedis(r *redisModel) redisSnap {
	return redisSnap{r.holder, r.expireAt, r.keyGen, r.token, r.scripts, r.down, r.replicaHeld, r.paused, r.pauseAll, len(r.blocked), r.expiryDue}
}

func newPartialOrder(instances int) *partialOrder {
	return &partialOrder{cur: -1, ords: make([]int32, instances), creators: map[uint64]int{}}
}

// queued notes that the event numbered seq was queued by the current
// event.
func (po *partialOrder) queued(seq uint64) { po.creators[seq] = po.cur }

// numberCall gives a new call its number among its instance's calls.
func (po *partialOrder) numberCall(c *call) {
	s := c.in.slot.idx
	c.ord = po.ords[s]
	po.ords[s]++
}

// compare is OnCompare's buffer: a comparison made while handling the
// current event.
func (po *partialOrder) compare(a, b time.Duration) {
	po.a, po.b = append(po.a, a), append(po.b, b)
	if po.cur >= 0 {
		po.events[po.cur].ncmp++
	}
}

// begin opens event e, before it is handled.
func (po *partialOrder) begin(w *world, e event) {
	ev := poEvent{at: e.at, pop: Pop{Kind: uint8(e.kind), A: e.a, B: e.b, Gen: e.gen}, owner: ownerOf(w, e), comps: len(po.a)}
	ev.global = ev.owner == ownerGlobal
	ev.creator = po.creators[e.seq]
	delete(po.creators, e.seq)
	if e.kind == evCall {
		ev.pop.A = w.calls[e.a].ord
	}
	po.snap = snapRedis(&w.redis)
	po.events = append(po.events, ev)
	po.cur = len(po.events) - 1
}

// end closes the current event, after it was handled.
func (po *partialOrder) end(w *world) {
	ev := &po.events[po.cur]
	if s := snapRedis(&w.redis); s != po.snap {
		ev.redis, ev.write = true, true
	}
	po.cur = -1
}

// touchRedis marks the current event as one that reached Redis.
func (po *partialOrder) touchRedis() {
	if po.cur >= 0 {
		po.events[po.cur].redis = true
	}
}

// touchTimeline marks the current event as one that recorded an event.
func (po *partialOrder) touchTimeline() {
	if po.cur >= 0 {
		po.events[po.cur].timeline = true
	}
}

// touchAll marks the current event as one that touched everything (it
// started an incarnation: the run's ids and jitter seeds are drawn in the
// order instances start).
func (po *partialOrder) touchAll() {
	if po.cur >= 0 {
		po.events[po.cur].global = true
	}
}

// flush tells o the recorded partial order in its canonical order; setup
// is how many comparisons were made before the first event (the run's
// schedule), told first.
func (po *partialOrder) flush(w *world, setup int) {
	o := w.o
	for i := range setup {
		o.OnCompare(po.a[i], po.b[i])
	}
	// Owners in a fixed order: global, Redis, then the instances.
	idx := make([]int, len(po.events))
	for i := range idx {
		idx[i] = i
	}
	rank := func(ev *poEvent) int32 {
		if ev.global { // an instance's event that started an incarnation too
			return ownerGlobal
		}
		return ev.owner
	}
	// Within an owner, the order they ran: an instance's events are
	// ordered among themselves, and so are the global ones; the expiries
	// Redis runs (its own owner) by the key generation that set them,
	// since two that found nothing to do are not.
	slices.SortStableFunc(idx, func(i, j int) int {
		a, b := &po.events[i], &po.events[j]
		if c := cmp.Compare(rank(a), rank(b)); c != 0 || rank(a) != ownerRedis {
			return c
		}
		return cmp.Compare(a.pop.Gen, b.pop.Gen)
	})
	pos := make([]int32, len(po.events))
	var last int32 = ownerGlobal - 1
	n := int32(0)
	for _, i := range idx {
		ev := &po.events[i]
		if r := rank(ev); r != last {
			last = r
			o.OnPop(Pop{Kind: PopOwner, A: r})
			n++
		}
		o.OnPop(ev.pop)
		pos[i] = n
		n++
	}
	for _, i := range idx {
		ev := &po.events[i]
		for k := ev.comps; k < ev.comps+ev.ncmp; k++ {
			o.OnCompare(po.a[k], po.b[k])
		}
	}
	// The orders, sorted by position so that they are told the same
	// whichever of two reads between the same writes came first.
	type pair struct{ i, j int }
	var pairs []pair
	order := func(i, j int) { pairs = append(pairs, pair{i, j}) }
	// Each instance's events in the order they ran (the global ones among
	// them), and the timeline's.
	prevOf := make([]int, len(w.slots))
	for s := range prevOf {
		prevOf[s] = -1
	}
	for i := range po.events {
		ev := &po.events[i]
		switch {
		case ev.global:
			for s, l := range prevOf {
				if l >= 0 {
					order(l, i)
				}
				prevOf[s] = i
			}
		case ev.owner >= 0:
			if l := prevOf[ev.owner]; l >= 0 {
				order(l, i)
			}
			prevOf[ev.owner] = i
		}
	}
	prev := -1
	for i := range po.events {
		if ev := &po.events[i]; ev.global || ev.timeline {
			if prev >= 0 {
				order(prev, i)
			}
			prev = i
		}
	}
	// Redis: every write after the write before it, every read between
	// the writes around it.
	lastW := -1
	var reads []int
	for i := range po.events {
		ev := &po.events[i]
		if !ev.global && !ev.redis && ev.owner != ownerRedis {
			continue
		}
		if !ev.global && !ev.write {
			if lastW >= 0 {
				order(lastW, i)
			}
			reads = append(reads, i)
			continue
		}
		for _, r := range reads {
			order(r, i)
		}
		reads = reads[:0]
		if lastW >= 0 {
			order(lastW, i)
		}
		lastW = i
	}
	// Two events due at the same moment come in the order they were
	// queued: their creators' order, which is recorded too (and theirs,
	// while they tie as well). The pairs are in the order the events ran.
	ties := func(ci, cj int, at, bt time.Duration) {
		for at == bt && ci != cj && ci >= 0 && cj >= 0 {
			order(min(ci, cj), max(ci, cj))
			at, bt = po.events[ci].at, po.events[cj].at
			ci, cj = po.events[ci].creator, po.events[cj].creator
		}
	}
	for _, p := range pairs[:len(pairs):len(pairs)] {
		a, b := &po.events[p.i], &po.events[p.j]
		ties(a.creator, b.creator, a.at, b.at)
	}
	slices.SortFunc(pairs, func(x, y pair) int {
		return cmp.Or(cmp.Compare(pos[x.i], pos[y.i]), cmp.Compare(pos[x.j], pos[y.j]))
	})
	pairs = slices.Compact(pairs)
	for _, p := range pairs {
		o.OnPop(Pop{Kind: PopOrder, A: pos[p.i], B: pos[p.j]})
		o.OnCompare(po.events[p.i].at, po.events[p.j].at)
	}

	// What did not happen: every event still queued, against the run's
	// end (each would have run had it come before).
	if len(po.events) == 0 {
		return
	}
	endAt := po.events[len(po.events)-1].at
	type queued struct {
		owner int32
		pop   Pop
		at    time.Duration
		seq   uint64
	}
	var left []queued
	add := func(e event) {
		q := queued{owner: ownerOf(w, e), pop: Pop{Kind: uint8(e.kind), A: e.a, B: e.b, Gen: e.gen}, at: e.at, seq: e.seq}
		if e.kind == evCall {
			q.pop.A = w.calls[e.a].ord
		}
		left = append(left, q)
	}
	for _, e := range w.q.items {
		add(e)
	}
	for _, e := range w.q.fifo[w.q.head:] {
		add(e)
	}
	// Two queued events of one identity (a held arrival queued again
	// beside the first) are told in the order of their creators'
	// positions, which is the partial order's, not the heap's.
	created := func(q queued) int32 {
		if c := po.creators[q.seq]; c >= 0 {
			return pos[c]
		}
		return -1
	}
	slices.SortFunc(left, func(x, y queued) int {
		return cmp.Or(cmp.Compare(x.owner, y.owner), cmp.Compare(x.pop.Kind, y.pop.Kind), cmp.Compare(x.pop.A, y.pop.A),
			cmp.Compare(x.pop.B, y.pop.B), cmp.Compare(x.pop.Gen, y.pop.Gen), cmp.Compare(created(x), created(y)))
	})
	end := &po.events[len(po.events)-1]
	pairs = pairs[:0]
	for _, q := range left {
		o.OnPop(Pop{Kind: PopPending, A: q.owner, B: int32(q.pop.Kind)})
		o.OnPop(q.pop)
		o.OnCompare(endAt, q.at)
		// Due at the end's moment, it came after the end for being queued
		// after it.
		ties(end.creator, po.creators[q.seq], endAt, q.at)
	}
	for _, p := range pairs {
		o.OnPop(Pop{Kind: PopOrder, A: pos[p.i], B: pos[p.j]})
		o.OnCompare(po.events[p.i].at, po.events[p.j].at)
	}
}
