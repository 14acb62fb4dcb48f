package virtual

import "time"

// evKind says what a queued event does.
type evKind uint8

const (
	evStart       evKind = iota + 1 // a: instance index
	evFault                         // a: fault id (apply)
	evHeal                          // a: fault id
	evPhaseEnd                      // end of the fault phase: heal everything
	evRunEnd                        // RunEnded
	evWake                          // a: incarnation, gen: wake generation
	evDeadline                      // a: incarnation, gen: deadline generation
	evStopTimeout                   // a: incarnation, gen: 0
	evCall                          // a: call, gen: call generation, b: step
	evExpire                        // gen: key generation
	evRedisUp                       // Redis is back after a restart; a: index in world.doneFns
	evProbe                         // the pool's tryDial after its dial breaker tripped; a: incarnation
	evFailover                      // a replica takes over (redis-failover's switch); a: index in world.doneFns
	evMigrated                      // a slot migration is done; a: index in world.doneFns
	evRTimer                        // a runner timer; a: incarnation, b: timer, gen: its generation
	evTaskDone                      // a task's handler returns; a: index in world.dels
	evBlockEnd                      // a blocked XREADGROUP's Block is over; a: call, gen: its attempt's generation
	evWork                          // a workload tick; a: loop
)

// event is one entry of the queue. Ties in at are broken by seq, the
// insertion order, so a run is a pure function of its inputs.
type event struct {
	at   time.Duration
	seq  uint64
	kind evKind
	a    int32
	b    int32
	gen  uint32
}

// queue hands out events in (at, seq) order: a binary min-heap, and a
// FIFO of the events queued for the instant being processed (now), which
// half of a runner-mode run's events are (a call's steps that follow at
// once). The order is total (seq is unique), so how the queue is built
// does not change a run: an event of the FIFO was queued at now, after
// every event the heap holds for now (they were queued before now), and
// before any event due later. The heap is written out rather than driven
// through container/heap because the interface calls of Less and Swap
// were a third of a runner-mode run's time (BenchmarkLeaderCrashModes).
type queue struct {
	items []event
	seq   uint64
	now   time.Duration // the instant of the last event handed out
	fifo  []event       // events for now, in the order queued
	head  int           // the next of fifo
	// onLess, if set, is told the two times of each comparison the queue
	// makes: their outcomes decide the heap's every move and which events
	// go to the FIFO, and so the order events come out in
	// (Options.OnCompare).
	onLess func(a, b time.Duration)
}

// Len is the number of events queued.
func (q *queue) Len() int { return len(q.items) + len(q.fifo) - q.head }

// before reports whether a is due before b. (The heap's loops tell
// onLess themselves: a hook here would keep before from being inlined,
// doubling BenchmarkEvents.)
func before(a, b *event) bool {
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

// add queues e after every event already queued for the same instant;
// e.at is never before the last event handed out.
func (q *queue) add(e event) {
	q.seq++
	e.seq = q.seq
	if q.onLess != nil {
		q.onLess(e.at, q.now)
	}
	if e.at == q.now {
		q.fifo = append(q.fifo, e)
		return
	}
	q.items = append(q.items, e)
	h := q.items
	i := len(h) - 1
	tell := q.onLess
	for i > 0 {
		p := (i - 1) / 2
		if tell != nil {
			tell(e.at, h[p].at)
		}
		if !before(&e, &h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// next removes and returns the first event due.
func (q *queue) next() event {
	if q.onLess != nil && q.head < len(q.fifo) && len(q.items) > 0 {
		q.onLess(q.items[0].at, q.now)
	}
	if q.head < len(q.fifo) && (len(q.items) == 0 || q.items[0].at != q.now) {
		e := q.fifo[q.head]
		if q.head++; q.head == len(q.fifo) {
			q.fifo, q.head = q.fifo[:0], 0
		}
		return e
	}
	e := q.pop()
	q.now = e.at
	return e
}

// pop removes and returns the heap's first event.
func (q *queue) pop() event {
	h := q.items
	top := h[0]
	n := len(h) - 1
	last := h[n]
	h = h[:n]
	q.items = h
	if n == 0 {
		return top
	}
	i := 0
	tell := q.onLess
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n {
			if tell != nil {
				tell(h[r].at, h[c].at)
			}
			if before(&h[r], &h[c]) {
				c = r
			}
		}
		if tell != nil {
			tell(h[c].at, last.at)
		}
		if !before(&h[c], &last) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = last
	return top
}
