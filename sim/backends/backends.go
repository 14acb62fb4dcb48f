// Package backends names leaselab's backends — the one place that does —
// and makes one from a name and its configuration, as chaos run's
// --backend does; Request.Check holds the rules of which options go with
// which backend, so that a flag that cannot mean anything is refused
// before anything runs.
package backends

import (
	"fmt"

	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/process"
	"github.com/leaselab/leaselab/sim/real"
	"github.com/leaselab/leaselab/sim/virtual"
)

// The backends' names.
const (
	// Real runs instances as goroutines against a real redis-server
	// through real Toxiproxy, in wall-clock time (sim/real).
	Real = "real"
	// Virtual runs the production election.Machine against a model of
	// Redis, the network and go-redis, in virtual time (sim/virtual).
	Virtual = "virtual"
	// Process runs every instance as an agent process (sim/process).
	Process = "process"
)

// Named is the backend called name, unconfigured: enough to ask what kind
// it is (sim.Computes) and, for one that computes, what it refuses. A name
// that is none of the three is Real (Request.Check refuses it).
func Named(name string) sim.Backend {
	switch name {
	case Virtual:
		return virtual.Backend{}
	case Process:
		return process.Backend{}
	}
	return real.Backend{}
}

// envFields are env.Choice's fields, in the order Check names them: the
// real backend's Redis and Toxiproxy, which the virtual one models.
var envFields = []string{"RedisAddr", "RedisURL", "RedisServer", "ToxiproxyAddr", "ProxyPorts", "ProxyUpstream", "Env"}

// Request is what a caller asks of a backend, for Check: which one, and
// which other options were given explicitly (a default is no request).
type Request struct {
	// Name is the backend: Real, Virtual or Process.
	Name string
	// Given holds the options given explicitly, by field name: "Agent"
	// (Config.Agent), "Runs", and env.Choice's fields ("RedisAddr",
	// "RedisURL", "RedisServer", "ToxiproxyAddr", "ProxyPorts",
	// "ProxyUpstream", "Env").
	Given map[string]bool
	// Runs is a seed sweep's number of runs (sweep.Seeds), when
	// Given["Runs"].
	Runs int
	// Names are how the errors name the fields and the backend's name
	// ("Name"), and "Seed", the scenario's seed, which an error suggests (the
	// CLI: "--runs" for Runs); a field missing from it is named as in Go.
	Names map[string]string
}

func (r Request) name(field string) string {
	if n, ok := r.Names[field]; ok {
		return n
	}
	return field
}

// Check refuses a request that cannot mean anything: an agent for a
// backend other than Process; a seed sweep on a backend whose runs take
// wall time, or of fewer than one run; the real backend's Redis and
// Toxiproxy for the virtual one, which models them; an unknown backend.
func (r Request) Check() error {
	be := r.name("Name")
	if r.Given["Agent"] && r.Name != Process {
		return fmt.Errorf("%s is for %s %s", r.name("Agent"), be, Process)
	}
	switch r.Name {
	case Real, Process:
		if r.Given["Runs"] {
			return fmt.Errorf("%s is for %s %s: a real run takes the scenario's whole length in wall time (~30 s for a built-in), so a seed sweep would take hours; replay chosen seeds with %s, or add %s %s",
				r.name("Runs"), be, Virtual, r.name("Seed"), be, Virtual)
		}
	case Virtual:
		for _, f := range envFields {
			if r.Given[f] {
				return fmt.Errorf("%s is about the real backend's Redis and Toxiproxy; %s %s models them and uses none", r.name(f), be, Virtual)
			}
		}
		if r.Given["Runs"] && r.Runs < 1 {
			return fmt.Errorf("%s must be at least 1", r.name("Runs"))
		}
	default:
		return fmt.Errorf("%s: %q is none of %s, %s, %s", be, r.Name, Real, Virtual, Process)
	}
	return nil
}

// Config configures a backend whose runs wait (Real, Process); a backend
// that computes takes none of it.
type Config struct {
	// Provider is where Redis and Toxiproxy come from. nil: env.Embedded.
	Provider env.Provider
	// Publish has the instances publish their transitions as production
	// does, and OnPublish is told where (real.Backend.Publish).
	Publish   bool
	OnPublish func(group, addr string)
	// Agent, AgentWins and LogDir are the process backend's
	// (process.Backend): the agent every instance runs, whether it wins
	// over a scenario's own, where the agents' logs go.
	Agent     []string
	AgentWins bool
	LogDir    string
}

// New is the backend called name, configured by c. A backend that computes
// (Virtual) is Named(name) as it is.
func New(name string, c Config) sim.Backend {
	switch b := Named(name); b.(type) {
	case process.Backend:
		return process.Backend{Provider: c.Provider, Agent: c.Agent, AgentWins: c.AgentWins, LogDir: c.LogDir,
			Publish: c.Publish, OnPublish: c.OnPublish}
	case real.Backend:
		return real.Backend{Provider: c.Provider, Publish: c.Publish, OnPublish: c.OnPublish}
	default:
		return b
	}
}
