package runner

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/leaselab/leaselab/election"
)

// TaskTiming is one task's executions in a metrics period.
type TaskTiming struct {
	Count int64
	Avg   time.Duration
}

// MetricsReport is what the metrics chore computed for one period: the
// samples every instance recorded since the previous reset.
type MetricsReport struct {
	// At is when the period ended, by the leader's clock.
	At time.Time
	// Tasks holds each task's executions (successful or not) in the period:
	// those whose entry the recording call acknowledged (a task another
	// instance finished first records only the first finisher's sample).
	Tasks map[string]TaskTiming
	// Samples and Avg are over all tasks; Avg is 0 when Samples is 0.
	Samples int64
	Avg     time.Duration
	// Queued entries wait for a worker: not yet delivered, or delivered and
	// waiting in an instance's read-ahead queue. Pending ones were delivered
	// and not yet acknowledged (running, or left by a crashed instance), up
	// to Instances × Capacity: delivered entries beyond what the fleet's
	// workers can run are counted as Queued. Queued + Pending is the number
	// of unfinished entries in the stream.
	Queued, Pending int64
	// Instances is the number of live (heartbeating) instances; Capacity the
	// per-instance pool size the leader has applied.
	Instances, Capacity int
	// PredictedWait is how long a task dispatched now would wait before it
	// starts: Queued × average task time / (Instances × Capacity). The
	// average is this period's, or the last period's that had samples.
	PredictedWait time.Duration
	// SlowTasks are the tasks whose Avg exceeded Options.AvgThreshold, and
	// WaitExceeded says PredictedWait exceeded Options.WaitThreshold.
	SlowTasks    []string
	WaitExceeded bool
	// Term and Token are the leadership the chore ran under: the elector's
	// term and, in safe mode, its fencing token (0 in spec mode), which the
	// metrics script was fenced with. OnThreshold's side effects are outside
	// Redis, so the runner cannot fence them: a hook whose effects must not
	// come from a stale leader passes Token on to the system it writes to,
	// which refuses a token below the highest it has accepted.
	Term  uint64
	Token int64
}

// metrics is the metrics chore: it reads and resets every instance's samples
// in one script (no sample recorded meanwhile is lost), computes the report,
// and calls OnThreshold when a threshold is exceeded and the elector still
// leads in the report's term. ok is false when Redis failed.
func (r *Runner) metrics(lead election.Leadership) (MetricsReport, bool) {
	start := time.Now()
	res, err := r.chore(metricsScript, lead,
		[]string{r.keys.metricsN, r.keys.metricsUS, r.keys.stream, r.keys.instances}, r.cfg.Group).Slice()
	if r.refused(err, ChoreMetrics, lead) {
		return MetricsReport{}, false
	}
	if err == nil && len(res) != 5 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		r.fail(fmt.Errorf("runner: metrics: reading and resetting the samples: %w", err))
		return MetricsReport{}, false
	}
	counts, sums := pairs(res[0]), pairs(res[1])
	length, _ := res[2].(int64)
	pending, _ := res[3].(int64)
	live, _ := res[4].(int64)

	rep := MetricsReport{At: r.clock.Now(), Tasks: make(map[string]TaskTiming, len(counts)),
		Instances: int(live), Term: lead.Term, Token: lead.Token}
	rep.Capacity, _ = r.pool.state()
	rep.Pending = min(pending, int64(max(rep.Instances, 1))*int64(rep.Capacity))
	rep.Queued = max(length-rep.Pending, 0)
	var totalUS int64
	for task, n := range counts {
		if n <= 0 {
			continue
		}
		us := sums[task]
		rep.Tasks[task] = TaskTiming{Count: n, Avg: time.Duration(us/n) * time.Microsecond}
		rep.Samples += n
		totalUS += us
	}
	if rep.Samples > 0 {
		rep.Avg = time.Duration(totalUS/rep.Samples) * time.Microsecond
		r.lastAvg = rep.Avg
	}
	rep.PredictedWait = predictWait(rep.Queued, r.lastAvg, rep.Instances, rep.Capacity)

	for task, t := range rep.Tasks {
		if r.cfg.AvgThreshold > 0 && t.Avg > r.cfg.AvgThreshold {
			rep.SlowTasks = append(rep.SlowTasks, task)
		}
	}
	slices.Sort(rep.SlowTasks)
	rep.WaitExceeded = r.cfg.WaitThreshold > 0 && rep.PredictedWait > r.cfg.WaitThreshold
	r.choreRan(Event{Chore: ChoreMetrics, N: int(rep.Samples), Metrics: &rep, Term: lead.Term, Token: lead.Token}, start)
	// The hook runs only while the elector still leads in the term the
	// report was computed in (in safe mode: before its guard deadline).
	if (len(rep.SlowTasks) > 0 || rep.WaitExceeded) && r.cfg.OnThreshold != nil && r.leads(lead) {
		r.cfg.OnThreshold(rep)
	}
	return rep, true
}

// predictWait is how long a task dispatched now waits before it starts:
// queued × avg / (instances × capacity), with at least one instance. The
// product is computed in 128 bits and the result saturates at the largest
// Duration, so a huge queue cannot overflow into a negative wait.
func predictWait(queued int64, avg time.Duration, instances, capacity int) time.Duration {
	workers := uint64(max(instances, 1)) * uint64(max(capacity, 0))
	if workers == 0 || queued <= 0 || avg <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(queued), uint64(avg))
	if hi >= workers { // the quotient needs more than 64 bits
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, workers)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(q)
}

// pairs reads an HGETALL reply of integer values.
func pairs(v any) map[string]int64 {
	flat, _ := v.([]any)
	m := make(map[string]int64, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		k, _ := flat[i].(string)
		n, err := strconv.ParseInt(fmt.Sprint(flat[i+1]), 10, 64)
		if err == nil {
			m[k] = n
		}
	}
	return m
}
