// Package virtual is the deterministic virtual-time backend (a sim.Backend):
// the scenarios run on one goroutine, against a discrete-event queue, with N
// instances each driving the production election.Machine (not a
// re-implementation of its decisions), and models of everything around it:
//
//   - Redis: the lease key with its expiry in Redis's time (the run's clock),
//     the acquire, renew and release scripts (and the safe-mode acquire with
//     its fencing token), the script cache (EVALSHA answers NOSCRIPT after a
//     SCRIPT FLUSH or a restart, and go-redis's Script.Run then sends EVAL:
//     one more round trip), a restart (key, token and script cache gone,
//     every connection dropped, Redis unreachable for Options.RedisDowntime);
//     a replicated pair or a cluster's lease slot (redis: replicated |
//     cluster) as one primary whose replica, during a lossy redis-failover,
//     keeps the lease as it was when replication was held back and replaces
//     the primary's copy at the switch (Options.FailoverSwitch after the
//     lag), with an empty script cache; a replicated pair's switch also cuts
//     every connection (the proxy's upstream moves), a cluster's does not
//     (its clients follow MOVED, one round trip the model leaves out); a
//     slot migration takes Options.Migration and changes nothing the lease
//     sees (MIGRATE keeps the TTL);
//   - the network of each instance (its Toxiproxy proxy): a base one-way
//     latency, latency faults with jitter drawn from the scenario's seed,
//     partitions that blackhole both ways, the requests or the replies (the
//     requests of a replies-dropped partition apply in Redis), refuse (proxy
//     disabled: connections closed, dials refused) and reset (TCP reset on
//     use);
//   - the go-redis v9.23.0 client as measured (model/bounds/bounds.go's CallBound and
//     callMin, checked by sim's TestCallBoundMeasured): attempts, retries with go-redis's backoff (drawn
//     from the seed), a pooled connection health-checked as it is taken (a closed one is dropped), a new
//     connection's HELLO + CLIENT SETINFO handshake, the dialer's retries,
//     the read timeout, and a context deadline (OpTimeout) that cuts reads
//     only with ContextTimeoutEnabled but always stops sleeps;
//   - the process: crash, graceful stop (demote, then release, bounded by
//     the elector's StopTimeout), pause (traffic and timers held, the clock
//     running on: what fell due fires at resume), suspend (clock frozen, traffic held), clock
//     rate and jump (a jump moves only wall time, which the elector never
//     reads: its timers, its Elapsed and its guard deadline are monotonic,
//     as time.Since and time.Time.Sub of time.Now readings are in
//     production), restart with a new id.
//
// The output is the same model.Timeline the real backend records, so
// analysis.Analyze, bounds.Predict and verdict.Evaluate apply unchanged. The Redis lane
// (RedisHolder) is exact: it has no notification lateness, unlike the real
// backend's keyspace notifications (≤ ~12 ms at hz 100).
//
// Runner mode (runner.go) runs the TaskRunner around each machine: the
// chore tick (heartbeat; the leader's scheduler, metrics and capacity
// chores, gated on the machine's belief and, in safe mode, its guard, and
// fenced inside the modelled Redis), the fetcher (XREADGROUP blocking in
// Redis, the XAUTOCLAIM pass once per ChoreInterval after ClaimIdle), the
// worker pool and the acker, and the harness's workload; every one of
// their commands goes through the same modelled client and network as the
// elector's (one shared pool), and Redis holds the group's keys (stream
// and pending entries, delayed tasks, metrics, live set, capacity), which
// a lossy failover's replica keeps as they were.
package virtual

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/version"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/sim"
)

// Options configure Run. Zero values mean the defaults named on each field;
// the defaults are calibrated against the real backend (see the package
// tests).
type Options struct {
	// OneWay is the one-way latency of a healthy hop between an instance and
	// Redis through its proxy. Default 50µs (a PING through Toxiproxy takes
	// ~100µs here).
	OneWay time.Duration
	// DialCost is how long a TCP connect through the proxy takes. Default
	// 200µs.
	DialCost time.Duration
	// Warmup is added to the first dial of each incarnation: a fresh
	// process's first call (goroutines, pool, TLS-free dial, script load)
	// took 4-50 ms in the real backend. Default 12ms.
	Warmup time.Duration
	// StartAt is when the first instance starts, and StartStep the time
	// between two instances' starts (the real backend starts them one by
	// one). Defaults 5ms and 200µs.
	StartAt, StartStep time.Duration
	// RedisDowntime is how long a redis-restart keeps Redis unreachable.
	// Default 45ms (the real backend measured 41-94 ms from the fault to
	// Redis answering again).
	RedisDowntime time.Duration
	// FailoverSwitch is how long a redis-failover's switch takes after its
	// lag: the replica's promotion until the instances reach it. Default
	// DefaultFailoverSwitch.
	FailoverSwitch time.Duration
	// Migration is how long a slot-migration takes. Default 15ms (measured
	// 15 ms for the lease's slot).
	Migration time.Duration
	// SkipAnalysis leaves Analysis, Predictions and Evaluation empty (for
	// benchmarks of the simulation alone).
	SkipAnalysis bool
	// OnCall, if set, is told every moment of every elector call the model
	// schedules, in time order: what a schedule search aligns a fault's
	// start or heal to (a partition within one hop of a renewal's send is a
	// different case from one between calls). Nil: nothing is recorded.
	OnCall func(CallEvent)
	// OnPop and OnCompare record a run's path (what sweep.Prove walks a
	// schedule range with): OnPop is told every event the queue pops,
	// before it is handled; OnCompare every comparison of two moments (or
	// durations) whose outcome can change what the run does, with its two
	// operands — the queue's own (every comparison its heap makes, which
	// decides the order events pop in), a key's expiry against a command reaching Redis, a reply against its
	// read deadline, a sleep against its context's deadline, the min of
	// two deadlines. Two runs that see the same pops and the same outcome
	// of every comparison take the same path. Nil (the default): nothing
	// is recorded and nothing measurable is spent (BenchmarkHooksUnset).
	OnPop     func(Pop)
	OnCompare func(a, b time.Duration)
	// PartialOrder, with OnPop and OnCompare set, records the run's
	// partial order rather than its full order: only the order of events
	// that depend on each other (one instance's; Redis's writes against
	// its other commands; the timeline's; a fault's, a start's and the
	// end's against everything), told once the run is over, in an order
	// that does not depend on how independent events interleaved (see
	// PopOwner). Two runs with the same pops and the same outcome of every
	// comparison do the same thing, each instance, Redis and the timeline
	// alike, while schedules that only swap two followers' attempts share
	// a path. Default false: the full order, every comparison the queue
	// makes. A runner-mode run records its full order either way: its
	// streams' commands and task bookkeeping are not in the partial order's
	// account of what depends on what.
	PartialOrder bool
	// OnOutcomeCompare, if set, is told the comparisons by which the
	// analysis of the run decides each fault's failover, after the run
	// (analysis.Options.OnCompare): the path of the failover metric, which
	// sweep.Prove records beside OnCompare's. Nil (the default): nothing is
	// recorded.
	OnOutcomeCompare func(a, b time.Duration)
}

// Pop is an event the virtual world's queue popped: when, and what it is
// (Kind, A, B and Gen are the queue's own encoding, opaque outside this
// package but equal between two runs that take the same path).
type Pop struct {
	At   time.Duration
	Kind uint8
	A, B int32
	Gen  uint32
}

// CallStep is a moment of an elector call.
type CallStep uint8

// The moments of a call, in the order they happen.
const (
	CallBegin  CallStep = iota + 1 // the elector starts the call (Script.Run)
	CallSend                       // a command (or a new connection's handshake) is written
	CallArrive                     // it reaches Redis (a command applies then)
	CallReply                      // its reply reaches the client
	CallEnd                        // the outcome reaches the elector, or the call is dropped
)

var callStepNames = [...]string{CallBegin: "begin", CallSend: "send", CallArrive: "arrive", CallReply: "reply", CallEnd: "end"}

func (s CallStep) String() string {
	if int(s) < len(callStepNames) && callStepNames[s] != "" {
		return callStepNames[s]
	}
	return fmt.Sprintf("step(%d)", s)
}

// CallEvent is one moment of an elector call, in the run's (scaled)
// virtual time.
type CallEvent struct {
	At       time.Duration
	Instance int
	Op       election.Op
	Step     CallStep
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.OneWay, 50*time.Microsecond)
	def(&o.DialCost, 200*time.Microsecond)
	def(&o.Warmup, 12*time.Millisecond)
	def(&o.StartAt, 5*time.Millisecond)
	def(&o.StartStep, 200*time.Microsecond)
	def(&o.RedisDowntime, 45*time.Millisecond)
	def(&o.FailoverSwitch, DefaultFailoverSwitch)
	def(&o.Migration, 15*time.Millisecond)
	return o
}

// DefaultFailoverSwitch is Options.FailoverSwitch's default: the real
// backend measured 3-16 ms from the end of the lag to the instances
// reaching the promoted node, clean and lossy, replicated and cluster. It is
// the model's (model.DefaultFailoverSwitch), so predictions from a schedule
// assume the switch this backend runs.
const DefaultFailoverSwitch = model.DefaultFailoverSwitch

// Refuses returns why Run refuses the scenario, or nil if it can run it:
// it runs every scenario Validate accepts, runner mode included.
func Refuses(model.Scenario) error { return nil }

// Stats count what a simulation did.
type Stats struct {
	// Events is the number of queue events processed.
	Events int
	// MachineInputs is the number of inputs fed to election.Machines
	// (Start, Timer, Finish, Expired, Stop).
	MachineInputs int
	// Calls is the number of Redis calls the instances made.
	Calls int
}

// Backend is the virtual backend, a sim.Backend, with its options.
type Backend struct {
	Options
	// stats, if not nil, receives what the simulation did (RunStats).
	stats *Stats
}

// Name is "virtual".
func (Backend) Name() string { return "virtual" }

// Refuses is the package's Refuses.
func (Backend) Refuses(sc model.Scenario) error { return Refuses(sc) }

// Computes is true: a run is computed in virtual time (sim.Computer).
func (Backend) Computes() bool { return true }

// About describes the backend for reports (sim.Describer).
func (Backend) About() string {
	return "discrete-event model of Redis, the network and go-redis around the production election.Machine, virtual time; replay the seed on the real backend to confirm a finding"
}

// Run simulates eff (validated, defaults filled, scaled) in virtual time;
// see sim.Backend. It never fails, takes no notice of ctx (a run takes
// milliseconds) and does not call observe: the timeline is whole when Run
// returns.
func (b Backend) Run(_ context.Context, eff model.Scenario, _ func(model.Event)) (*sim.Recording, error) {
	w := newWorld(eff, b.Options.withDefaults())
	w.simulate()
	defer w.free()
	if b.stats != nil {
		*b.stats = w.stats
	}
	return &sim.Recording{
		RunID:    fmt.Sprintf("virtual-%s-%d", eff.Name, eff.Seed),
		Versions: verdict.Versions{Go: runtime.Version(), Redis: "virtual (model of 7.0)", Toxiproxy: "virtual (model of 2.12.0)", Leaselab: version.Leaselab()},
		Elapsed:  w.now,
		Timeline: w.tl,
		Errors:   w.errs,
	}, nil
}

// Run runs the scenario in virtual time and returns the same Result the real
// backend does: Params effective (scaled), the timeline in virtual time, its
// Analysis, Predictions and Evaluation (sim.Run with a Backend). Same
// scenario (seed included) and options ⇒ the same Result, byte for byte
// once marshalled.
func Run(sc model.Scenario, o Options) (*verdict.Result, error) {
	res, _, err := RunStats(sc, o)
	return res, err
}

// RunStats is Run that also reports what the simulation did.
func RunStats(sc model.Scenario, o Options) (*verdict.Result, Stats, error) {
	var st Stats
	res, err := sim.Run(context.Background(), sc, Backend{Options: o, stats: &st}, sim.Options{SkipAnalysis: o.SkipAnalysis,
		Analysis: analysis.Options{OnCompare: o.OnOutcomeCompare}})
	return res, st, err
}
