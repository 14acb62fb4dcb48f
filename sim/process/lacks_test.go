package process

import (
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/model"
)

// A validity margin at or above the TTL the agent was given leaves its
// lease never valid, and the bounds' terms (TTL - margin) negative: the
// hello is refused, naming both; a margin below it is taken.
func TestLacksRefusesAMarginPastTheTTL(t *testing.T) {
	sc := model.Scenario{Params: model.Params{TTL: 2 * time.Second}}
	rt := 1000.0
	hello := func(margin float64) agent.Hello {
		return agent.Hello{Client: &agent.Client{Library: "go-redis v9", ReadTimeoutMS: &rt, ValidityMarginMS: margin}}
	}
	err := lacks("i0", sc, hello(2000))
	if err == nil || !strings.Contains(err.Error(), "validity_margin_ms 2000") || !strings.Contains(err.Error(), "2s") {
		t.Errorf("a 2000 ms margin at TTL 2s: %v, want a refusal naming both", err)
	}
	if err := lacks("i0", sc, hello(20)); err != nil {
		t.Errorf("a 20 ms margin at TTL 2s: %v", err)
	}
}
