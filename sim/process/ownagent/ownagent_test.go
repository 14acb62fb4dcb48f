package ownagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/leaselab/leaselab/internal/agenttest"
	"github.com/leaselab/leaselab/model"
)

// TestMain makes the test binary the agent when the conformance test
// starts it as one (LEASELAB_OWNAGENT=1), with SIGTERM cancelling its ctx
// as chaos agent's main does.
func TestMain(m *testing.M) {
	if os.Getenv("LEASELAB_OWNAGENT") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := Run(ctx, os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The agent, as the elector and as the runner, keeps the agent protocol's
// life cycle against a real Redis.
func TestConforms(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sc   model.Scenario
	}{
		{"elector", model.Scenario{Params: model.Params{TTL: 1e9, Wait: 2e8}}},
		{"runner", model.Scenario{Mode: model.ModeRunner, Params: model.Params{TTL: 1e9, Wait: 2e8}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.sc.WithDefaults().Scaled())
			if err != nil {
				t.Fatal(err)
			}
			agenttest.Conform(t, []string{self, "-test.run=^$"}, "LEASELAB_OWNAGENT=1", "LEASELAB_SCENARIO="+string(b))
		})
	}
}

// Started without the environment the harness sets, it says what is
// missing, as a SetupError, and runs nothing.
func TestSetupErrors(t *testing.T) {
	sc, _ := json.Marshal(model.Scenario{})
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no scenario", nil, "LEASELAB_SCENARIO is not set: chaos agent is started by the process backend"},
		{"bad scenario", map[string]string{"LEASELAB_SCENARIO": "{"}, "agent: LEASELAB_SCENARIO: "},
		{"no redis", map[string]string{"LEASELAB_SCENARIO": string(sc), "LEASELAB_GROUP": "g"}, "LEASELAB_REDIS_ADDR and LEASELAB_GROUP must be set"},
	} {
		var out, log bytes.Buffer
		err := Run(context.Background(), func(k string) string { return tt.env[k] }, strings.NewReader(""), &out, &log)
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a SetupError saying %q", tt.name, err, tt.want)
		}
		if out.Len() != 0 {
			t.Errorf("%s: said %q on the protocol", tt.name, out.String())
		}
	}
}
