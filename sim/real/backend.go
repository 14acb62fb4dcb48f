package real

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/realtime"
)

// Options configure Run. Zero values mean the defaults named on each field.
type Options struct {
	// Provider sets up Redis and Toxiproxy. Default Embedded{}.
	Provider env.Provider
	// Observe, if not nil, sees every event as it is recorded, on the
	// recording goroutine: it must be fast and must not block.
	Observe func(model.Event)
}

// Backend is the real backend, a sim.Backend: instances as goroutines
// against a real Redis through real Toxiproxy, in wall-clock time (the
// real-time engine, package realtime, with this package's spawner).
type Backend struct {
	// Provider sets up Redis and Toxiproxy. Default env.Embedded{}.
	Provider env.Provider
	// Publish makes every instance publish its transitions as production
	// does (package publish), to the stream of the group named after the
	// scenario (its lease is then election.LeaderKey(scenario name), not a
	// per-run name: two runs of one scenario must not share a Redis at
	// once), so that chaos observe can watch the run from outside.
	Publish bool
	// OnPublish, with Publish, is called once the environment is up with
	// the group and the Redis address an observer should watch.
	OnPublish func(group, redisAddr string)

	// lag delays instance i's timers made for d by lag(i, d) of real time
	// (faulty.Clock.Lag), as a loaded machine would: for the tests of the
	// harness's load-proofing only.
	lag func(i int, d time.Duration) time.Duration
}

// Name is "real".
func (Backend) Name() string { return "real" }

// About describes the backend for reports (sim.Describer).
func (Backend) About() string { return "redis-server through Toxiproxy, wall-clock time" }

// Run runs the scenario on the real backend with o's provider: sim.Run with
// a Backend. See Backend.Run for what it changes in the process.
func Run(ctx context.Context, sc model.Scenario, o Options) (*verdict.Result, error) {
	return sim.Run(ctx, sc, Backend{Provider: o.Provider}, sim.Options{Observe: o.Observe})
}

// Refuses returns why the backend refuses the scenario with its provider
// (realtime.ErrOwnRedis, realtime.ErrPublishCluster), or nil if it can run
// it.
func (b Backend) Refuses(sc model.Scenario) error { return b.engine().Refuses(sc) }

// Run runs eff (validated, defaults filled, scaled) against real Redis and
// Toxiproxy, every instance a goroutine, and returns what it recorded; see
// sim.Backend.
//
// Two process-wide settings change for good: go-redis's global logger is
// silenced (every dial an injected fault fails would be logged to stderr),
// and, with the in-process Toxiproxy, zerolog's global level is disabled
// (Toxiproxy logs through it). A program that wants them restores them
// after Run.
func (b Backend) Run(ctx context.Context, eff model.Scenario, observe func(model.Event)) (*sim.Recording, error) {
	return b.engine().Run(ctx, eff, observe)
}

func (b Backend) engine() realtime.Engine {
	return realtime.Engine{Provider: b.Provider, Spawn: b.spawn, Publish: b.Publish, OnPublish: b.OnPublish}
}

// spawn makes the in-process shell of one instance: realtime.Spawner.
func (b Backend) spawn(slot realtime.Slot) (realtime.Shell, error) {
	in := &instance{slot: slot}
	if b.lag != nil {
		in.lag = func(d time.Duration) time.Duration { return b.lag(slot.Index, d) }
	}
	return in, nil
}
