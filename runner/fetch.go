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

	err       error     // not nil for a malformed entry (it is dead-lettered)
	reclaimed bool      // taken over with XAUTOCLAIM
	queued    bool      // waited in the read-ahead queue (set by the pool)
	got       time.Time // when the read returned it, by the runner's clock
}

// parseDelivery reads the fields Dispatch wrote.
func parseDelivery(m redis.XMessage) (delivery, error) {
	d := delivery{entry: m.ID}
	id, _ := m.Values["id"].(string)
	task, _ := m.Values["task"].(string)
	payload, _ := m.Values["payload"].(string)
	attempt, err := strconv.Atoi(fmt.Sprint(m.Values["attempt"]))
	d.id, d.task, d.payload, d.attempt = id, task, []byte(payload), attempt
	if id == "" || task == "" || err != nil || attempt < 1 {
		return d, fmt.Errorf("runner: malformed stream entry %s: %v", m.ID, m.Values)
	}
	return d, nil
}

// fetch feeds the worker pool until ctx is done: it reserves free slots
// (free workers plus up to ReadAhead waiting entries), takes over entries
// left idle for ClaimIdle (once per ChoreInterval, a full XAUTOCLAIM pass),
// else reads new entries, and starts a worker for each entry a free worker
// can take; the others wait in the read-ahead queue for the next worker that
// finishes.
func (r *Runner) fetch(ctx context.Context) {
	defer close(r.fetchDone)
	cursor := "0-0"
	nextClaim := r.clock.Now() // at once: pick up what a crashed incarnation left
	for {
		for _, d := range r.pool.startable() {
			go r.work(d) // the pool grew while entries waited
		}
		n, err := r.pool.reserve(ctx, r.cfg.Batch)
		if err != nil {
			return
		}
		if n == 0 {
			continue // startable entries, no slot to read into
		}
		var msgs []redis.XMessage
		reclaimed := false
		if !r.clock.Now().Before(nextClaim) {
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
		}
		if err == nil && len(msgs) == 0 {
			reclaimed = false
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
		r.pool.release(n - len(msgs))
		now := r.clock.Now()
		for _, m := range msgs {
			d, err := parseDelivery(m)
			d.err, d.reclaimed, d.got = err, reclaimed, now
			if !r.track(&d) {
				// Our own running entry, reclaimed because it ran past ClaimIdle.
				r.pool.release(1)
				continue
			}
			if r.pool.admit(&d) {
				go r.work(&d)
			}
		}
	}
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
