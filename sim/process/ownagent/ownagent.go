// Package ownagent is leaselab's own agent for the process backend: its
// elector, or its task runner (mode: runner), as one instance speaking the
// agent protocol (docs/agents.md) on stdin and stdout — what chaos agent
// runs, and the process backend's default agent. It takes everything from
// the environment the harness sets: LEASELAB_SCENARIO (the effective
// scenario as JSON), LEASELAB_REDIS_ADDR (its own proxy) with
// LEASELAB_REDIS_USERNAME, _PASSWORD and _DB, LEASELAB_GROUP,
// LEASELAB_INSTANCE and LEASELAB_INCARNATION (which seed its jitter), and
// LEASELAB_PUBLISH=1 to publish its transitions as production does.
package ownagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/publish"
	"github.com/leaselab/leaselab/runner"
	"github.com/leaselab/leaselab/sim/faulty"
	"github.com/leaselab/leaselab/sim/realtime"
)

// SetupError says the environment the harness sets is missing or wrong:
// the agent was not started by the process backend, or not as it starts
// one. Nothing ran.
type SetupError struct{ Err error }

// Error is the set-up error's message.
func (e *SetupError) Error() string { return e.Err.Error() }

// Unwrap returns the set-up error, for errors.Is and errors.As.
func (e *SetupError) Unwrap() error { return e.Err }

// Run runs the agent until the harness stops it (SIGTERM through ctx, or
// the stop command: it steps down, releases, says stopped and returns nil)
// or goes away (stdin ends: it returns at once). It declares the stop and
// clock capabilities (its timers run on a clock the harness can slow,
// speed up or step), and runner in runner mode. getenv reads the
// environment (os.Getenv); its log goes to stderr.
func Run(ctx context.Context, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	var sc model.Scenario
	raw := getenv("LEASELAB_SCENARIO")
	if raw == "" {
		return &SetupError{errors.New("agent: LEASELAB_SCENARIO is not set: chaos agent is started by the process backend (chaos run --backend process), which sets it")}
	}
	if err := json.Unmarshal([]byte(raw), &sc); err != nil {
		return &SetupError{fmt.Errorf("agent: LEASELAB_SCENARIO: %v", err)}
	}
	addr, group := getenv("LEASELAB_REDIS_ADDR"), getenv("LEASELAB_GROUP")
	if addr == "" || group == "" {
		return &SetupError{errors.New("agent: LEASELAB_REDIS_ADDR and LEASELAB_GROUP must be set")}
	}
	index, _ := strconv.ParseUint(getenv("LEASELAB_INSTANCE"), 10, 32)
	life, _ := strconv.ParseUint(getenv("LEASELAB_INCARNATION"), 10, 32)

	log := slog.New(slog.NewTextHandler(stderr, nil))
	redis.SetLogger(quietRedisLog{}) // the faults fail dials on purpose
	p := sc.Params
	ro := realtime.RedisOptions(p.Client, addr)
	ro.Username, ro.Password = getenv("LEASELAB_REDIS_USERNAME"), getenv("LEASELAB_REDIS_PASSWORD")
	ro.DB, _ = strconv.Atoi(getenv("LEASELAB_REDIS_DB"))
	// A Redis Cluster (LEASELAB_REDIS_NODES): every node through this
	// instance's proxy to it.
	nodes, err := agent.ClusterNodes(getenv)
	if err != nil {
		return &SetupError{err}
	}
	var rdb redis.UniversalClient = redis.NewClient(ro)
	if nodes != nil {
		rdb = agent.NewClusterClient(ro, nodes, nil)
	}
	defer rdb.Close()
	clk := faulty.NewClock()
	eo := realtime.ElectionOpts(p, nil)
	eo.Clock = clk
	// Jitter from the scenario's seed, per instance and incarnation, so a
	// run's draws repeat with its seed.
	rng := mrand.New(mrand.NewPCG(uint64(sc.Seed), index<<32|life))
	var rngMu sync.Mutex
	eo.Jitter = func(n int) int { rngMu.Lock(); defer rngMu.Unlock(); return rng.IntN(n) }

	// LEASELAB_PUBLISH=1 (chaos run --publish): publish the transitions as
	// a production instance does, on its own client and clock.
	var pub *publish.Publisher
	if getenv("LEASELAB_PUBLISH") == "1" {
		var err error
		if pub, err = publish.New(publish.Options{Redis: rdb, Clock: clk, Logger: log}); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		defer func() {
			// A graceful stop flushes what waits, within a second.
			fctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = pub.Close(fctx)
		}()
	}
	stopCtx, stop := context.WithCancel(ctx) // SIGTERM (through ctx) or the stop command
	defer stop()
	o := agent.Options{In: stdin, Out: stdout, Name: "chaos agent", Logger: log, OnStop: stop, Safe: true, Cluster: true,
		Client: agent.GoRedisClient(ro, eo.OpTimeout),
		OnClock: func(rate float64, jump time.Duration) error {
			if jump != 0 {
				clk.Jump(jump)
			}
			if rate > 0 {
				clk.SetRate(rate)
			}
			return nil
		}}
	if sc.Mode != model.ModeRunner {
		eo.Redis, eo.Key = rdb, group
		if pub != nil {
			eo.OnTransition = pub.Observe
		}
		err := agent.New(o).RunElector(stopCtx, eo, agent.Service{Error: func(err error) { log.Info("election error", "err", err) }})
		if stopErr := (*agent.StopError)(nil); errors.As(err, &stopErr) {
			if !errors.Is(err, context.Canceled) {
				log.Warn("graceful stop", "err", stopErr.Err)
			}
			return nil
		}
		return err
	}
	var rn *runner.Runner
	o.OnDispatch = func(ctx context.Context, task string, delay time.Duration) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if delay > 0 {
			return rn.DispatchDelayed(ctx, task, nil, delay)
		}
		return rn.Dispatch(ctx, task, nil)
	}
	ag := agent.New(o)
	if eo.JitterMS == 0 {
		eo.JitterMS = -1 // the runner reads 0 as the spec's 5; the scenario means none
	}
	eo.OnTransition = ag.Transition
	if pub != nil {
		eo.OnTransition = func(t election.Transition) { ag.Transition(t); pub.Observe(t) }
	}
	rn, err = runner.New(rdb, runner.Options{Group: group, Tasks: realtime.Tasks(sc), ChoreInterval: p.ChoreInterval,
		Election: eo, Clock: clk, OnEvent: ag.RunnerEvent, Logger: log})
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	if err := ag.Hello(rn.ElectorID(), rn.LeaseKey()); err != nil {
		return err
	}
	runCtx, kill := context.WithCancel(context.Background())
	defer kill()
	if err := rn.Start(runCtx); err != nil {
		return fmt.Errorf("agent: starting the runner: %w", err)
	}
	select {
	case <-ag.Gone():
		return nil // the harness is gone: nothing to stop gracefully for
	case <-stopCtx.Done():
	}
	ag.Stopping()
	sctx, cancel := context.WithTimeout(context.Background(), p.TTL+5*time.Second)
	defer cancel()
	err = rn.Stop(sctx)
	ag.Stopped()
	if err != nil {
		log.Warn("graceful stop", "err", err)
	}
	return nil
}

// quietRedisLog silences go-redis's global logger.
type quietRedisLog struct{}

func (quietRedisLog) Printf(context.Context, string, ...any) {}
