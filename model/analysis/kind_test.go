package analysis

import (
	"github.com/leaselab/leaselab/model"

	"testing"
)

// TestFaultName: a kind with several failure modes is named with its mode.
func TestFaultName(t *testing.T) {
	for _, c := range []struct {
		kind, mode, want string
	}{
		{"partition", model.ModePartitionRefuse, "partition refuse"},
		{"partition", model.ModePartitionReplies, "partition replies"},
		{"latency", model.ModeLatency, "latency"},
		{"redis-pause", model.ModeRedisPause, "redis-pause"},
	} {
		if got := faultName(model.FaultOutcome{FaultSpan: model.FaultSpan{Kind: c.kind, Mode: c.mode}}); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.kind, c.mode, got, c.want)
		}
	}
}
