package virtual

import (
	"container/heap"
	"time"
)

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
	evRedisUp                       // Redis is back after a restart; a: fault id
	evProbe                         // the pool's tryDial after its dial breaker tripped; a: incarnation
	evFailover                      // a replica takes over (redis-failover's switch); a: fault id
	evMigrated                      // a slot migration is done; a: fault id
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

// queue is a binary min-heap of events ordered by (at, seq), driven through
// container/heap. Push and Pop go through Fix on the slice directly so that
// no event is boxed into an interface (one allocation per event otherwise).
type queue struct {
	items []event
	seq   uint64
}

func (q *queue) Len() int { return len(q.items) }
func (q *queue) Less(i, j int) bool {
	a, b := &q.items[i], &q.items[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}
func (q *queue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }

// Push and Pop satisfy heap.Interface; add and next are what the world uses.
func (q *queue) Push(x any) { q.items = append(q.items, x.(event)) }
func (q *queue) Pop() any {
	n := len(q.items) - 1
	e := q.items[n]
	q.items = q.items[:n]
	return e
}

func (q *queue) add(e event) {
	q.seq++
	e.seq = q.seq
	q.items = append(q.items, e)
	heap.Fix(q, len(q.items)-1)
}

func (q *queue) next() event {
	n := len(q.items) - 1
	q.Swap(0, n)
	e := q.items[n]
	q.items = q.items[:n]
	if n > 0 {
		heap.Fix(q, 0)
	}
	return e
}
