package runner

import "sync/atomic"

// Stats is a snapshot of one runner's state and counters. The counters are
// this instance's since New.
type Stats struct {
	Instance string
	Leader   bool

	// Capacity is the pool size in force, CapacityVersion and CapacityFrom
	// the version and leader of the publication it came from (0 and "" for
	// Options.Workers before any publication). InFlight counts the handlers running.
	Capacity        int
	CapacityVersion int64
	CapacityFrom    string
	InFlight        int

	Dispatched   uint64 // tasks stored by this instance's Dispatch calls
	Started      uint64 // handlers started
	Completed    uint64 // handlers that returned nil, acknowledged
	Failed       uint64 // handlers that failed, settled (retry or dead letter)
	DeadLettered uint64
	Reclaimed    uint64 // entries taken over from idle consumers
	Deferred     uint64 // read-ahead entries not started, left for reclaim (EventTaskDeferred)
	HandedBack   uint64 // unfinished tasks returned to the stream by Stop
	DelayedMoved uint64 // delayed tasks and retries this instance moved as leader
	ChoreRuns    uint64 // leader chore runs (all three kinds)
	ChoresFenced uint64 // safe mode: chore scripts refused by the fence (EventChoreFenced)
	Errors       uint64 // EventError count

	// Safe reports safe mode; Term and Token are the elector's current (or
	// last) term and its fencing token (0 in spec mode).
	Safe  bool
	Term  uint64
	Token int64
}

type counters struct {
	dispatched, started, completed, failed, deadLettered, reclaimed, deferred,
	handedBack, delayedMoved, choreRuns, choresFenced, errors atomic.Uint64
}

// Stats returns a snapshot.
func (r *Runner) Stats() Stats {
	size, inFlight := r.pool.state()
	r.mu.Lock()
	p := r.applied
	r.mu.Unlock()
	lead := r.elector.Leadership()
	return Stats{
		Instance:        r.id,
		Leader:          lead.Leader,
		Safe:            lead.Safe,
		Term:            lead.Term,
		Token:           lead.Token,
		ChoresFenced:    r.stats.choresFenced.Load(),
		Capacity:        size,
		CapacityVersion: p.version,
		CapacityFrom:    p.from,
		InFlight:        inFlight,
		Dispatched:      r.stats.dispatched.Load(),
		Started:         r.stats.started.Load(),
		Completed:       r.stats.completed.Load(),
		Failed:          r.stats.failed.Load(),
		DeadLettered:    r.stats.deadLettered.Load(),
		Reclaimed:       r.stats.reclaimed.Load(),
		Deferred:        r.stats.deferred.Load(),
		HandedBack:      r.stats.handedBack.Load(),
		DelayedMoved:    r.stats.delayedMoved.Load(),
		ChoreRuns:       r.stats.choreRuns.Load(),
		Errors:          r.stats.errors.Load(),
	}
}
