// Package process is the process backend: every instance is a real OS
// process — an agent, in any language, speaking the protocol of package
// agent on its stdin and stdout — against a real Redis through its own
// Toxiproxy listener.
//
// It is a spawner on the real-time engine (sim/realtime), as the real
// backend is with goroutines: the same environment, proxies, fault
// schedule, Redis faults and truth lane;
// only what a fault does to an instance differs, and it is done for real:
// crash is SIGKILL of the agent's process group (restart starts a new
// process, with a new id), stop is SIGTERM (the agent steps down, releases
// and exits), pause is SIGSTOP … SIGCONT (monotonic time runs on; overdue
// timers fire at once on resume), clock is the protocol's clock command for
// agents that declare it. The harness stamps every line an agent writes with
// the run's one monotonic clock as it reads it; the agent's own wall time on
// the line only measures how late that stamp was (Lateness on the event).
//
// Agents run in their own process group and die with the harness
// (Pdeathsig on Linux; everywhere, their stdin ends); every agent a run
// started is killed before Run returns, and so is every process it
// started, also one that left its group (on Linux each agent is a
// proc.Tree: a cgroup of its own, or the harness as child subreaper).
// Every wait on an agent is bounded, and its output capped (Backend's
// MaxLinesPerSecond, MaxBytesPerSecond, MaxLogBytes).
package process

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/realtime"
)

// Backend is the process backend, a sim.Backend.
type Backend struct {
	// Provider sets up Redis and Toxiproxy. Default env.Embedded{}.
	Provider env.Provider
	// Agent is the command (program and arguments) every instance runs,
	// unless the scenario names its own (model.Scenario.Agent, with its
	// Env instead of Env) and AgentWins is false. One of the two is
	// required.
	Agent []string
	// Env is added to each agent's environment, after the LEASELAB_
	// variables (docs/agents.md).
	Env map[string]string
	// AgentWins makes Agent and Env win over the scenario's agent (a
	// command line's --agent).
	AgentWins bool
	// LogDir, if set, keeps each agent's stderr there, one file per
	// incarnation (<run's group>/instance-I.N.log). Default: discarded.
	LogDir string
	// MaxLinesPerSecond and MaxBytesPerSecond cap what one agent may
	// write to its stdout: past either within a second, the agent is
	// ended and the run's errors say so, naming it and its rate (an agent
	// flooding its stdout would otherwise grow the harness, the timeline
	// and result.json without bound). Defaults: 5,000 lines and 4 MiB a
	// second (docs/agents.md, Output caps).
	MaxLinesPerSecond int
	MaxBytesPerSecond int64
	// MaxLogBytes caps each agent log of LogDir: past it, the log keeps
	// its first and last MaxLogBytes/2 and says how much it cut between.
	// Default 2 MiB.
	MaxLogBytes int64
	// Publish asks every agent to publish its transitions as production
	// does (package publish), to the group named after the scenario, as
	// the real backend's Publish does for in-process instances: the agents get
	// LEASELAB_PUBLISH=1. chaos agent publishes; another agent publishes
	// only if it implements it (docs/agents.md).
	Publish bool
	// OnPublish, with Publish, is called once the environment is up with
	// the group and the Redis address an observer can follow.
	OnPublish func(group, redisAddr string)
}

// The output caps' defaults (Backend's fields).
const (
	DefaultMaxLinesPerSecond = 5000
	DefaultMaxBytesPerSecond = 4 << 20
	DefaultMaxLogBytes       = 2 << 20
)

func (b *Backend) maxLinesPerSecond() int {
	if b.MaxLinesPerSecond > 0 {
		return b.MaxLinesPerSecond
	}
	return DefaultMaxLinesPerSecond
}

func (b *Backend) maxBytesPerSecond() int64 {
	if b.MaxBytesPerSecond > 0 {
		return b.MaxBytesPerSecond
	}
	return DefaultMaxBytesPerSecond
}

func (b *Backend) maxLogBytes() int64 {
	if b.MaxLogBytes > 0 {
		return b.MaxLogBytes
	}
	return DefaultMaxLogBytes
}

// Name is "process".
func (Backend) Name() string { return "process" }

// About describes the backend for reports (sim.Describer).
func (Backend) About() string {
	return "every instance an agent process, against redis-server through Toxiproxy, wall-clock time"
}

// ErrNoAgent is Run's error for a Backend without an Agent command.
var ErrNoAgent = errors.New("process: no agent command (--agent \"CMD ARGS\", or agent: {command: [...]} in the scenario)")

// Refuses is RefusesContext without a context (the probe then waits for
// the agent's hello up to its timeout, 15 s).
func (b Backend) Refuses(sc model.Scenario) error { return b.RefusesContext(context.Background(), sc) }

// RefusesContext says what a process cannot do that the scenario asks for,
// what the real-time engine refuses, or, for a scenario that needs a capability
// (runner mode: runner; a clock fault: clock; redis: cluster: cluster), that the agent's hello does
// not declare it: the agent is started once to read its hello (probe),
// until ctx is done at most (then ctx's error, not a refusal).
func (b Backend) RefusesContext(ctx context.Context, sc model.Scenario) error {
	for i, f := range sc.Faults {
		if k, _ := model.SpecOf(f.Kind); k.Needs.NotOnProcess != "" {
			return fmt.Errorf("process: faults[%d]: %s", i, k.Needs.NotOnProcess)
		}
	}
	if err := b.engine(nil).Refuses(sc); err != nil {
		return err
	}
	return b.probe(ctx, sc)
}

func (b Backend) engine(run *runBooks) realtime.Engine {
	return realtime.Engine{Provider: b.Provider, Spawn: b.spawner(run), Publish: b.Publish, OnPublish: b.OnPublish}
}

// forScenario is b with the agent a run of sc starts: the scenario's own
// (its Command and Env), unless b's wins (AgentWins) or it names none.
func (b Backend) forScenario(sc model.Scenario) Backend {
	if sc.Agent != nil && !b.AgentWins {
		b.Agent, b.Env = sc.Agent.Command, sc.Agent.Env
	}
	return b
}

// Run runs eff with every instance an agent process.
func (b Backend) Run(ctx context.Context, eff model.Scenario, observe func(model.Event)) (*sim.Recording, error) {
	b = b.forScenario(eff)
	if len(b.Agent) == 0 || strings.TrimSpace(b.Agent[0]) == "" {
		return nil, ErrNoAgent
	}
	run := &runBooks{}
	rec, err := b.engine(run).Run(ctx, eff, observe)
	if rec != nil {
		var unknown []error
		rec.Timeline, unknown = run.tasks.settle(rec.Timeline)
		for _, e := range unknown {
			rec.Errors = append(rec.Errors, e.Error())
		}
		client, errs := run.clients.declared()
		rec.Errors = append(rec.Errors, errs...)
		rec.Agent = &verdict.RunAgent{Command: slices.Clone(b.Agent), Override: b.AgentWins, Hello: helloName(rec.Timeline),
			Client: client, Logs: run.logs.sorted()}
	}
	return rec, err
}

// helloName is the name the first agent to start gave in its hello (the
// InstanceStarted event's detail), "" if none did.
func helloName(t model.Timeline) string {
	for _, e := range t {
		if e.Kind == model.InstanceStarted && e.Detail != "" {
			return e.Detail
		}
	}
	return ""
}
