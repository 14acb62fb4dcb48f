// Package process is the process backend: every instance is a real OS
// process — an agent, in any language, speaking the protocol of package
// agent on its stdin and stdout — against a real Redis through its own
// Toxiproxy listener.
//
// It is the real backend (sim/real) with agent processes for shells: the
// same environment, proxies, fault schedule, Redis faults and truth lane;
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
// started is killed, with its group, before Run returns.
package process

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/real"
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
	// Publish asks every agent to publish its transitions as production
	// does (package publish), to the group named after the scenario, as
	// real.Backend.Publish does for in-process instances: the agents get
	// LEASELAB_PUBLISH=1. chaos agent publishes; another agent publishes
	// only if it implements it (docs/agents.md).
	Publish bool
	// OnPublish, with Publish, is called once the environment is up with
	// the group and the Redis address an observer can follow.
	OnPublish func(group, redisAddr string)
}

// Name is "process".
func (Backend) Name() string { return "process" }

// About describes the backend for reports (sim.Describer).
func (Backend) About() string {
	return "every instance an agent process, against redis-server through Toxiproxy, wall-clock time"
}

// ErrNoAgent is Run's error for a Backend without an Agent command.
var ErrNoAgent = errors.New("process: no agent command (--agent \"CMD ARGS\", or agent: {command: [...]} in the scenario)")

// Refuses says what a process cannot do that the scenario asks for, what
// the real backend refuses, or, for a scenario that needs a capability
// (runner mode: runner; a clock fault: clock), that the agent's hello does
// not declare it: the agent is started once to read its hello (probe).
func (b Backend) Refuses(sc model.Scenario) error {
	if sc.Redis == model.RedisCluster {
		return errors.New("process: redis: cluster needs a proxy per node for each instance, and an agent is given one address (LEASELAB_REDIS_ADDR)")
	}
	for i, f := range sc.Faults {
		if f.Kind == model.FaultSuspend {
			return fmt.Errorf("process: faults[%d]: suspend stops the instance's monotonic clock (a VM or host suspend), and a process cannot stop its own: SIGSTOP is pause", i)
		}
	}
	if err := b.real().Refuses(sc); err != nil {
		return err
	}
	return b.probe(sc)
}

func (b Backend) real() real.Backend {
	return real.Backend{Provider: b.Provider, Shells: b.spawn, Publish: b.Publish, OnPublish: b.OnPublish}
}

// Run runs eff with every instance an agent process.
func (b Backend) Run(ctx context.Context, eff model.Scenario, observe func(model.Event)) (*sim.Recording, error) {
	if eff.Agent != nil && !b.AgentWins {
		b.Agent, b.Env = eff.Agent.Command, eff.Agent.Env
	}
	if len(b.Agent) == 0 || strings.TrimSpace(b.Agent[0]) == "" {
		return nil, ErrNoAgent
	}
	return b.real().Run(ctx, eff, observe)
}
