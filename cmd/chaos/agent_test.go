package main

import (
	"encoding/json"
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
