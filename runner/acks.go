package runner

import (
	"fmt"
	"time"
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
// XACK. A graceful Stop flushes the acker before it leaves the group.

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
// reports them. A Redis error leaves them pending: they are reclaimed and run
// again after ClaimIdle, never lost. A killed runner sends nothing.
func (r *Runner) flushAcks(batch []ack) {
	if len(batch) == 0 {
		return
	}
	if h := r.ackHook; h != nil {
		h(len(batch)) // tests: hold the batch, to crash with it unacknowledged
	}
	if r.ctx.Err() != nil {
		return
	}
	type sample struct {
		task string
		n    int
		us   int64
	}
	var samples []sample // few task names per batch: a slice beats a map
	args := make([]any, 0, 2+len(batch)+3)
	args = append(args, r.cfg.Group, len(batch))
	for _, a := range batch {
		args = append(args, a.d.entry)
		i := 0
		for i < len(samples) && samples[i].task != a.d.task {
			i++
		}
		if i == len(samples) {
			samples = append(samples, sample{task: a.d.task})
		}
		samples[i].n++
		samples[i].us += a.took.Microseconds()
	}
	for _, s := range samples {
		args = append(args, s.task, s.n, s.us)
	}
	acked, err := completeScript.Run(r.ctx, r.rdb,
		[]string{r.keys.stream, r.keys.metricsN, r.keys.metricsUS}, args...).Int64Slice()
	if err == nil && len(acked) != len(batch) {
		err = fmt.Errorf("script returned %d results for %d entries", len(acked), len(batch))
	}
	if err != nil {
		d := batch[0].d
		r.fail(fmt.Errorf("runner: acknowledging %d tasks (first %s, %s): %w", len(batch), d.id, d.task, err))
		return
	}
	for i, a := range batch {
		r.stats.completed.Add(1)
		r.emit(Event{Kind: EventTaskCompleted, TaskID: a.d.id, Task: a.d.task, Attempt: a.d.attempt,
			Duration: a.took, Duplicate: acked[i] == 0})
	}
}
