package runner

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"
)

// worker is one of the pool's long-lived worker goroutines: it runs the
// deliveries the pool hands it until the pool lets it go (pool.take).
func (r *Runner) worker() {
	for d := r.pool.take(false); d != nil; d = r.pool.take(true) {
		r.runDelivery(d)
	}
}

// runDelivery runs one delivery and settles it.
func (r *Runner) runDelivery(d *delivery) {
	if r.ctx.Err() != nil {
		// Killed: a delivery read ahead is not started; it stays pending,
		// for another instance to reclaim.
		r.untrack(d.entry)
		return
	}
	if !r.tracked(d) {
		return // read ahead, then handed back by a graceful Stop that ran out of time
	}
	if d.err != nil {
		if r.settling(d) {
			r.fail(d.err)
			r.settle(d, Task{}, d.err, 0)
		}
		return
	}
	t := r.cfg.Tasks[d.task]
	if now := r.clock.Now(); now.Add(t.Timeout).After(r.claimable(d)) {
		// It waited in the read-ahead queue so long that it could still be
		// running when another instance may reclaim it: do not start it. It
		// stays pending and is reclaimed after ClaimIdle, like an entry of a
		// stalled instance, so read-ahead never makes a task run twice at once.
		r.untrack(d.entry)
		r.stats.deferred.Add(1)
		r.emit(Event{Kind: EventTaskDeferred, TaskID: d.id, Task: d.task, Attempt: d.attempt, Duration: now.Sub(d.readSent)})
		return
	}
	if d.reclaimed {
		r.stats.reclaimed.Add(1)
		r.emit(Event{Kind: EventTaskReclaimed, TaskID: d.id, Task: d.task, Attempt: d.attempt})
	}
	r.stats.started.Add(1)
	r.emit(Event{Kind: EventTaskStarted, TaskID: d.id, Task: d.task, Attempt: d.attempt})
	start := r.clock.Now()
	err := r.run(t, d, start)
	took := r.clock.Since(start)
	r.ranNS.Add(int64(took))
	r.ran.Add(1)
	if !r.settling(d) {
		return // a graceful Stop ran out of time and handed it back
	}
	if r.ctx.Err() != nil {
		return // killed: the entry stays pending, for another instance to reclaim
	}
	r.settle(d, t, err, took)
}

type taskIDKey struct{}

// TaskID returns the ID of the task a handler's ctx belongs to (the ID
// Dispatch returned), or "" for any other ctx. A task keeps its ID across
// retries, reclaims and hand-backs, so a handler can use it to be idempotent.
func TaskID(ctx context.Context) string {
	id, _ := ctx.Value(taskIDKey{}).(string)
	return id
}

// run calls the handler, started at start, with a ctx cancelled at the
// task's Timeout and when it returns. Under the real clock that ctx is d's
// handlerCtx, which sets a timer only if the handler looks at it; under an
// injected clock, the clock's WithTimeout. A panic is a failure like any
// other: one bad task must not take the instance down.
func (r *Runner) run(t Task, d *delivery, start time.Time) (err error) {
	if t.Handler == nil {
		return fmt.Errorf("%w %q on this instance", ErrUnknownTask, d.task)
	}
	var ctx context.Context
	if r.realClock {
		d.ctx.init(r.taskCtx, d.id, start, t.Timeout)
		ctx = &d.ctx
		defer func() { d.ctx.end(time.Now()) }()
	} else {
		c, cancel := r.clock.WithTimeout(context.WithValue(r.taskCtx, taskIDKey{}, d.id), t.Timeout)
		defer cancel()
		ctx = c
	}
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("task handler panicked", "task", d.task, "id", d.id, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("handler panicked: %v", p)
		}
	}()
	return t.Handler(ctx, d.payload)
}

// settle acknowledges a finished delivery and, when the handler failed,
// schedules its retry or dead-letters it, each in one script with the
// acknowledgement; then d leaves the in-flight registry (settled). A success
// is acknowledged in a batch (acks.go, which unregisters it once answered),
// unless AckBatch is negative. A Redis error leaves the entry pending: it is
// reclaimed and run again after ClaimIdle, never lost.
func (r *Runner) settle(d *delivery, t Task, failure error, took time.Duration) {
	if failure == nil {
		r.ackLater(ack{d: d, took: took})
		return
	}
	defer r.settled(d)
	keys := []string{r.keys.stream, r.keys.metricsN, r.keys.metricsUS}
	args := []any{r.cfg.Group, d.entry, d.task, took.Microseconds()}
	ev := Event{TaskID: d.id, Task: d.task, Attempt: d.attempt, Duration: took, Err: failure}
	switch {
	case t.Handler != nil && d.attempt <= t.MaxRetries:
		// (A malformed entry or an unknown task has no Handler: it goes
		// straight to the dead letters, where an operator can see it.)
		keys = append(keys, r.keys.delayed)
		args = append(args, d.id, d.payload, d.attempt+1, r.backoff(d.attempt).Milliseconds())
		acked, err := retryScript.Run(r.ctx, r.rdb, keys, args...).Int64()
		if err != nil {
			r.fail(fmt.Errorf("runner: scheduling the retry of task %s (%s): %w", d.id, d.task, err))
			return
		}
		r.stats.failed.Add(1)
		ev.Kind, ev.Retry, ev.Duplicate = EventTaskFailed, acked == 1, acked == 0
		r.emit(ev)
	default:
		keys = append(keys, r.keys.dead)
		args = append(args, d.id, d.payload, d.attempt, failure.Error(), r.id)
		acked, err := deadScript.Run(r.ctx, r.rdb, keys, args...).Int64()
		if err != nil {
			r.fail(fmt.Errorf("runner: dead-lettering task %s (%s): %w", d.id, d.task, err))
			return
		}
		r.stats.failed.Add(1)
		ev.Kind, ev.Duplicate = EventTaskFailed, acked == 0
		r.emit(ev)
		if acked == 1 {
			r.stats.deadLettered.Add(1)
			ev.Kind = EventTaskDeadLettered
			r.emit(ev)
		}
	}
}

// backoff is the delay before the retry that follows attempt: RetryBackoff,
// doubled per attempt, capped at 5 minutes.
func (r *Runner) backoff(attempt int) time.Duration {
	d := r.cfg.RetryBackoff
	for i := 1; i < attempt && d < maxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, maxRetryBackoff)
}
