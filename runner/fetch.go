package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// delivery is one stream entry handed to this instance.
type delivery struct {
	entry   string // stream entry id, what XACK takes
	id      string // the task's own id
	task    string
	payload []byte
	attempt int

	err       error // not nil for a malformed entry (it is dead-lettered)
	reclaimed bool  // taken over with XAUTOCLAIM
	// settling (guarded by Runner.mu): it ran here and its outcome is on
	// its way to Redis (an acknowledgement queued or sent, a retry or dead
	// letter being written). It stays in the in-flight registry until then,
	// so the fetcher does not run it again when this instance's own
	// XAUTOCLAIM returns it, and a graceful Stop does not hand it back.
	settling bool
	// readSent is when the read that delivered it (XREADGROUP or
	// XAUTOCLAIM) was sent, by the runner's clock. Redis delivered it later,
	// and counts its idle time, which another instance's XAUTOCLAIM compares
	// with ClaimIdle, from the delivery: no other instance can take it over
	// before readSent + ClaimIdle (claimable).
	readSent time.Time

	ctx handlerCtx // the handler's ctx under the real clock (run)
}

// parseDelivery reads the fields Dispatch wrote.
func parseDelivery(m redis.XMessage) *delivery {
	d := &delivery{entry: m.ID}
	d.id, _ = m.Values["id"].(string)
	d.task, _ = m.Values["task"].(string)
	payload, _ := m.Values["payload"].(string)
	d.payload = []byte(payload)
	var err error
	switch a := m.Values["attempt"].(type) {
	case string:
		d.attempt, err = strconv.Atoi(a)
	default:
		d.attempt, err = strconv.Atoi(fmt.Sprint(a))
	}
	if d.id == "" || d.task == "" || err != nil || d.attempt < 1 {
		d.err = fmt.Errorf("runner: malformed stream entry %s: %v", m.ID, m.Values)
	}
	return d
}

// fetch feeds the worker pool until ctx is done: it reserves free slots
// (free workers plus up to ReadAhead waiting entries), takes over entries
// left idle for ClaimIdle (once per ChoreInterval, a full XAUTOCLAIM pass),
// else reads new entries, and hands them to the pool's workers.
func (r *Runner) fetch(ctx context.Context) {
	defer close(r.fetchDone)
	cursor := "0-0"
	nextClaim := r.clock.Now() // at once: pick up what a crashed incarnation left
	var ds []*delivery
	var meter taskMeter
	for {
		n, err := r.pool.reserve(ctx, r.cfg.Batch, func() time.Duration { return meter.average(r) })
		if err != nil {
			return
		}
		var msgs []redis.XMessage
		reclaimed := false
		sent := r.clock.Now()
		if !sent.Before(nextClaim) {
			r.claimBegin()
			msgs, cursor, err = r.rdb.XAutoClaim(r.ctx, &redis.XAutoClaimArgs{
				Stream: r.keys.stream, Group: r.cfg.Group, Consumer: r.id,
				MinIdle: r.cfg.ClaimIdle, Start: cursor, Count: int64(n),
			}).Result()
			if err != nil {
				err = fmt.Errorf("runner: reclaiming idle entries: %w", err)
				cursor = "0-0"
			}
			if cursor == "0-0" {
				nextClaim = r.clock.Now().Add(r.cfg.ChoreInterval)
			}
			reclaimed = true
			if err != nil || len(msgs) == 0 {
				// go-redis may return entries and an error (a reply
				// cut short): they are dropped, left pending here for
				// the next pass after ClaimIdle, and the window ends.
				r.claimEnd()
			} else if h := r.claimHook; h != nil {
				h()
			}
		}
		if err == nil && len(msgs) == 0 {
			reclaimed, sent = false, r.clock.Now()
			msgs, err = r.read(n)
		}
		if r.ctx.Err() != nil {
			// Killed: what was just delivered stays pending, for others to reclaim.
			r.pool.release(n)
			return
		}
		if err != nil {
			r.pool.release(n)
			r.recoverFetch(ctx, err)
			continue
		}
		ds = ds[:0]
		for _, m := range msgs {
			d := parseDelivery(m)
			d.reclaimed, d.readSent = reclaimed, sent
			ds = append(ds, d)
		}
		// Our own entries come back when we held them past ClaimIdle
		// (running, read ahead, or finished with their acknowledgement
		// still on its way, or answered while the pass was on the wire):
		// not twice.
		ds = r.track(ds, reclaimed)
		r.pool.release(n - len(ds))
		r.pool.admit(ds)
		clear(ds[:cap(ds)])
	}
}

// claimable is the earliest time another instance may take d over, by the
// runner's clock. It holds while that clock runs no slower than Redis's
// (which measures the idle time); one slow by a fraction f moves the true
// time f × ClaimIdle earlier.
func (r *Runner) claimable(d *delivery) time.Time {
	return d.readSent.Add(r.cfg.ClaimIdle)
}

// taskMeter is the fetcher's estimate of how long this instance's tasks take.
type taskMeter struct {
	ns, n int64         // Runner.ranNS and ran at the last sample
	avg   time.Duration // -1: no task finished yet
	known bool
}

// average folds the tasks finished since the last call into the estimate
// (each call's mean weighs half) and returns it, or -1 while no task has
// finished.
func (m *taskMeter) average(r *Runner) time.Duration {
	ns, n := r.ranNS.Load(), r.ran.Load()
	if dn := n - m.n; dn > 0 {
		sample := time.Duration((ns - m.ns) / dn)
		if m.known {
			sample = (m.avg + sample) / 2
		}
		m.avg, m.known, m.ns, m.n = sample, true, ns, n
	}
	if !m.known {
		return -1
	}
	return m.avg
}

// read asks for up to n new entries, waiting up to Block. It uses Start's
// context, not the fetcher's, so that a graceful Stop never abandons a read
// whose entries Redis has already delivered: those are run like the others.
func (r *Runner) read(n int) ([]redis.XMessage, error) {
	streams, err := r.rdb.XReadGroup(r.ctx, &redis.XReadGroupArgs{
		Group: r.cfg.Group, Consumer: r.id, Streams: []string{r.keys.stream, ">"},
		Count: int64(n), Block: r.cfg.Block,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("runner: reading the stream: %w", err)
	}
	var msgs []redis.XMessage
	for _, s := range streams {
		msgs = append(msgs, s.Messages...)
	}
	return msgs, nil
}

// recoverFetch reports a fetch error, recreates the group if it is gone (a
// Redis restart without persistence loses it), and pauses for Block so that
// an unreachable Redis is not hammered.
func (r *Runner) recoverFetch(ctx context.Context, err error) {
	r.fail(err)
	if strings.Contains(err.Error(), "NOGROUP") {
		if err := r.ensureGroup(ctx); err != nil {
			r.fail(err)
		}
	}
	t := r.clock.Timer(r.cfg.Block)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
