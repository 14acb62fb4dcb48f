package virtual

import (
	"errors"
	"slices"
	"time"
)

// Answers of the modelled Redis to runner commands that are errors Redis
// sends (a reply: go-redis does not retry them, the runner's acker does not
// re-send them), worded as Redis and the runner's fence word them.
var (
	errFenced    = errors.New("FENCED not the lease holder, or not its current token: a stale leader's chore, refused")
	errNoGroup   = errors.New("NOGROUP No such key or consumer group")
	errUnblocked = errors.New("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")
	errMoved     = errors.New("UNBLOCKED the stream key no longer exists")
)

// runnerKeys is what a runner group keeps in Redis besides the lease
// (runner/keys.go): the stream with its consumer group, the delayed ZSET,
// the metrics hashes, the live set and the published capacity. It is a
// value: a lossy failover's replica keeps a copy (clone).
type runnerKeys struct {
	group   bool     // the consumer group (and the stream) exist
	entries []sentry // the stream, in ID order: acknowledged entries are deleted
	lastSeq int64    // the last entry ID XADD made
	// delivered is the group's last-delivered ID: entries after it are new
	// to XREADGROUP's ">".
	delivered int64
	delayed   []delayedTask // due order, then insertion order (ZSET score, member)
	// samples since the last metrics reset (metrics:n summed over tasks).
	samples int64
	live    []liveInstance // the heartbeat ZSET
	// the capacity hash: version, capacity, leader.
	capVersion int64
	capacity   int
	capLeader  string
}

// sentry is a stream entry: the task it carries and, once the group
// delivered it, its pending-entries-list record.
type sentry struct {
	seq     int64
	task    string
	attempt int
	owner   string        // the consumer it is pending under; "" while new
	at      time.Duration // its last delivery (Redis time): XAUTOCLAIM's idle
}

type delayedTask struct {
	dueMS   int64
	task    string
	attempt int
}

type liveInstance struct {
	id       string
	expireAt time.Duration
}

// clone copies k deep, as a replica holds it.
func (k runnerKeys) clone() runnerKeys {
	k.entries = slices.Clone(k.entries)
	k.delayed = slices.Clone(k.delayed)
	k.live = slices.Clone(k.live)
	return k
}

// nowMS is Redis's TIME in milliseconds, as the runner's scripts read it.
func (w *world) nowMS() int64 { return redisEpochUS/1000 + int64(w.now/time.Millisecond) }

// xadd appends a task to the stream (XADD *) and serves the reads blocked
// on it.
func (w *world) xadd(task string, attempt int) {
	k := &w.redis.rk
	k.lastSeq++
	k.entries = append(k.entries, sentry{seq: k.lastSeq, task: task, attempt: attempt})
	w.serveBlocked()
}

// deliverNew delivers up to n new entries to consumer (XREADGROUP ">").
func (w *world) deliverNew(consumer string, n int) []sentry {
	k := &w.redis.rk
	var out []sentry
	for i := range k.entries {
		e := &k.entries[i]
		if e.seq <= k.delivered {
			continue
		}
		if len(out) == n {
			break
		}
		e.owner, e.at = consumer, w.now
		k.delivered = e.seq
		out = append(out, *e)
	}
	return out
}

// autoclaim is XAUTOCLAIM from the start of the stream: up to n entries
// pending for at least minIdle change owner to consumer, their idle time
// reset.
func (w *world) autoclaim(consumer string, n int, minIdle time.Duration) []sentry {
	k := &w.redis.rk
	var out []sentry
	for i := range k.entries {
		e := &k.entries[i]
		if e.owner == "" || w.now-e.at < minIdle {
			continue
		}
		if len(out) == n {
			break
		}
		e.owner, e.at = consumer, w.now
		out = append(out, *e)
	}
	return out
}

// ack acknowledges and deletes the entry (XACK, XDEL): false when it was
// not pending (another instance acknowledged it first, or a lossy failover
// took it back to new... or away).
func (w *world) ack(seq int64) bool {
	k := &w.redis.rk
	i, ok := slices.BinarySearchFunc(k.entries, seq, func(e sentry, s int64) int { return int(e.seq - s) })
	if !ok || k.entries[i].owner == "" {
		return false
	}
	k.entries = slices.Delete(k.entries, i, i+1)
	k.samples++
	return true
}

// pendingCount is XPENDING's count.
func (k *runnerKeys) pendingCount() int {
	n := 0
	for _, e := range k.entries {
		if e.owner != "" {
			n++
		}
	}
	return n
}

// blockedRead is an XREADGROUP that Redis holds until an entry comes or
// its Block passes.
type blockedRead struct {
	c   *call
	gen uint32
}

// serveBlocked hands new entries to the reads blocked on the stream, in
// the order they blocked, as Redis serves blocked clients.
func (w *world) serveBlocked() {
	r := &w.redis
	for len(r.readers) > 0 && r.rk.delivered < r.rk.lastSeq {
		b := r.readers[0]
		r.readers = r.readers[1:]
		if !w.stillReads(b) {
			continue // its client gave up or died: Redis dropped it
		}
		rc := b.c.rc
		rc.got = w.deliverNew(rc.in.eid, rc.n)
		w.reply(b.c, b.gen, true, 0, false)
	}
}

// stillReads: the attempt that sent the blocked read still waits for it.
func (w *world) stillReads(b blockedRead) bool {
	c := b.c
	return !c.killed && !c.done && c.gen == b.gen && c.reading
}

// blockEnd ends a blocked read whose Block passed: a nil reply.
func (w *world) blockEnd(id int32, gen uint32) {
	r := &w.redis
	for i, b := range r.readers {
		if b.c.id == id && b.gen == gen {
			r.readers = slices.Delete(r.readers, i, i+1)
			if w.stillReads(b) {
				b.c.rc.got = nil
				w.reply(b.c, b.gen, true, 0, false)
			}
			return
		}
	}
}

// unblockAll answers every blocked read with err: a primary turned
// replica unblocks its clients (errUnblocked), and so does a node whose
// slot migrated away (errMoved).
func (w *world) unblockAll(err error) {
	r := &w.redis
	readers := r.readers
	r.readers = nil
	for _, b := range readers {
		if w.stillReads(b) {
			b.c.rc.err = err
			w.reply(b.c, b.gen, true, 0, false)
		}
	}
}
