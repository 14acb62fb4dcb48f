package runner

import (
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Batched acknowledgements. A worker whose handler returned nil hands the
// delivery to the acker and takes its next task at once; the acker
// acknowledges (XACK, then deletes with XTRIM MINID or XDEL) and records the
// samples of everything that finished meanwhile, up to AckBatch entries, in
// one script (completeScript).
//
// The crash window this changes: before, a task that completed was
// acknowledged before its worker moved on, so a crash could repeat at most
// the tasks whose acknowledgement was on the wire (one per worker). Now it
// can repeat every completed task not yet acknowledged: at most AckBatch
// waiting in the channel, AckBatch in the script in flight and one per
// worker blocked handing over. Those stay pending under the crashed
// consumer and run again after ClaimIdle, exactly like the tasks it was
// running. Nothing is lost: an entry leaves the pending list only through
// XACK. An acknowledgement whose reply was lost is re-sent while no other
// instance can have taken its entries over (flushAcks), so a task this
// instance acknowledged is reported completed, unless Redis did not answer
// in time or its answer cannot tell (then an error says so, and
// EventTaskAcknowledging was the last word). A graceful Stop flushes the
// acker before it leaves the group.

// ack is a completed delivery waiting for its acknowledgement.
type ack struct {
	d    *delivery
	took time.Duration
}

// startAcker starts the acker, unless acknowledgements are synchronous.
func (r *Runner) startAcker() {
	r.ackDone = make(chan struct{})
	if r.cfg.AckBatch < 0 {
		r.ackClosed = true
		close(r.ackDone)
		return
	}
	r.acks = make(chan ack, r.cfg.AckBatch)
	r.ackStop = make(chan struct{})
	go r.acker()
}

// ackLater queues a completed delivery for the acker; once the acker is
// closed (AckBatch < 0, or after Stop's flush) it acknowledges it here.
func (r *Runner) ackLater(a ack) {
	r.ackMu.RLock()
	if !r.ackClosed {
		r.acks <- a // the acker runs until ackClosed is set, so this returns
		r.ackMu.RUnlock()
		return
	}
	r.ackMu.RUnlock()
	r.flushAcks([]ack{a})
}

// closeAcks stops the acker after it acknowledged everything queued (nothing,
// when the runner was killed) and waits for it.
func (r *Runner) closeAcks() {
	r.ackMu.Lock()
	if !r.ackClosed {
		r.ackClosed = true
		close(r.ackStop)
	}
	r.ackMu.Unlock()
	<-r.ackDone
}

// acker acknowledges what the workers queued, in batches of up to AckBatch:
// whatever finished while the previous batch was on the wire.
func (r *Runner) acker() {
	defer close(r.ackDone)
	batch := make([]ack, 0, r.cfg.AckBatch)
	for {
		batch = batch[:0]
		select {
		case a := <-r.acks:
			batch = append(batch, a)
		case <-r.ackStop:
			for {
				select {
				case a := <-r.acks:
					batch = append(batch, a)
					if len(batch) == cap(batch) {
						r.flushAcks(batch)
						batch = batch[:0]
					}
				default:
					r.flushAcks(batch)
					return
				}
			}
		}
	more:
		for len(batch) < cap(batch) {
			select {
			case a := <-r.acks:
				batch = append(batch, a)
			default:
				break more
			}
		}
		r.flushAcks(batch)
	}
}

// flushAcks acknowledges a batch of completed deliveries in one script and
// reports them. A killed runner sends nothing.
//
// A call that fails without an answer from Redis (a timeout, a closed
// connection) may have applied: only its reply may be lost. So flushAcks
// re-sends the script (see untilAnswered) — it is idempotent: an entry
// already acknowledged answers 0 and records no sample again — until Redis
// answers or another instance may have taken an entry of the batch over
// (claimable: ClaimIdle after the read that delivered it was sent). Then
// each entry is judged by its answer:
//
//   - 1: this call acknowledged it: completed.
//   - 0 on the runner's first call: another instance acknowledged it first,
//     a previous owner or one that took it over after ClaimIdle: completed,
//     Duplicate. (go-redis may have re-sent that call itself: the runner
//     cannot see that, and takes the 0 for another instance's.)
//   - 0 on a re-sent call answered before the entry was claimable, for an
//     entry this instance read first (XREADGROUP, not XAUTOCLAIM): no other
//     instance has had it, so one of this instance's lost attempts
//     acknowledged it: completed, not a Duplicate.
//   - 0 on any other re-sent call: the lost attempt or another instance may
//     have acknowledged it (an entry taken over from another instance, whose
//     previous owner may finish it at any time; an answer that came when
//     another instance may have taken the entry over): not reported
//     completed; the error says the outcome is unknown.
//
// When Redis does not answer within the bound, the error says the outcome
// is unknown: an entry the lost calls did not acknowledge stays pending and
// runs again after ClaimIdle; one they did is gone, and its completion is
// never reported (EventTaskAcknowledging was).
func (r *Runner) flushAcks(batch []ack) {
	if len(batch) == 0 {
		return
	}
	ds := make([]*delivery, len(batch))
	for i, a := range batch {
		ds[i] = a.d
	}
	// Held here until answered, so that this instance's own XAUTOCLAIM does
	// not run an entry again while its acknowledgement is slow.
	defer r.settled(ds...)
	if h := r.ackHook; h != nil {
		h(len(batch)) // tests: hold the batch, to crash with it unacknowledged
	}
	if r.ctx.Err() != nil {
		return
	}
	args := make([]any, 0, 2+3*len(batch))
	args = append(args, r.cfg.Group, len(batch))
	claimable := r.claimable(batch[0].d)
	for _, a := range batch {
		args = append(args, a.d.entry, a.d.task, a.took.Microseconds())
		claimable = earliest(claimable, r.claimable(a.d))
		r.emit(Event{Kind: EventTaskAcknowledging, TaskID: a.d.id, Task: a.d.task, Attempt: a.d.attempt})
	}
	var acked []int64
	resent, at, err := r.untilAnswered(claimable, func() (err error) {
		acked, err = completeScript.Run(r.ctx, r.rdb,
			[]string{r.keys.stream, r.keys.metricsN, r.keys.metricsUS}, args...).Int64Slice()
		return err
	})
	if err == nil && len(acked) != len(batch) {
		err = fmt.Errorf("script returned %d results for %d entries", len(acked), len(batch))
	}
	if err != nil {
		if r.ctx.Err() != nil {
			return // killed meanwhile: it reports nothing more
		}
		d := batch[0].d
		r.fail(fmt.Errorf("runner: acknowledging %d tasks (first %s, %s): %w", len(batch), d.id, d.task, err))
		return
	}
	var unknown []*delivery
	for i, a := range batch {
		duplicate := false
		if acked[i] == 0 {
			switch {
			case !resent:
				duplicate = true
			case a.d.reclaimed || !at.Before(r.claimable(a.d)):
				unknown = append(unknown, a.d)
				continue
			}
		}
		r.stats.completed.Add(1)
		r.emit(Event{Kind: EventTaskCompleted, TaskID: a.d.id, Task: a.d.task, Attempt: a.d.attempt,
			Duration: a.took, Duplicate: duplicate})
	}
	if len(unknown) > 0 {
		d := unknown[0]
		r.fail(fmt.Errorf("runner: acknowledging %d tasks (first %s, %s): a re-sent call found them acknowledged, "+
			"but another instance may have had them (taken over from one, or answered after ClaimIdle since their read), "+
			"so whether this instance's lost attempt or another instance acknowledged them is unknown",
			len(unknown), d.id, d.task))
	}
}

// untilAnswered runs call, and runs it again while it fails without an
// answer from Redis (anything but a Redis error reply), pausing 10 ms,
// doubling up to 1 s, between attempts. It gives up when the runner is
// killed; when the next attempt would go out at or after until (the time
// from which another instance may have taken the entries over, so that an
// answer no longer tells whether they run again); or, during a graceful
// Stop, when it would go out at or after the stop bound (StopTimeout,
// default TTL) since the Stop began — a Stop that begins during a pause
// ends it at once then. It reports whether call was re-sent, when the last
// attempt returned (by the runner's clock), and the last error, wrapped
// with the attempts when it gave up.
func (r *Runner) untilAnswered(until time.Time, call func() error) (resent bool, at time.Time, err error) {
	first := r.clock.Now()
	deadline := until
	stopping := r.stopping
	stopped := func() { // a graceful Stop began: its bound applies too
		stopping = nil
		deadline = earliest(deadline, r.stopAt.Add(r.stopBound()))
	}
	pause := 10 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err = call()
		at = r.clock.Now()
		if err == nil || answered(err) || r.ctx.Err() != nil {
			return attempt > 1, at, err
		}
		if h := r.resendHook; h != nil {
			h(attempt + 1)
		}
		t := r.clock.Timer(pause)
	wait:
		for {
			select {
			case <-stopping:
				stopped()
			default:
			}
			if !at.Add(pause).Before(deadline) {
				t.Stop()
				return attempt > 1, at, fmt.Errorf("no answer from Redis in %d attempts over %v, so whether it applied is unknown: %w",
					attempt, at.Sub(first).Round(time.Millisecond), err)
			}
			select {
			case <-t.C:
				break wait
			case <-stopping:
				stopped()
			case <-r.ctx.Done():
				t.Stop()
				return attempt > 1, at, err
			}
		}
		pause = min(2*pause, time.Second)
	}
}

// answered reports whether err is Redis's own answer (an error reply), as
// opposed to a failure that leaves open whether the command applied.
func answered(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
