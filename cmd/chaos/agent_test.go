package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/leaselab/leaselab/internal/agenttest"
	"github.com/leaselab/leaselab/model"
)

// TestAgentConforms: chaos agent, as the elector and as the runner, in
// spec and safe mode, keeps the agent protocol's life cycle.
func TestAgentConforms(t *testing.T) {
	bin := buildChaos(t)
	for _, c := range []struct {
		name string
		sc   model.Scenario
	}{
		{"elector", model.Scenario{Params: model.Params{TTL: 1e9, Wait: 2e8}}},
		{"elector-safe", model.Scenario{Params: model.Params{TTL: 1e9, Wait: 2e8, Safe: true}}},
		{"runner", model.Scenario{Mode: model.ModeRunner, Params: model.Params{TTL: 1e9, Wait: 2e8}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := c.sc.WithDefaults().Scaled()
			b, err := json.Marshal(sc)
			if err != nil {
				t.Fatal(err)
			}
			agenttest.Conform(t, []string{bin, "agent"}, "LEASELAB_SCENARIO="+string(b))
		})
	}
}

// buildChaos builds the chaos binary into the test's temporary directory.
func buildChaos(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "chaos")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
