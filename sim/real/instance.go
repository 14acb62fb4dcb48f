package real

import (
	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/model/analysis"

	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/publish"
	"github.com/leaselab/leaselab/runner"
	"github.com/leaselab/leaselab/sim/faulty"
	"github.com/leaselab/leaselab/sim/realtime"
)

// instance is one simulated TaskRunner process: its own go-redis client
// dialling Redis through its own Toxiproxy proxy and a Gate, its own
// faulty.Clock, and either a bare elector or a full runner. A crash or stop
// ends an incarnation; a restart begins a new one (new id) at the same
// index, on the same proxy.
type instance struct {
	// slot is what the engine gave it: its index, its proxy (Dial, or
	// Nodes with redis: cluster), the scenario, the recorder.
	slot realtime.Slot

	mu      sync.Mutex
	inc     *incarnation // nil when down
	stopped sync.WaitGroup
	// jitter is the latency jitter in force on this instance's connection
	// (Jitter), which a restart's new Gate keeps: the fault is on the
	// network, not on one life of the process.
	jitter jitterState
	// lag delays this instance's timers as a loaded machine would
	// (faulty.Clock.Lag): the load-proofing tests' only; nil otherwise.
	lag func(d time.Duration) time.Duration
}

// jitterState is an instance's latency jitter: per direction, and the seed
// of each later incarnation's draws (drawn from the fault's rng when it was
// set, so that a run's draws repeat with its seed).
type jitterState struct {
	requests, replies time.Duration
	seed              [2]uint64
	restarts          uint64
	version           uint64 // counts Jitter calls
}

// applyJitter gives gate the instance's jitter (called with in.mu held),
// and returns the version applied.
func (in *instance) applyJitter(gate *faulty.Gate) uint64 {
	j := &in.jitter
	if j.requests > 0 || j.replies > 0 {
		j.restarts++
		gate.SetJitter(j.requests, j.replies, rand.New(rand.NewPCG(j.seed[0], j.seed[1]+j.restarts)))
	} else {
		gate.SetJitter(0, 0, nil)
	}
	return j.version
}

// incarnation is one life of an instance.
type incarnation struct {
	id     string
	gate   *faulty.Gate
	clock  *faulty.Clock
	rdb    redis.UniversalClient // a *redis.ClusterClient with redis: cluster
	e      *election.Elector     // elector mode
	r      *runner.Runner        // runner mode
	pub    *publish.Publisher    // with Backend.Publish: its transitions, as production publishes them
	cancel context.CancelFunc
	done   chan struct{} // closed when the signal reader (elector mode) or the runner exited
}

// tlsOver wraps dial's connections in TLS with cfg, as go-redis's own
// dialer does when Options.TLSConfig is set.
func tlsOver(dial func(ctx context.Context, network, addr string) (net.Conn, error), cfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(c, cfg.Clone())
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
		return tc, nil
	}
}

// Start begins a new incarnation.
func (in *instance) Start() error {
	p := in.slot.Scenario.Params
	inc := &incarnation{gate: faulty.NewGate(), clock: faulty.NewClock(), done: make(chan struct{})}
	// A timer of the instance's that fires late is the machine's load,
	// which the verdicts count (analysis.Stall): the elector's renewal or
	// next attempt then comes that much late, whatever the election does.
	rec, index := in.slot.Recorder, in.slot.Index
	inc.clock.Watch(func(late time.Duration) {
		if late >= analysis.MinStall {
			rec.Record(model.Event{Kind: model.StallKind, Instance: index, Lateness: late})
		}
	})
	inc.clock.Lag(in.lag)
	in.mu.Lock()
	jitterVersion := in.applyJitter(inc.gate)
	in.mu.Unlock()
	// The instance authenticates as the harness does: Toxiproxy forwards
	// the bytes (AUTH and TLS included) untouched.
	ro := realtime.RedisOptions(p.Client, in.slot.Dial)
	ro.Dialer = inc.gate.Dialer(in.slot.Dial)
	opts := in.slot.Env.Auth.Apply(ro)
	if opts.TLSConfig != nil {
		// go-redis negotiates TLS only in its own dialer: over the gate's
		// connection, do it here (the TLS config names the real host).
		opts.Dialer = tlsOver(opts.Dialer, opts.TLSConfig)
	}
	if in.slot.Nodes != nil {
		// Every node through the instance's own proxy for it and its gate.
		inc.rdb = agent.NewClusterClient(opts, in.slot.Nodes, func(ctx context.Context, network, proxy string) (net.Conn, error) {
			return inc.gate.Dialer(proxy)(ctx, network, proxy)
		})
	} else {
		inc.rdb = redis.NewClient(opts)
	}
	eo := realtime.ElectionOpts(p, nil)
	eo.Clock, eo.Jitter = inc.clock, in.slot.JitterSource()
	if in.slot.Publish {
		// Exactly as a production instance publishes: on its own client
		// (through its proxy, so a partition holds its news back) and its
		// own clock (which the clock faults make lie).
		pub, err := publish.New(publish.Options{Redis: inc.rdb, Clock: inc.clock})
		if err != nil {
			_ = inc.rdb.Close()
			return fmt.Errorf("instance %d: %w", in.slot.Index, err)
		}
		inc.pub, eo.OnTransition = pub, pub.Observe
	}
	switch in.slot.Scenario.Mode {
	case model.ModeRunner:
		if eo.JitterMS == 0 {
			eo.JitterMS = -1 // the runner reads 0 as the spec's 5; here it means none
		}
		r, err := runner.New(inc.rdb, runner.Options{
			Group:         in.slot.Group,
			Tasks:         realtime.Tasks(in.slot.Scenario),
			ChoreInterval: p.ChoreInterval,
			Election:      eo,
			Clock:         inc.clock,
			OnEvent:       in.runnerEvent,
		})
		if err != nil {
			_ = inc.rdb.Close()
			return fmt.Errorf("instance %d: %w", in.slot.Index, err)
		}
		inc.r, inc.id = r, r.ElectorID()
		ctx, cancel := context.WithCancel(context.Background())
		inc.cancel = cancel
		rec.Record(model.Event{Kind: model.InstanceStarted, Instance: in.slot.Index, ID: inc.id})
		if err := r.Start(ctx); err != nil {
			cancel()
			_ = inc.rdb.Close()
			return fmt.Errorf("instance %d: starting the runner: %w", in.slot.Index, err)
		}
		go func() { <-r.Done(); close(inc.done) }()
	default:
		eo.Redis, eo.Key = inc.rdb, in.slot.Group
		e, promote, demote, errs := election.NewElector(eo)
		inc.e, inc.id = e, e.ID()
		stop := make(chan struct{})
		inc.cancel = sync.OnceFunc(func() { close(stop) })
		rec.Record(model.Event{Kind: model.InstanceStarted, Instance: in.slot.Index, ID: inc.id})
		go func() {
			defer close(inc.done)
			for {
				select {
				case <-promote:
					l := e.Leadership()
					rec.Record(model.Event{Kind: model.LeaderGained, Instance: in.slot.Index, ID: inc.id, Term: l.Term, Token: l.Token})
				case <-demote:
					rec.Record(model.Event{Kind: model.LeaderLost, Instance: in.slot.Index, ID: inc.id})
				case err := <-errs:
					rec.Record(model.Event{Kind: model.ElectorError, Instance: in.slot.Index, ID: inc.id, Err: err.Error()})
				case <-stop:
					return
				}
			}
		}()
		e.Start()
	}
	in.mu.Lock()
	if in.jitter.version != jitterVersion {
		in.applyJitter(inc.gate) // a latency fault began or ended while it started
	}
	in.inc = inc
	in.mu.Unlock()
	return nil
}

// runnerEvent records what the harness measures from a runner's events.
func (in *instance) runnerEvent(e runner.Event) {
	ev := model.Event{Instance: in.slot.Index, ID: e.Instance, Task: e.TaskID, Term: e.Term, Token: e.Token}
	switch e.Kind {
	case runner.EventLeadership:
		ev.Kind = model.LeaderLost
		if e.Leader {
			ev.Kind = model.LeaderGained
		}
	case runner.EventChore:
		ev.Kind, ev.Chore, ev.N, ev.Took = model.ChoreRan, string(e.Chore), e.N, e.Duration
	case runner.EventChoreFenced:
		ev.Kind, ev.Chore, ev.Err = model.ChoreFenced, string(e.Chore), errText(e.Err)
	case runner.EventDelayedDue:
		ev.Kind, ev.Lateness = model.DelayedDue, e.Lateness
	case runner.EventTaskDispatched:
		ev.Kind = model.TaskDispatched
	case runner.EventTaskAcknowledging:
		ev.Kind = model.TaskAcknowledging
	case runner.EventTaskCompleted:
		ev.Kind = model.TaskCompleted
	case runner.EventTaskFailed:
		ev.Kind, ev.Err = model.TaskFailed, errText(e.Err)
	case runner.EventTaskReclaimed:
		ev.Kind = model.TaskReclaimed
	case runner.EventError:
		ev.Kind, ev.Err = model.RunnerError, errText(e.Err)
		if errors.Is(e.Err, runner.ErrElection) {
			ev.Kind = model.ElectorError
		}
	default:
		return
	}
	in.slot.Recorder.Record(ev)
}

// Live reports whether an incarnation is up.
func (in *instance) Live() bool { return in.current() != nil }

// Leading reports whether the live incarnation believes it leads.
func (in *instance) Leading() bool { return in.leading() }

// Crash, Stop, Pause and Resume: see Shell.
func (in *instance) Crash()                  { in.crash() }
func (in *instance) Stop()                   { in.stop() }
func (in *instance) Pause(suspend bool) bool { return in.pause(suspend) }
func (in *instance) Resume()                 { in.resume() }

// Wait waits until every incarnation is down.
func (in *instance) Wait() { in.stopped.Wait() }

// Clock bends the live incarnation's faulty.Clock.
func (in *instance) Clock(rate float64, jump time.Duration) error {
	inc := in.current()
	if inc == nil {
		return errors.New("not running")
	}
	if jump != 0 {
		inc.clock.Jump(jump)
	}
	if rate > 0 {
		inc.clock.SetRate(rate)
	}
	return nil
}

// Jitter sets the latency jitter of the instance's connection: the live
// incarnation's Gate now, and every later incarnation's until it is cleared.
func (in *instance) Jitter(requests, replies time.Duration, rng *rand.Rand) error {
	in.mu.Lock()
	in.jitter = jitterState{requests: requests, replies: replies, restarts: in.jitter.restarts, version: in.jitter.version + 1}
	if rng != nil && (requests > 0 || replies > 0) {
		in.jitter.seed = [2]uint64{rng.Uint64(), rng.Uint64()}
	}
	inc := in.inc
	in.mu.Unlock()
	if inc != nil {
		inc.gate.SetJitter(requests, replies, rng)
	}
	return nil
}

// Dispatch dispatches one "work" task through the live runner.
func (in *instance) Dispatch(ctx context.Context, delay time.Duration) error {
	inc := in.current()
	if inc == nil || inc.r == nil {
		return errors.New("no live runner")
	}
	var err error
	if delay > 0 {
		_, err = inc.r.DispatchDelayed(ctx, "work", nil, delay)
	} else {
		_, err = inc.r.Dispatch(ctx, "work", nil)
	}
	return err
}

// Kill ends the live incarnation at the end of the run: its traffic is cut
// and its shell wound down, recording nothing. A publishing instance is
// stopped gracefully instead, so that an observer sees its demotion.
func (in *instance) Kill() {
	if inc := in.take(); inc != nil {
		graceful := in.slot.Publish
		if graceful {
			inc.gate.Release()
		} else {
			inc.gate.Kill()
		}
		inc.clock.Resume()
		in.stopped.Go(func() { in.wind(inc, graceful) })
	}
}

// current returns the live incarnation, or nil.
func (in *instance) current() *incarnation {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.inc
}

// leading reports whether the live incarnation believes it leads.
func (in *instance) leading() bool {
	inc := in.current()
	if inc == nil {
		return false
	}
	if inc.r != nil {
		return inc.r.IsLeader()
	}
	return inc.e.IsLeader()
}

// take removes the live incarnation, so no fault hits it twice.
func (in *instance) take() *incarnation {
	in.mu.Lock()
	defer in.mu.Unlock()
	inc := in.inc
	in.inc = nil
	return inc
}

// crash stops the instance dead: the crash is recorded first (so nothing it
// says afterwards counts), its traffic is cut at the gate (so the shell
// winding down can release nothing), then the shell is stopped in the
// background.
func (in *instance) crash() {
	inc := in.take()
	if inc == nil {
		return
	}
	in.slot.Recorder.Record(model.Event{Kind: model.InstanceCrashed, Instance: in.slot.Index, ID: inc.id})
	inc.gate.Kill()
	inc.clock.Resume()
	in.stopped.Go(func() { in.wind(inc, false) })
}

// stop stops the instance gracefully (releasing the lease) and records it
// when done.
func (in *instance) stop() {
	inc := in.take()
	if inc == nil {
		return
	}
	inc.gate.Release()
	inc.clock.Resume()
	in.stopped.Go(func() {
		in.wind(inc, true)
		in.slot.Recorder.Record(model.Event{Kind: model.InstanceStopped, Instance: in.slot.Index, ID: inc.id})
	})
}

// wind shuts an incarnation's shell down. graceful: Stop (release);
// otherwise kill (cancel the runner's context / stop an elector whose
// traffic is already dead).
func (in *instance) wind(inc *incarnation, graceful bool) {
	if inc.r != nil {
		if graceful {
			ctx, cancel := context.WithTimeout(context.Background(), in.slot.Scenario.Params.TTL+5*time.Second)
			_ = inc.r.Stop(ctx)
			cancel()
		}
		inc.cancel()
	} else {
		_ = inc.e.Stop()
		inc.cancel()
	}
	<-inc.done
	if inc.pub != nil {
		// A stopped instance writes what waits (its demotion); a crashed
		// one, like a dead process, loses it.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if !graceful {
			cancel()
		}
		_ = inc.pub.Close(ctx)
		cancel()
	}
	_ = inc.rdb.Close()
}

// pause holds the traffic and stalls the clock (a pause: time runs on,
// timers due meanwhile fire at resume) or freezes it (suspend: time stops);
// resume releases the traffic and resumes the clock.
func (in *instance) pause(suspend bool) bool {
	inc := in.current()
	if inc == nil {
		return false
	}
	if suspend {
		inc.clock.Freeze()
	} else {
		inc.clock.Stall()
	}
	inc.gate.Hold()
	in.slot.Recorder.Record(model.Event{Kind: model.InstancePaused, Instance: in.slot.Index, ID: inc.id})
	return true
}

func (in *instance) resume() {
	inc := in.current()
	if inc == nil {
		return
	}
	inc.gate.Release()
	inc.clock.Resume()
	in.slot.Recorder.Record(model.Event{Kind: model.InstanceResumed, Instance: in.slot.Index, ID: inc.id})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
