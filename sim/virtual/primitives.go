package virtual

import (
	"context"
	"errors"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/faults"
)

// faultWorld is the world as package faults drives it: its primitives.
// Each acts on the model at the current virtual time; the faults whose span
// ends later (Redis back, a failover's switch, a migration done) keep their
// completion in doneFns for the event that ends it.
type faultWorld world

var _ faults.World = (*faultWorld)(nil)

var errNotRunning = errors.New("not running")

func (fw *faultWorld) w() *world { return (*world)(fw) }

// Running: the slot has a live incarnation.
func (fw *faultWorld) Running(i int) bool { return fw.slots[i].cur != nil }

// Incarnation: the live incarnation's number (its index among the run's).
func (fw *faultWorld) Incarnation(i int) (int, bool) {
	in := fw.slots[i].cur
	if in == nil {
		return 0, false
	}
	return int(in.n), true
}

// Leading: its live incarnation believes it leads.
func (fw *faultWorld) Leading(i int) bool {
	in := fw.slots[i].cur
	return in != nil && in.leading
}

// Record records e at the current virtual time.
func (fw *faultWorld) Record(e model.Event) { fw.w().record(e) }

// Fail notes a harness error (the run's Errors). No primitive of the
// model fails: one would be a defect of the model, which the run shows.
func (fw *faultWorld) Fail(err error) { fw.errs = append(fw.errs, err.Error()) }

// Crash, Stop, Pause, Resume: see faults.World.
func (fw *faultWorld) Crash(i int)                    { fw.w().crash(fw.slots[i]) }
func (fw *faultWorld) Stop(i int)                     { fw.w().stop(fw.slots[i]) }
func (fw *faultWorld) Pause(i int, suspend bool) bool { return fw.w().pause(fw.slots[i], suspend) }
func (fw *faultWorld) Resume(i int)                   { fw.w().resume(fw.slots[i]) }

// Restart starts the slot again: at once if it is down, once its graceful
// stop is done if it is winding down; not if it is up.
func (fw *faultWorld) Restart(i int) (bool, error) {
	s := fw.slots[i]
	switch {
	case s.winding != nil:
		s.restart = true // starts once the old one is down
	case s.cur == nil:
		fw.w().start(s)
	default:
		return false, nil
	}
	return true, nil
}

// Clock sets the live incarnation's clock rate. A jump moves only the wall
// reading, which nothing of the elector reads (see inc): nothing to do.
func (fw *faultWorld) Clock(i int, rate float64, _ time.Duration) error {
	in := fw.slots[i].cur
	if in == nil {
		return errNotRunning
	}
	if r := rateOf(rate); rate > 0 && r != in.rate {
		fw.w().rebase(in, r, in.frozen)
	}
	return nil
}

// Partition adds or removes a partition of the mode on the slot's proxy
// (counted per mode and direction: see world.partition).
func (fw *faultWorld) Partition(i, _ int, mode string, on bool) error {
	d := -1
	if on {
		d = +1
	}
	fw.w().partition(fw.slots[i], mode, d)
	return nil
}

// Latency adds or removes a latency fault's base (Delay − Jitter) on the
// slot's proxy; its jitter, drawn per chunk from l.Rand, is the slot's
// link's, up or down (an incarnation started during the fault is as
// slow), as the real backends' (cleared by any latency heal).
func (fw *faultWorld) Latency(i int, l faults.Latency, on bool) error {
	s := fw.slots[i]
	n := &s.net
	base := l.Delay - l.Jitter
	if !on {
		base = -base
	}
	if l.Requests {
		n.latReq += base
	}
	if l.Replies {
		n.latRep += base
	}
	if !on {
		n.jReq, n.jRep, n.jRNG = 0, 0, nil
		fw.w().releaseHeld(s.cur)
		return nil
	}
	if l.Jitter > 0 {
		n.jReq, n.jRep = 0, 0
		if l.Requests {
			n.jReq = l.Jitter
		}
		if l.Replies {
			n.jRep = l.Jitter
		}
		n.jRNG = l.Rand
	}
	return nil
}

// later keeps done for the event that ends a fault's span, and returns the
// index the event carries.
func (fw *faultWorld) later(done func(string)) int32 {
	fw.doneFns = append(fw.doneFns, done)
	return int32(len(fw.doneFns) - 1)
}

// RestartRedis empties Redis and drops every connection; Redis is back
// (done) Options.RedisDowntime later.
func (fw *faultWorld) RestartRedis(_ context.Context, done func(string)) error {
	w := fw.w()
	w.redis.restart(w)
	for _, s := range w.slots {
		w.closeConns(s)
	}
	w.at(w.now+w.o.RedisDowntime, event{kind: evRedisUp, a: fw.later(done)})
	return nil
}

// FlushScripts empties the script cache.
func (fw *faultWorld) FlushScripts(context.Context) error {
	fw.redis.scripts = 0
	return nil
}

// PauseRedis starts a pause of Redis's clients (its end is the
// schedule's: the heal, on time in virtual time, ends it) or ends it,
// running what it held.
func (fw *faultWorld) PauseRedis(_ context.Context, mode string, _ time.Duration, on bool) error {
	r := &fw.redis
	if on {
		r.paused, r.pauseAll = true, mode == model.RedisPauseAll
		return nil
	}
	r.unpause(fw.w())
	return nil
}

// Failover holds the replica's copy of the lease as it is now if there is a
// lag, and switches (done, then the promotion) lag +
// Options.FailoverSwitch later.
func (fw *faultWorld) Failover(_ context.Context, lag time.Duration, done func(string)) error {
	w := fw.w()
	if lag > 0 {
		// The replica stops applying writes: what it has of the lease
		// is what the primary has now.
		r := &w.redis
		r.get(w)
		r.replica = replicaCopy{holder: r.holder, expireAt: r.expireAt, token: r.token, rk: r.rk.clone()}
		r.replicaHeld = true
	}
	w.at(w.now+lag+w.o.FailoverSwitch, event{kind: evFailover, a: fw.later(done)})
	return nil
}

// MigrateSlot takes Options.Migration. MIGRATE carries the key with its
// TTL; the clients follow ASK and MOVED: nothing the lease sees but the
// time it takes.
func (fw *faultWorld) MigrateSlot(_ context.Context, done func(string)) error {
	w := fw.w()
	w.at(w.now+w.o.Migration, event{kind: evMigrated, a: fw.later(done)})
	return nil
}
