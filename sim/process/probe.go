package process

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/realtime"
)

// probeGroup is the lease name a probed agent is given: no run uses it,
// and the probe's Redis address refuses connections anyway.
const probeGroup = "leaselab-probe"

// needs lists the capabilities sc asks of every agent: runner for a
// runner-mode scenario (task events, the dispatch command), safe for safe
// mode, clock for a clock fault (the clock command), cluster for a Redis
// Cluster (LEASELAB_REDIS_NODES).
func needs(sc model.Scenario) []agent.Capability {
	var caps []agent.Capability
	if sc.Redis == model.RedisCluster {
		caps = append(caps, agent.CapCluster)
	}
	if sc.Mode == model.ModeRunner {
		caps = append(caps, agent.CapRunner)
	}
	if sc.Params.Safe {
		caps = append(caps, agent.CapSafe)
	}
	for _, f := range sc.Faults {
		// A kind that needs the agent to act (model.KindNeeds), once.
		k, _ := model.SpecOf(f.Kind)
		if c := agent.Capability(k.Needs.AgentCapability); c != "" && !slices.Contains(caps, c) {
			caps = append(caps, c)
		}
	}
	return caps
}

// why says what a capability is needed for, in refusals.
var why = map[agent.Capability]string{
	agent.CapRunner:  "a runner-mode scenario needs task and chore events and the dispatch command",
	agent.CapSafe:    "a safe-mode scenario needs the elector's lease guard and fencing tokens (LEASELAB_SAFE=1)",
	agent.CapClock:   "a clock fault is the clock command, which only an agent that runs its timers on a clock the harness may bend obeys",
	agent.CapCluster: "redis: cluster gives the agent every node and its proxy to it (LEASELAB_REDIS_NODES), which only a client that follows the cluster's slot map through them can use",
}

// lacks returns why an agent whose hello is h cannot run sc, or nil. When
// runner is all it lacks, the error is sim.ErrElectorOnly too: the run
// takes the scenario's elector part instead.
func lacks(name string, sc model.Scenario, h agent.Hello) error {
	if c := h.Client; c != nil && c.ValidityMarginMS > 0 {
		ttl := sc.WithDefaults().Params.TTL
		if m := time.Duration(c.ValidityMarginMS * float64(time.Millisecond)); m >= ttl {
			return fmt.Errorf("%s declares validity_margin_ms %v, not below the TTL it was given (%v, LEASELAB_TTL_MS): its lease would never be valid", name, c.ValidityMarginMS, ttl)
		}
	}
	var missing []agent.Capability
	for _, c := range needs(sc) {
		if !h.Has(c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	c := missing[0]
	err := &lacksError{msg: fmt.Sprintf("%s does not declare the %q capability in its hello (it declares %s): %s", name, c, capList(h.Capabilities), why[c]),
		electorOnly: len(missing) == 1 && c == agent.CapRunner}
	return err
}

// afterProbe explains a run's agent that lacks only runner: had the
// capability probe read its hello, the run would have taken the scenario's
// elector part, so the probe got none (a loaded machine: 30 Python agents
// at load 46 took over 15 s), or the agent declared runner to it. Other errors are returned as they are.
func afterProbe(err error) error {
	var l *lacksError
	if !errors.As(err, &l) || !l.electorOnly {
		return err
	}
	return fmt.Errorf("%s; the run could not take the scenario's elector part, which an elector-only agent runs, because the capability probe got no hello from the agent before the run (within %v: a loaded machine or a slow start; run fewer scenarios at once), or one that declared runner", l.msg, helloTimeout)
}

// lacksError is lacks's error.
type lacksError struct {
	msg         string
	electorOnly bool // runner is all the agent lacks
}

func (e *lacksError) Error() string { return e.msg }

// Is makes a refusal for the runner capability alone sim.ErrElectorOnly.
func (e *lacksError) Is(target error) bool { return e.electorOnly && target == sim.ErrElectorOnly }

func capList(caps []agent.Capability) string {
	if len(caps) == 0 {
		return "none"
	}
	s := make([]string, len(caps))
	for i, c := range caps {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// probe starts the agent a run of sc starts (forScenario) once, as
// instance 0 of sc, reads its hello and
// kills it, so that a scenario that needs a capability the agent lacks is
// refused before anything runs (a run would only find out at the hellos,
// after Redis, the proxies and every agent were up). It is only done when
// sc needs a capability. The probed agent is given every variable of
// docs/agents.md, with a Redis address that refuses connections and a lease
// of its own: an agent says its hello before it needs Redis.
//
// It returns the refusal, or nil: also when the probe itself fails (no
// hello, a malformed one): the run then starts the agents and reports
// that with its own error, as it would without a probe. ctx done is ctx's
// error. The probed agent, and whatever it started, is ended either way.
func (b Backend) probe(ctx context.Context, sc model.Scenario) error {
	b = b.forScenario(sc)
	if len(needs(sc)) == 0 || len(b.Agent) == 0 {
		return nil
	}
	closed, err := closedAddr()
	if err != nil {
		return nil
	}
	pb := b
	pb.LogDir = "" // a probe's stderr is not a run's log
	s := newShell(&pb, realtime.Slot{Index: 0, Dial: closed, Scenario: sc.Scaled(), Group: probeGroup, Env: &env.Environment{}, Fail: func(error) {}}, nil)
	inc, dec, err := s.launch()
	if err != nil {
		return nil
	}
	err = s.hello(ctx, inc, dec)
	_ = inc.end("the probe read its hello")
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return nil
	}
	return lacks(fmt.Sprintf("process: agent %q", strings.Join(b.Agent, " ")), sc, inc.hello)
}

// closedAddr is a loopback address nothing listens on (a port just freed).
func closedAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}
