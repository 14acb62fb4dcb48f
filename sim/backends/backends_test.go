package backends

import (
	"strings"
	"testing"

	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/process"
	"github.com/leaselab/leaselab/sim/real"
)

// Callers ask a backend how it runs (sim.Computes) instead of naming it:
// the virtual backend computes, the real and process backends wait.
func TestBackendsSayWhetherTheyCompute(t *testing.T) {
	for name, want := range map[string]bool{Virtual: true, Real: false, Process: false} {
		if got := sim.Computes(Named(name)); got != want {
			t.Errorf("sim.Computes(%s) = %v, want %v", name, got, want)
		}
	}
	if Named(Virtual).Name() != Virtual || Named(Real).Name() != Real || Named(Process).Name() != Process {
		t.Error("a backend's name is not the name it is asked for by")
	}
}

// Check: each rule refuses what cannot mean anything, naming the fields
// as Names says (or as in Go), and lets the rest through.
func TestRequestCheck(t *testing.T) {
	cli := map[string]string{"Name": "--backend", "Agent": "--agent", "Runs": "--runs", "Seed": "--seed", "RedisURL": "--redis-url", "Env": "--env"}
	for _, tt := range []struct {
		name string
		r    Request
		want string // "" for none; else a part of the error
	}{
		{"real", Request{Name: Real}, ""},
		{"process with an agent", Request{Name: Process, Given: map[string]bool{"Agent": true}}, ""},
		{"virtual sweep", Request{Name: Virtual, Given: map[string]bool{"Runs": true}, Runs: 5}, ""},
		{"agent on real", Request{Name: Real, Given: map[string]bool{"Agent": true}, Names: cli}, "--agent is for --backend process"},
		{"agent on virtual, Go names", Request{Name: Virtual, Given: map[string]bool{"Agent": true}}, "Agent is for Name process"},
		{"runs on real", Request{Name: Real, Given: map[string]bool{"Runs": true}, Runs: 5, Names: cli}, "--runs is for --backend virtual: a real run takes"},
		{"runs on process", Request{Name: Process, Given: map[string]bool{"Runs": true}, Names: cli}, "replay chosen seeds with --seed, or add --backend virtual"},
		{"no runs", Request{Name: Virtual, Given: map[string]bool{"Runs": true}, Names: cli}, "--runs must be at least 1"},
		{"a Redis on virtual", Request{Name: Virtual, Given: map[string]bool{"RedisURL": true, "Env": true}, Names: cli},
			"--redis-url is about the real backend's Redis and Toxiproxy; --backend virtual models them and uses none"},
		{"proxy ports on virtual", Request{Name: Virtual, Given: map[string]bool{"ProxyPorts": true}}, "ProxyPorts is about"},
		{"unknown", Request{Name: "quantum", Names: cli}, `--backend: "quantum" is none of real, virtual, process`},
		{"none", Request{}, `Name: "" is none of`},
	} {
		err := tt.r.Check()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// New configures the backend named: the real one with its environment and
// publishing, the process one with its agent too; the virtual one takes
// none of it.
func TestNew(t *testing.T) {
	p := env.Embedded{RedisServer: "/opt/redis-server"}
	c := Config{Provider: p, Publish: true, Agent: []string{"my-agent", "--flag"}, AgentWins: true, LogDir: "/tmp/logs"}
	if b, ok := New(Real, c).(real.Backend); !ok || b.Provider != p || !b.Publish {
		t.Errorf("real: %#v", New(Real, c))
	}
	b, ok := New(Process, c).(process.Backend)
	if !ok || b.Provider != p || !b.Publish || !b.AgentWins || b.LogDir != "/tmp/logs" || strings.Join(b.Agent, " ") != "my-agent --flag" {
		t.Errorf("process: %#v", New(Process, c))
	}
	if !sim.Computes(New(Virtual, c)) {
		t.Error("virtual: not the computing backend")
	}
}
