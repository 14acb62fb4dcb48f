package process

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/real"
)

// probeGroup is the lease name a probed agent is given: no run uses it,
// and the probe's Redis address refuses connections anyway.
const probeGroup = "leaselab-probe"

// needs lists the capabilities sc asks of every agent: runner for a
// runner-mode scenario (task events, the dispatch command), safe for safe
// mode, clock for a clock fault (the clock command).
func needs(sc model.Scenario) []agent.Capability {
	var caps []agent.Capability
	if sc.Mode == model.ModeRunner {
		caps = append(caps, agent.CapRunner)
	}
	if sc.Params.Safe {
		caps = append(caps, agent.CapSafe)
	}
	for _, f := range sc.Faults {
		if f.Kind == model.FaultClock {
			caps = append(caps, agent.CapClock)
			break
		}
	}
	return caps
}

// why says what a capability is needed for, in refusals.
var why = map[agent.Capability]string{
	agent.CapRunner: "a runner-mode scenario needs task and chore events and the dispatch command",
	agent.CapSafe:   "a safe-mode scenario needs the elector's lease guard and fencing tokens (LEASELAB_SAFE=1)",
	agent.CapClock:  "a clock fault is the clock command, which only an agent that runs its timers on a clock the harness may bend obeys",
}

// lacks returns why an agent whose hello is h cannot run sc, or nil.
func lacks(name string, sc model.Scenario, h agent.Hello) error {
	for _, c := range needs(sc) {
		if !h.Has(c) {
			return fmt.Errorf("%s does not declare the %q capability in its hello (it declares %s): %s", name, c, capList(h.Capabilities), why[c])
		}
	}
	return nil
}

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

// probe starts the agent once, as instance 0 of sc, reads its hello and
// kills it, so that a scenario that needs a capability the agent lacks is
// refused before anything runs (a run would only find out at the hellos,
// after Redis, the proxies and every agent were up). It is only done when
// sc needs a capability. The probed agent is given every variable of
// docs/agents.md, with a Redis address that refuses connections and a lease
// of its own: an agent says its hello before it needs Redis.
//
// It returns the refusal, or nil: also when the probe itself fails (no
// hello, a malformed one): the run then starts the agents and reports
// that with its own error, as it would without a probe.
func (b Backend) probe(sc model.Scenario) error {
	if len(needs(sc)) == 0 || len(b.Agent) == 0 {
		return nil
	}
	closed, err := closedAddr()
	if err != nil {
		return nil
	}
	pb := b
	pb.LogDir = "" // a probe's stderr is not a run's log
	s := &shell{b: &pb, slot: real.Slot{Index: 0, Dial: closed, Scenario: sc.Scaled(), Group: probeGroup, Env: &env.Environment{}}}
	inc, dec, err := s.launch()
	if err != nil {
		return nil
	}
	if s.hello(context.Background(), inc, dec) != nil {
		return nil
	}
	_ = inc.end()
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
