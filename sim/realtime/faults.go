package realtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/faults"
)

// faultWorld is a run as package faults drives it: the primitives, on the
// instances' shells, their Toxiproxy proxies and the environment's Redis.
// Each returns when its action is done, so a completion (Redis back, the
// failover's switch, the migration) is called before it returns.
type faultWorld run

var _ faults.World = (*faultWorld)(nil)

func (fw *faultWorld) r() *run { return (*run)(fw) }

// Running: the shell has a live incarnation (an agent: its hello read).
func (fw *faultWorld) Running(i int) bool { return fw.instances[i].Live() }

// Incarnation: how many times the run started the shell (run.start), if
// an incarnation is live.
func (fw *faultWorld) Incarnation(i int) (int, bool) {
	return fw.starts[i], fw.instances[i].Live()
}

// Leading: the live incarnation believes it leads.
func (fw *faultWorld) Leading(i int) bool { return fw.instances[i].Leading() }

// Record records e with the run's clock.
func (fw *faultWorld) Record(e model.Event) { fw.rec.Record(e) }

// Fail notes a harness error.
func (fw *faultWorld) Fail(err error) { fw.r().fail(err) }

// Crash, Stop, Pause, Resume and Clock: the shell's.
func (fw *faultWorld) Crash(i int)                    { fw.instances[i].Crash() }
func (fw *faultWorld) Stop(i int)                     { fw.winding[i] = true; fw.instances[i].Stop() }
func (fw *faultWorld) Pause(i int, suspend bool) bool { return fw.instances[i].Pause(suspend) }
func (fw *faultWorld) Resume(i int)                   { fw.instances[i].Resume() }
func (fw *faultWorld) Clock(i int, rate float64, jump time.Duration) error {
	return fw.instances[i].Clock(rate, jump)
}

// Restart starts the shell again once its last incarnation is fully down;
// not if it is up or starting. After a crash that is a reap away, and the
// shell starts here; after a graceful stop it may be seconds (the
// release, or TTL + 5 s for an agent that ignores SIGTERM), which the
// schedule does not wait out: a waiter waits, and the schedule's goroutine
// starts the shell once it is down (run.until), as the virtual world
// starts a slot once its stop is done. A second restart while one waits
// is that one.
func (fw *faultWorld) Restart(i int) (bool, error) {
	in := fw.instances[i]
	switch {
	case fw.pending[i]:
		return true, nil
	case up(in):
		return false, nil
	case fw.winding[i]:
		fw.pending[i] = true
		fw.waiters.Go(func() {
			in.Wait()
			select {
			case fw.downs <- i:
			case <-fw.over:
			}
		})
		return true, nil
	}
	in.Wait() // the crashed incarnation is fully down
	return true, fw.r().start(i)
}

// partitionStreams are the streams a partition mode's timeout or
// reset_peer toxic is on, and its type.
func partitionStreams(mode string) (typ string, streams []string) {
	switch mode {
	case model.PartitionBlackhole:
		return "timeout", []string{"upstream", "downstream"}
	case model.PartitionBlackholeRequests:
		return "timeout", []string{"upstream"}
	case model.PartitionBlackholeReplies:
		return "timeout", []string{"downstream"}
	case model.PartitionReset:
		return "reset_peer", []string{"upstream"}
	}
	return "", nil
}

// Partition cuts (or restores) instance i's proxies in the mode: refuse
// disables them (connections closed, dials refused); the others add a
// timeout 0 toxic (silence, sockets open) or a reset_peer one, named after
// the fault, so that two faults' partitions overlap on a proxy as two
// toxics. A proxy is disabled by the first refuse partition on it and
// enabled by the last one's heal (refused counts them), so an inner
// partition's heal does not end an outer one early.
func (fw *faultWorld) Partition(i, fault int, mode string, on bool) error {
	var undo []func() error
	rollback := func(err error) error {
		for _, u := range undo {
			err = errors.Join(err, u())
		}
		return err
	}
	var errs []error
	typ, streams := partitionStreams(mode)
	for _, p := range fw.proxies[i] {
		if mode == model.PartitionRefuse {
			if !on {
				errs = append(errs, fw.refuse(p, -1))
				continue
			}
			if err := fw.refuse(p, +1); err != nil {
				return rollback(err)
			}
			undo = append(undo, func() error { return fw.refuse(p, -1) })
			continue
		}
		for _, s := range streams {
			tn := fmt.Sprintf("partition-%d-%s", fault, s)
			if !on {
				errs = append(errs, p.RemoveToxic(tn))
				continue
			}
			if _, err := p.AddToxic(tn, typ, s, 1, toxiclient.Attributes{"timeout": 0}); err != nil {
				return rollback(err)
			}
			undo = append(undo, func() error { return p.RemoveToxic(tn) })
		}
	}
	return errors.Join(errs...)
}

// refuse adds (d = +1) or removes (d = −1) a refuse partition on p:
// disabled as the count goes 0 → 1, enabled as it goes 1 → 0. A failed
// call leaves the count as it was.
func (fw *faultWorld) refuse(p *toxiclient.Proxy, d int) error {
	if fw.refused == nil {
		fw.refused = map[*toxiclient.Proxy]int{}
	}
	n := fw.refused[p]
	var err error
	switch {
	case d > 0 && n == 0:
		err = p.Disable()
	case d < 0 && n == 1:
		err = p.Enable()
	case d < 0 && n == 0:
		return nil // nothing of this run's refuses it
	}
	if err != nil {
		return err
	}
	fw.refused[p] = n + d
	return nil
}

// ErrNoJitterGate is a Shell's answer to Jitter when its connection passes
// no gate of the harness's to draw the jitter in (an agent process).
var ErrNoJitterGate = errors.New("the connection has no gate for seeded latency jitter")

// Latency adds (or removes) Delay ± Jitter on instance i's traffic in the
// fault's direction(s): Toxiproxy delays every chunk by Delay − Jitter, and
// the instance's Gate adds a uniform [0, 2×Jitter] per chunk drawn from
// l.Rand (see Gate.SetJitter for why not Toxiproxy's jitter). An instance
// without a gate (ErrNoJitterGate) gets Toxiproxy's own jitter: the same
// uniform Delay ± Jitter per chunk, but unseeded, so its draws differ from
// run to run. Down or up, the instance gets the jitter: a restart during
// the fault keeps it (its new connection is as slow).
func (fw *faultWorld) Latency(i int, l faults.Latency, on bool) error {
	in := fw.instances[i]
	var streams []string
	if l.Requests {
		streams = append(streams, "upstream")
	}
	if l.Replies {
		streams = append(streams, "downstream")
	}
	name := func(s string) string { return fmt.Sprintf("latency-%d-%s", l.Fault, s) }
	if !on {
		var errs []error
		if l.Jitter > 0 {
			_ = in.Jitter(0, 0, nil)
		}
		for _, p := range fw.proxies[i] {
			for _, s := range streams {
				errs = append(errs, p.RemoveToxic(name(s)))
			}
		}
		return errors.Join(errs...)
	}
	base, proxyJitter := l.Delay-l.Jitter, time.Duration(0)
	jittered := false
	if l.Jitter > 0 {
		var req, rep time.Duration
		if l.Requests {
			req = l.Jitter
		}
		if l.Replies {
			rep = l.Jitter
		}
		switch err := in.Jitter(req, rep, l.Rand); {
		case errors.Is(err, ErrNoJitterGate):
			base, proxyJitter = l.Delay, l.Jitter
		case err != nil:
			return fmt.Errorf("instance %d: %w", i, err)
		default:
			jittered = true
		}
	}
	var added []func() error
	for _, p := range fw.proxies[i] {
		for _, s := range streams {
			if _, err := p.AddToxic(name(s), "latency", s, 1, toxiclient.Attributes{"latency": base.Milliseconds(), "jitter": proxyJitter.Milliseconds()}); err != nil {
				if jittered {
					_ = in.Jitter(0, 0, nil)
				}
				for _, u := range added {
					err = errors.Join(err, u())
				}
				return err
			}
			tn := name(s)
			added = append(added, func() error { return p.RemoveToxic(tn) })
		}
	}
	return nil
}

// RestartRedis restarts the Redis the harness owns; it is back (done) once
// the restart returns and the truth lane watches it again.
func (fw *faultWorld) RestartRedis(ctx context.Context, done func(string)) error {
	if fw.env.RestartRedis == nil {
		return fmt.Errorf("redis-restart: this environment cannot restart Redis (an external Redis was given)")
	}
	if err := fw.env.RestartRedis(ctx); err != nil {
		return err
	}
	fw.truth.Reset(ctx)
	done("")
	return nil
}

// FlushScripts empties the script cache of every Redis server.
func (fw *faultWorld) FlushScripts(ctx context.Context) error {
	t := fw.env.Topology
	if t == nil {
		return fw.admin.ScriptFlush(ctx).Err()
	}
	for _, node := range t.Nodes {
		c := redis.NewClient(fw.env.Auth.Apply(&redis.Options{Addr: node, MaxRetries: -1}))
		err := c.ScriptFlush(ctx).Err()
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("SCRIPT FLUSH on %s: %w", node, err)
		}
	}
	return nil
}

// PauseRedis sends CLIENT PAUSE mode (on) through the harness's unproxied
// admin client, for what is left until end by the run's clock (at least
// 1 ms), or CLIENT UNPAUSE (off). An all pause blocks CLIENT UNPAUSE as
// well (measured, Redis 7.0.15: it returned when the pause ran out), so its
// end is Redis's own timer, at the fault's heal. That also holds on a
// Ctrl-C: an all pause on a Redis given to the run outlives the run by at
// most what was left of it; a write pause is unpaused by the heal the
// run's early end makes.
func (fw *faultWorld) PauseRedis(ctx context.Context, mode string, end time.Duration, on bool) error {
	if fw.env.Topology != nil {
		return fmt.Errorf("redis-pause: only a single Redis is paused")
	}
	switch {
	case on:
		d := end - fw.rec.Since()
		return fw.admin.Do(ctx, "CLIENT", "PAUSE", max(d.Milliseconds(), 1), strings.ToUpper(mode)).Err()
	case mode == model.RedisPauseAll:
		return nil
	}
	return fw.admin.Do(ctx, "CLIENT", "UNPAUSE").Err()
}

// Failover promotes a replica of the node that serves the lease. The switch
// (done, with the bytes of writes a lossy promotion dropped) is when the
// promoted node serves: the truth lane and, with redis: replicated, the
// instances' proxies then point at it.
func (fw *faultWorld) Failover(ctx context.Context, lag time.Duration, done func(string)) error {
	t := fw.env.Topology
	key := election.LeaderKey(fw.group)
	switched := false
	err := t.Failover(ctx, key, lag, func(addr string, lost int64) error {
		// The truth lane moves first: from the promotion on, the old
		// primary resyncs from the new one, and a poll there would see
		// the key gone for that reason.
		if err := fw.truth.Follow(ctx, addr, "failover"); err != nil {
			return err
		}
		if t.Kind == model.RedisReplicated {
			// The instances' address follows the primary: the proxies
			// cut their connections and dial the new one. (A proxy a
			// refuse partition disabled stays disabled; its heal enables
			// it on the new upstream.)
			for i, ps := range fw.proxies {
				for _, p := range ps {
					was := p.Upstream
					p.Upstream = addr
					if err := p.Save(); err != nil {
						p.Upstream = was
						return fmt.Errorf("pointing instance %d's proxy at %s: %w", i, addr, err)
					}
				}
			}
		}
		switched = true
		detail := "promoted " + addr
		if lag > 0 {
			detail += fmt.Sprintf(", %d bytes of writes dropped", lost)
		}
		done(detail)
		return nil
	})
	if err != nil && switched {
		// Healed already: report the error without a second heal.
		fw.r().fail(fmt.Errorf("after the redis-failover switched: %w", err))
		return nil
	}
	return err
}

// MigrateSlot moves the lease's slot and points the truth lane at its new
// node; done once both are over.
func (fw *faultWorld) MigrateSlot(ctx context.Context, done func(string)) error {
	to, err := fw.env.Topology.Migrate(ctx, election.LeaderKey(fw.group))
	if err == nil {
		err = fw.truth.Follow(ctx, to, "migration")
	}
	if err != nil {
		return err
	}
	done("")
	return nil
}
