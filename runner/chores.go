package runner

import (
	"context"
	"fmt"
	"strconv"
)

// heartbeatTicks is how many chore ticks an instance's heartbeat outlives it:
// an instance missing for 3 ticks no longer counts as live for capacity.
const heartbeatTicks = 3

// chores runs the chore tick until ctx is done: one tick at once (so a new
// instance counts as live and applies the published capacity straight away),
// then one every ChoreInterval on the runner's clock.
func (r *Runner) chores(ctx context.Context) {
	defer close(r.choreDone)
	t := r.clock.Ticker(r.cfg.ChoreInterval)
	defer t.Stop()
	for {
		r.tick()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tick is one chore tick. Every instance heartbeats and applies the
// published capacity; the leader then runs the three global chores, checking
// IsLeader before each, since a demotion may arrive in between. Redis calls
// use Start's context: a graceful Stop lets a started chore finish rather
// than lose the reply of a script that ran.
func (r *Runner) tick() {
	r.beat()
	if !r.IsLeader() {
		return
	}
	r.schedule()
	if !r.IsLeader() {
		return
	}
	report, ok := r.metrics()
	if !r.IsLeader() {
		return
	}
	r.decideCapacity(report, ok)
}

// published is a capacity as the leader published it.
type published struct {
	capacity int
	version  int64
	from     string // the publishing leader's id
}

// beat heartbeats and applies the published capacity, if any.
func (r *Runner) beat() {
	ttl := heartbeatTicks * r.cfg.ChoreInterval
	res, err := beatScript.Run(r.ctx, r.rdb, []string{r.keys.instances, r.keys.capacity}, r.id, ttl.Milliseconds()).Slice()
	if err != nil {
		r.fail(fmt.Errorf("runner: heartbeat: %w", err))
		return
	}
	if len(res) != 3 || res[0] == nil || res[1] == nil {
		return // nothing published yet
	}
	c, err1 := strconv.Atoi(fmt.Sprint(res[0]))
	v, err2 := strconv.ParseInt(fmt.Sprint(res[1]), 10, 64)
	if err1 != nil || err2 != nil || c < 1 {
		r.fail(fmt.Errorf("runner: malformed capacity in %s: %v", r.keys.capacity, res))
		return
	}
	from, _ := res[2].(string)
	r.apply(published{capacity: c, version: v, from: from})
}

// apply takes publication p unless it is the version applied last, and
// resizes the pool (and reports it) when the capacity changed. A version
// different from ours, not only a greater one, is taken: versions only grow
// (HINCRBY), except when Redis lost the key (restart, flush), and then the
// new count must win.
func (r *Runner) apply(p published) {
	r.mu.Lock()
	if p.version == r.applied.version {
		r.mu.Unlock()
		return
	}
	changed := p.capacity != r.applied.capacity
	r.applied = p
	r.mu.Unlock()
	if !changed {
		return
	}
	r.pool.resize(p.capacity)
	r.emit(Event{Kind: EventCapacityApplied, N: p.capacity, Version: p.version, From: p.from})
}
