package bounds

import (
	"github.com/leaselab/leaselab/model"

	"strings"
	"testing"
	"time"
)

// A client an agent declares is judged by its own behaviour, not by
// go-redis's: the bounds of the failing-call modes change with it.
func TestDeclaredClientBounds(t *testing.T) {
	size := model.FaultSize{Partition: 14 * time.Second}
	predict := func(c model.ClientParams, mode string) Prediction {
		t.Helper()
		pr, ok := PredictMode(model.Params{Client: c}, mode, size)
		if !ok {
			t.Fatalf("no prediction for %s", mode)
		}
		return pr
	}
	goRedis := predict(model.ClientParams{}, model.ModePartitionReplies)
	if goRedis.MaxGap != time.Second {
		t.Fatalf("go-redis's partition-one-way gap: %v, want 1s (TTL + Wait - C, C = 2 read timeouts)", goRedis.MaxGap)
	}

	// redis-py giving up after one timeout (the measured 2.97 s gap of
	// partition-one-way was a FAIL against go-redis's 1 s).
	onePy := model.ClientParams{Library: "redis-py 4.3.4", ReadTimeout: 5 * time.Second, MaxRetries: -1}
	pr := predict(onePy, model.ModePartitionReplies)
	if pr.MaxGap < 2970*time.Millisecond || pr.MaxGap > 11*time.Second {
		t.Errorf("one-attempt redis-py, partition-one-way gap bound %v: want at least the measured 2.97s (TTL + Wait - T = 6s)", pr.MaxGap)
	}
	if !strings.Contains(pr.CallFormula, "redis-py") {
		t.Errorf("the call is explained in go-redis's terms, not the declared client's: %q", pr.CallFormula)
	}
	if pr := predict(onePy, model.ModePartitionBlackhole); pr.Call != 5*time.Second {
		t.Errorf("one-attempt redis-py, blackholed call %v, want the read timeout 5s", pr.Call)
	}

	// redis-py retrying a timed-out call once, 10 ms apart.
	retryPy := model.ClientParams{Library: "redis-py", ReadTimeout: 5 * time.Second, MaxRetries: 1, RetryOnTimeout: true, RetryBackoff: 10 * time.Millisecond}
	if pr := predict(retryPy, model.ModePartitionBlackhole); pr.Call != 10010*time.Millisecond {
		t.Errorf("redis-py retrying once: blackholed call %v, want 2 × 5s + 10ms", pr.Call)
	}
	// A refused connection fails at once and is retried after a backoff:
	// no dial retries (go-redis's 1.77 s).
	if pr := predict(retryPy, model.ModePartitionRefuse); pr.Call != 10*time.Millisecond || pr.MaxOverlap != 0 {
		t.Errorf("redis-py retrying once: refused call %v, overlap %v; want 10ms and 0", pr.Call, pr.MaxOverlap)
	}

	// node-redis: no command timeout, calls queued while reconnecting.
	node := model.ClientParams{Library: "node-redis 4.5", ReadTimeout: -1, MaxRetries: -1, Queues: true}
	for _, mode := range []string{model.ModePartitionBlackhole, model.ModePartitionRefuse, model.ModePartitionReset, model.ModePartitionReplies} {
		pr := predict(node, mode)
		if pr.MaxOverlap != model.Unbounded {
			t.Errorf("node-redis, %s: overlap bound %v, want unbounded (%s)", mode, pr.MaxOverlap, pr.OverlapFormula)
		}
		if !strings.Contains(pr.CallFormula, "node-redis 4.5") || !strings.Contains(pr.CallFormula, "unbounded") {
			t.Errorf("node-redis, %s: the call is not said plainly to be unbounded in the client's terms: %q", mode, pr.CallFormula)
		}
	}
	// A per-operation deadline bounds it again.
	nodeDeadline := node
	nodeDeadline.ContextTimeoutEnabled = true
	if pr, _ := PredictMode(model.Params{Client: nodeDeadline, OpTimeout: 2 * time.Second}, model.ModePartitionRefuse, size); pr.Call != 2*time.Second {
		t.Errorf("node-redis with a 2s per-operation deadline: refused call %v, want 2s", pr.Call)
	}

	// go-redis named explicitly is the detailed model.
	for _, mode := range Modes {
		a, b := predict(model.ClientParams{}, mode), predict(model.ClientParams{Library: "go-redis v9.23.0"}, mode)
		if a.MaxGap != b.MaxGap || a.MaxOverlap != b.MaxOverlap || a.Call != b.Call {
			t.Errorf("%s: go-redis named %v/%v/%v, unnamed %v/%v/%v", mode, b.MaxGap, b.MaxOverlap, b.Call, a.MaxGap, a.MaxOverlap, a.Call)
		}
	}
}
