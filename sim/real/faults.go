package real

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"

	"github.com/leaselab/leaselab/model"
)

// activeFault is a fault that has been applied and not yet healed.
type activeFault struct {
	id      int
	f       model.Fault
	targets []int
	heal    func() // undoes the fault; nil for instant faults
	note    string // what the heal could not do, for its FaultHealed
}

// resolveTargets picks the instances a fault hits, at the moment of injection.
func (r *run) resolveTargets(t model.Target) []int {
	var live []int
	leading := map[int]bool{}
	for i, in := range r.instances {
		if in.Live() {
			live = append(live, i)
			leading[i] = in.Leading()
		}
	}
	return t.Resolve(live, leading, r.rng.IntN)
}

// apply injects fault id and returns what heals it.
func (r *run) apply(ctx context.Context, id int, f model.Fault) (*activeFault, error) {
	a := &activeFault{id: id, f: f}
	detail := f.Describe()
	if !f.Kind.OnRedis() {
		a.targets = r.resolveTargets(f.Target)
		if f.Kind == model.FaultPause || f.Kind == model.FaultSuspend || f.Kind == model.FaultClock {
			// An index given by number may not be running (down, or an
			// agent still starting): a pause or clock fault has nothing
			// to act on there, and the timeline says so rather than
			// that it hit it.
			var live, not []int
			for _, i := range a.targets {
				if r.instances[i].Live() {
					live = append(live, i)
				} else {
					not = append(not, i)
				}
			}
			if len(not) > 0 {
				why := fmt.Sprintf("instance %v not running (down, or started and its start-up not done)", not)
				if len(live) == 0 {
					r.rec.Record(model.Event{Kind: model.FaultSkipped, Instance: -1, Fault: string(f.Kind), Mode: f.Mode, FaultID: id, Detail: why})
					return nil, nil
				}
				a.targets, detail = live, detail+"; skipped "+why
			}
		}
		if len(a.targets) == 0 {
			// A role that matches nobody (no leader right now, say) is not a
			// fault on everyone: nothing happens, and the timeline says so.
			r.rec.Record(model.Event{Kind: model.FaultSkipped, Instance: -1, Fault: string(f.Kind), Mode: f.Mode, FaultID: id,
				Detail: fmt.Sprintf("target %s matched no live instance", f.Target)})
			return nil, nil
		}
	}
	// Recorded before the action, so the analysis sees the fault come first
	// and the leaders it hit still leading at the moment of injection.
	r.rec.Record(model.Event{Kind: model.FaultApplied, Instance: -1, Fault: string(f.Kind), Mode: f.Mode, FaultID: id, Target: a.targets, Detail: detail, Instant: f.Instant()})
	var err error
	switch f.Kind {
	case model.FaultCrash, model.FaultStop:
		for _, i := range a.targets {
			if f.Kind == model.FaultCrash {
				r.instances[i].Crash()
			} else {
				r.instances[i].Stop()
			}
		}
		if f.Restart {
			targets := a.targets
			a.heal = func() {
				var already []int
				for _, i := range targets {
					in := r.instances[i]
					if up(in) {
						// Another fault's restart (overlapping this one)
						// started it again: a second Start would leave
						// that incarnation running unrecorded. The
						// virtual backend restarts only a down instance too.
						already = append(already, i)
						continue
					}
					in.Wait() // the old incarnation is fully down
					if err := in.Start(); err != nil {
						r.fail(err)
					}
				}
				if len(already) > 0 {
					a.note = fmt.Sprintf("instance %v not restarted: already up again (another fault's restart)", already)
				}
			}
		}
	case model.FaultPartition:
		a.heal, err = r.partition(a.targets, f.Mode)
	case model.FaultLatency:
		a.heal, err = r.latency(id, a.targets, f)
	case model.FaultPause, model.FaultSuspend:
		var paused []int
		for _, i := range a.targets {
			if r.instances[i].Pause(f.Kind == model.FaultSuspend) {
				paused = append(paused, i)
			}
		}
		a.heal = func() {
			for _, i := range paused {
				r.instances[i].Resume()
			}
		}
	case model.FaultClock:
		var bent []Shell
		for _, i := range a.targets {
			in := r.instances[i]
			if cerr := in.Clock(f.Rate, f.Jump); cerr != nil {
				err = errors.Join(err, fmt.Errorf("instance %d: %w", i, cerr))
				continue
			}
			bent = append(bent, in)
		}
		if f.Rate > 0 {
			a.heal = func() {
				for _, in := range bent {
					if err := in.Clock(1, 0); err != nil {
						r.fail(fmt.Errorf("healing a clock fault: %w", err))
					}
				}
			}
		}
	case model.FaultRedisRestart:
		if r.env.RestartRedis == nil {
			return nil, fmt.Errorf("redis-restart: this environment cannot restart Redis (an external Redis was given)")
		}
		err = r.env.RestartRedis(ctx)
		if err == nil {
			r.truth.Reset(ctx)
		}
	case model.FaultScriptFlush:
		err = r.flushScripts(ctx)
	case model.FaultRedisFailover:
		err = r.failover(ctx, id, f)
	case model.FaultSlotMigration:
		var to string
		if to, err = r.env.Topology.Migrate(ctx, election.LeaderKey(r.group)); err == nil {
			err = r.truth.Follow(ctx, to, "migration")
		}
	}
	if err != nil {
		// Undo what part of it took; the run goes on and says it failed.
		if a.heal != nil {
			a.heal()
		}
		r.rec.Record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(f.Kind), FaultID: id, Target: a.targets, Err: err.Error()})
		return nil, fmt.Errorf("applying fault %d (%s): %w", id, f.Kind, err)
	}
	if f.Instant() && f.Kind != model.FaultRedisFailover {
		// The action is over (Redis is back after a restart): the span
		// ends here, and with it the downtime the bounds need.
		r.rec.Record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(f.Kind), FaultID: id, Target: a.targets})
	}
	return a, nil
}

// flushScripts empties the script cache of every Redis server.
func (r *run) flushScripts(ctx context.Context) error {
	t := r.env.Topology
	if t == nil {
		return r.admin.ScriptFlush(ctx).Err()
	}
	for _, node := range t.Nodes {
		c := redis.NewClient(r.env.Auth.Apply(&redis.Options{Addr: node, MaxRetries: -1}))
		err := c.ScriptFlush(ctx).Err()
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("SCRIPT FLUSH on %s: %w", node, err)
		}
	}
	return nil
}

// failover promotes a replica of the node that serves the lease. Its span
// ends at the switch, when the promoted node serves (the FaultHealed is
// recorded then, with the bytes of writes a lossy promotion dropped): that
// is the time the replica's copy of the lease had to outlive
// (model.FaultSize.Failover), not the topology's settling that follows.
func (r *run) failover(ctx context.Context, id int, f model.Fault) error {
	t := r.env.Topology
	key := election.LeaderKey(r.group)
	switched := false
	err := t.Failover(ctx, key, f.Lag, func(addr string, lost int64) error {
		// The truth lane moves first: from the promotion on, the old
		// primary resyncs from the new one, and a poll there would see
		// the key gone for that reason.
		if err := r.truth.Follow(ctx, addr, "failover"); err != nil {
			return err
		}
		if t.Kind == model.RedisReplicated {
			// The instances' address follows the primary: the proxies
			// cut their connections and dial the new one. (A proxy a
			// refuse partition disabled stays disabled; its heal enables
			// it on the new upstream.)
			for i, ps := range r.proxies {
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
		if f.Lag > 0 {
			detail += fmt.Sprintf(", %d bytes of writes dropped", lost)
		}
		r.rec.Record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(f.Kind), FaultID: id, Detail: detail})
		return nil
	})
	if err != nil && switched {
		// Healed already recorded: report the error without a second heal.
		r.fail(fmt.Errorf("after fault %d (%s) switched: %w", id, f.Kind, err))
		return nil
	}
	return err
}

// healFault undoes an active fault and records it.
func (r *run) healFault(a *activeFault) {
	if a.heal != nil {
		a.heal()
	}
	r.rec.Record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(a.f.Kind), FaultID: a.id, Target: a.targets, Detail: a.note})
}

// partition cuts the targets' proxies in the given mode.
func (r *run) partition(targets []int, mode string) (func(), error) {
	var undo []func() error
	heal := func() {
		for _, u := range undo {
			if err := u(); err != nil {
				r.fail(fmt.Errorf("healing a partition: %w", err))
			}
		}
	}
	for _, i := range targets {
		for _, p := range r.proxies[i] {
			name := p.Name
			switch mode {
			case model.PartitionRefuse:
				if err := p.Disable(); err != nil {
					return heal, err
				}
				undo = append(undo, p.Enable)
			default:
				var streams []string
				typ, attrs := "timeout", toxiclient.Attributes{"timeout": 0}
				switch mode {
				case model.PartitionBlackhole:
					streams = []string{"upstream", "downstream"}
				case model.PartitionBlackholeRequests:
					streams = []string{"upstream"}
				case model.PartitionBlackholeReplies:
					streams = []string{"downstream"}
				case model.PartitionReset:
					typ = "reset_peer"
					streams = []string{"upstream"}
				}
				for _, s := range streams {
					tn := fmt.Sprintf("partition-%s-%s", name, s)
					if _, err := p.AddToxic(tn, typ, s, 1, attrs); err != nil {
						return heal, err
					}
					undo = append(undo, func() error { return p.RemoveToxic(tn) })
				}
			}
		}
	}
	return heal, nil
}

// ErrNoJitterGate is a Shell's answer to Jitter when its connection passes
// no gate of the harness's to draw the jitter in (an agent process).
var ErrNoJitterGate = errors.New("the connection has no gate for seeded latency jitter")

// latency adds Latency ± Jitter to the targets' traffic in the fault's
// direction(s): Toxiproxy delays every chunk by Latency − Jitter, and the
// instance's Gate adds a uniform [0, 2×Jitter] per chunk drawn from the
// scenario's seed (see Gate.SetJitter for why not Toxiproxy's jitter). An
// instance without a gate (ErrNoJitterGate) gets Toxiproxy's own jitter:
// the same uniform Latency ± Jitter per chunk, but unseeded, so its draws
// differ from run to run.
func (r *run) latency(id int, targets []int, f model.Fault) (func(), error) {
	streams := map[string][]string{
		model.DirectionBoth:     {"upstream", "downstream"},
		model.DirectionRequests: {"upstream"},
		model.DirectionReplies:  {"downstream"},
	}[f.Direction]
	type toxic struct {
		p    *toxiclient.Proxy
		name string
	}
	var toxics []toxic
	var jittered []Shell
	remove := func() {
		for _, in := range jittered {
			_ = in.Jitter(0, 0, nil)
		}
		for _, t := range toxics {
			if err := t.p.RemoveToxic(t.name); err != nil {
				r.fail(fmt.Errorf("removing latency: %w", err))
			}
		}
	}
	for _, i := range targets {
		// Down or up, the instance gets the jitter: a restart during the
		// fault keeps it (its new connection is as slow).
		base, proxyJitter := f.Latency-f.Jitter, time.Duration(0)
		if in := r.instances[i]; f.Jitter > 0 {
			var req, rep time.Duration
			if f.Direction != model.DirectionReplies {
				req = f.Jitter
			}
			if f.Direction != model.DirectionRequests {
				rep = f.Jitter
			}
			switch err := in.Jitter(req, rep, rand.New(rand.NewPCG(uint64(r.sc.Seed), uint64(id)<<16|uint64(i)))); {
			case errors.Is(err, ErrNoJitterGate):
				base, proxyJitter = f.Latency, f.Jitter
			case err != nil:
				remove()
				return nil, fmt.Errorf("instance %d: %w", i, err)
			default:
				jittered = append(jittered, in)
			}
		}
		for _, p := range r.proxies[i] {
			for _, s := range streams {
				name := fmt.Sprintf("latency-%d-%s", id, s)
				if _, err := p.AddToxic(name, "latency", s, 1, toxiclient.Attributes{"latency": base.Milliseconds(), "jitter": proxyJitter.Milliseconds()}); err != nil {
					remove()
					return nil, err
				}
				toxics = append(toxics, toxic{p, name})
			}
		}
	}
	return remove, nil
}
