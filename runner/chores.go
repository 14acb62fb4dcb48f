package runner

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/leaselab/leaselab/election"
	"github.com/redis/go-redis/v9"
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
// before each that the elector still says it leads in the same term, since a
// demotion may come in between. Redis calls use Start's context: a graceful
// Stop lets a started chore finish rather than lose the reply of a script
// that ran.
//
// In safe mode every chore script is fenced: it first checks, inside Redis,
// that the lease still holds this instance's ID and the token counter still
// holds this term's token, and refuses to write otherwise (EventChoreFenced).
// A chore decided while leading but landing after the lease moved on (a
// paused process, a slow or partitioned network) then changes nothing.
func (r *Runner) tick() {
	r.beat()
	lead := r.leadership()
	if !lead.Leader {
		return
	}
	if !r.schedule(lead) || !r.leads(lead) {
		return
	}
	report, ok := r.metrics(lead)
	if !r.leads(lead) {
		return
	}
	r.decideCapacity(report, ok, lead)
}

// leads reports whether the elector still leads in the term of lead.
func (r *Runner) leads(lead election.Leadership) bool {
	now := r.leadership()
	return now.Leader && now.Term == lead.Term
}

// leadership is the elector's decision, which the chores follow (a test may
// force a split brain).
func (r *Runner) leadership() election.Leadership {
	l := r.elector.Leadership()
	if r.splitBrain.Load() {
		l.Leader = true
	}
	return l
}

// chore runs a leader-only chore's script: as it is in spec mode; fenced in
// safe mode, with the lease and token keys appended to keys and this
// instance's ID and the term's token to args (the fence reads them from the
// ends, so the script's own KEYS and ARGV are unchanged).
func (r *Runner) chore(s *redis.Script, lead election.Leadership, keys []string, args ...any) *redis.Cmd {
	if !r.Safe() {
		return s.Run(r.ctx, r.rdb, keys, args...)
	}
	keys = append(keys[:len(keys):len(keys)], r.keys.lease, r.keys.token)
	args = append(args[:len(args):len(args)], r.id, strconv.FormatInt(lead.Token, 10))
	return fencedScripts[s].Run(r.ctx, r.rdb, keys, args...)
}

// refused reports whether err is a fenced script's refusal and, if so,
// reports it; the chores of this tick then stop.
func (r *Runner) refused(err error, c Chore, lead election.Leadership) bool {
	if err == nil || !strings.HasPrefix(err.Error(), fencedPrefix) {
		return false
	}
	r.stats.choresFenced.Add(1)
	r.emit(Event{Kind: EventChoreFenced, Chore: c, Term: lead.Term, Token: lead.Token, Err: err})
	return true
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
