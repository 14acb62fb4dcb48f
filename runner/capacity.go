package runner

import (
	"fmt"
	"math"
	"time"

	"github.com/leaselab/leaselab/election"
)

// decideCapacity is the capacity chore: from the backlog, the average task
// time and the number of live instances in rep, it decides the per-instance
// pool size and publishes it with the next version and this leader's id.
// Every instance, this one included, applies it on its next heartbeat.
//
// Without a known average task time (a new leader before any sample) it
// republishes the capacity in force: a leadership change keeps the capacity.
func (r *Runner) decideCapacity(rep MetricsReport, ok bool, lead election.Leadership) {
	if !ok {
		return // the metrics chore failed: no inputs to decide on
	}
	r.mu.Lock()
	c := r.applied.capacity
	r.mu.Unlock()
	backlog := rep.Queued + rep.Pending
	if backlog == 0 || r.lastAvg > 0 {
		c = CapacityFor(backlog, r.lastAvg, rep.Instances, r.cfg.DrainTarget, r.cfg.MinWorkers, r.cfg.MaxWorkers)
	}
	start := time.Now()
	v, err := r.chore(publishScript, lead, []string{r.keys.capacity}, c, r.id).Int64()
	if r.refused(err, ChoreCapacity, lead) {
		return
	}
	if err != nil {
		r.fail(fmt.Errorf("runner: capacity: publishing %d: %w", c, err))
		return
	}
	r.choreRan(Event{Chore: ChoreCapacity, N: c, Version: v, Term: lead.Term, Token: lead.Token}, start)
	r.apply(published{capacity: c, version: v, from: r.id})
}

// CapacityFor is the capacity chore's decision: the per-instance pool size
// that drains backlog tasks of average time avg within target, shared by
// instances, within [lo, hi]. Exported for models of the runner (the
// virtual backend), which decide as the leader does.
func CapacityFor(backlog int64, avg time.Duration, instances int, target time.Duration, lo, hi int) int {
	if backlog <= 0 || avg <= 0 {
		return lo
	}
	need := math.Ceil(float64(backlog) * float64(avg) / (float64(target) * float64(max(instances, 1))))
	if need > float64(hi) {
		return hi
	}
	return max(int(need), lo)
}
