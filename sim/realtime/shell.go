package realtime

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/env"
)

// Shell is one instance as a run drives it: the in-process elector or
// runner of sim/real, an agent process of sim/process; the run drives each
// through the same fault schedule, proxies and truth lane. A crash or stop
// ends an incarnation; Start begins a new one (new id) at the same index,
// on the same proxy.
//
// What the engine promises a Shell, and expects of it:
//   - Start, Crash, Stop, Pause, Resume, Clock, Jitter, Kill and Wait are
//     called from one goroutine at a time (the schedule's, then the
//     teardown's); Live and Dispatch also from the workload's goroutines
//     meanwhile, so those two must be safe alongside the rest; and Wait
//     also from a goroutine that waits for a graceful stop to wind down
//     before a restart, while nothing is started at that index (nothing
//     is added to what Wait waits for).
//   - Start is called only when no incarnation is up (neither Live nor,
//     for a Prestarter, Starting), but for a Prestarter's first Start after
//     its Prestart, which does nothing; a restart Waits first, so the
//     previous incarnation is fully down. Crash, Stop, Pause, Clock and Dispatch
//     find nothing to act on when none is live, and say so or do nothing
//     as each method says; Resume without a Pause does nothing.
//   - Every event the shell records goes through its Slot's Recorder,
//     which stamps it with the run's clock: never with the instance's own
//     clock, which the clock faults make lie.
//   - Kill may be called more than once (at the end of the run and at
//     teardown); once Wait returns after it, nothing of the shell runs: no
//     goroutine, process or connection of it is left.
type Shell interface {
	// Start begins a new incarnation and records InstanceStarted (a
	// Prestarter's: once it began running, see Prestarter).
	Start() error
	// Live reports whether an incarnation is up.
	Live() bool
	// Leading reports whether the live incarnation believes it leads.
	Leading() bool
	// Crash stops the live incarnation dead (InstanceCrashed first).
	Crash()
	// Stop stops it gracefully (it releases), recording InstanceStopped
	// when done.
	Stop()
	// Pause stops the live incarnation until Resume (InstancePaused,
	// InstanceResumed); false if none is live. suspend: its clock stops
	// too (fault kind suspend); otherwise it runs on and what fell due
	// fires at Resume (pause, as SIGSTOP).
	Pause(suspend bool) bool
	Resume()
	// Clock bends the live incarnation's clock: rate (0: unchanged) and
	// jump (0: none). An error says why it cannot.
	Clock(rate float64, jump time.Duration) error
	// Jitter sets the latency jitter added per chunk of requests and
	// replies, drawn from rng (0, 0, nil: none). A shell whose traffic
	// passes no gate of the harness's (an agent process) returns
	// ErrNoJitterGate: the latency fault then asks Toxiproxy for its own,
	// unseeded jitter.
	Jitter(requests, replies time.Duration, rng *rand.Rand) error
	// Dispatch dispatches one task of the workload through the live
	// incarnation (runner mode), due delay from now.
	Dispatch(ctx context.Context, delay time.Duration) error
	// Kill ends the live incarnation at the end of the run, without
	// recording a crash; Wait waits until every incarnation is down.
	Kill()
	Wait()
}

// Prestarter is a Shell whose first Start is slow (an agent process
// loading its runtime): the run calls Prestart on every such shell that
// starts with the run (not one whose start Scenario.Starts delays: its
// process must not run before its start) at once, before it starts the
// instances in index order, so that the schedule is not late by the sum of
// their start-up times. Prestart starts the instance (the later first Start
// does nothing) and returns when it began running; the run's clock starts
// at the earliest of these (Recorder.Rebase). Once ctx is done it returns
// ctx's error at once, with nothing of the instance left running.
//
// A Prestarter's later Starts (a delayed start, a restart) must not block
// the fault schedule for its start-up either: they return once the
// instance is launched, and record InstanceStarted when it began running.
//
// Starting reports whether an incarnation is launched and not yet running
// (neither Live nor down: a restart heal leaves it be). Started waits until
// none is starting (each began running, or failed and was reported), or
// ctx is done: the recovery is counted from then, so that a start-up does
// not eat it.
type Prestarter interface {
	Prestart(ctx context.Context) (began time.Time, err error)
	Starting() bool
	Started(ctx context.Context)
}

// up reports whether in has an incarnation live or starting.
func up(in Shell) bool {
	if in.Live() {
		return true
	}
	p, ok := in.(Prestarter)
	return ok && p.Starting()
}

// Slot is what a Spawner is given for one instance: everything a spawner
// gets from the engine. Its fields are set before Spawn is called and do
// not change; a spawner reads them and must not modify what they point to
// (Env, Nodes, Scenario's slices: shared with the run and every instance).
type Slot struct {
	// Index is the instance's index.
	Index int
	// Dial is the address of the instance's own proxy to Redis; Nodes, with
	// redis: cluster, maps each node to the instance's proxy for it (Dial
	// is then empty). The instance must reach Redis only through these:
	// the network faults are on the proxies.
	Dial  string
	Nodes map[string]string
	// Scenario is the effective (scaled) scenario; Group the lease's name
	// (election.LeaderKey(Group) is its key).
	Scenario model.Scenario
	Group    string
	// Env is the run's environment (Redis's auth among it), read-only.
	Env *env.Environment
	// Recorder stamps the instance's events with the run's clock; safe for
	// concurrent use.
	Recorder *Recorder
	// Fail notes a harness error of the run (the run goes on, its result
	// says it); safe to call from any goroutine.
	Fail func(error)
	// Publish: the instance publishes its transitions as production does
	// (Engine.Publish).
	Publish bool
	// JitterSource returns a seeded source of election jitter for one
	// incarnation (call it once per Start), so that a run's jitter is
	// reproducible from its seed. Safe for concurrent use; so is each
	// source it returns.
	JitterSource func() func(n int) int
}

// Spawner makes the Shell of one instance. The engine calls it once per
// index, in index order, from one goroutine, after the environment and the
// proxies are up and before the run's clock starts. It must not start the
// instance (the engine calls Start or Prestart when the schedule says); an
// error ends the run before it began, with everything torn down (the
// shells already made are Killed and Waited for).
type Spawner func(Slot) (Shell, error)
