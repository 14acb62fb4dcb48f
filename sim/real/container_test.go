package real_test

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/real"
	"github.com/leaselab/leaselab/simtest"
)

// crashScenario is TestLeaderCrash's scenario: a leader crash with short
// timings, one gap expected.
func crashScenario() model.Scenario {
	return model.Scenario{Instances: 3, Params: fast, Duration: 3 * time.Second, Recovery: 2 * time.Second,
		Faults: []model.Fault{{At: time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}}}}
}

func TestContainersLeaderCrash(t *testing.T) {
	t.Parallel()
	p := simtest.Containers(t)
	res := simtest.Run(t, crashScenario(), p)
	s := res.Analysis.Summary
	pred := prediction(t, res, model.ModeLeaderCrash)
	t.Logf("containers, leader crash: measured gap %v, predicted ≤ %v; setup %v", s.MaxGap, pred.MaxGap, res.Setup)
	if s.Gaps != 1 {
		t.Fatalf("gaps = %d, want 1", s.Gaps)
	}
	if s.MaxGap > pred.MaxGap+slack || s.MaxGap < fast.TTL/2-slack/2 {
		t.Errorf("gap %v outside [TTL/2, prediction %v] ± slack", s.MaxGap, pred.MaxGap)
	}
	if s.Overlaps != 0 {
		t.Errorf("overlaps = %d after a crash", s.Overlaps)
	}
	requireTruth(t, res)
	assertNothingLeft(t, p.Label)
}

// TestContainersRedisRestart restarts the Redis container: the lease is
// lost with the dataset, and someone must take it again. (A container
// restart takes ~0.5 s, as long as the TTL here, so whether the leader
// still believes when Redis is back, a stale window, depends on timing: it
// is logged, not asserted.)
func TestContainersRedisRestart(t *testing.T) {
	t.Parallel()
	p := simtest.Containers(t)
	res := simtest.Run(t, model.Scenario{Instances: 3, Params: fast, Duration: 3 * time.Second, Recovery: 2 * time.Second,
		Faults: []model.Fault{{At: 1100 * time.Millisecond, Kind: model.FaultRedisRestart}}}, p)
	s := res.Analysis.Summary
	if s.LeaderGains < 2 {
		t.Errorf("leader gained %d times; after the restart someone must take the lost lease again", s.LeaderGains)
	}
	// A restart that failed would be a harness error (simtest.Run fails
	// on those); this checks it happened at all.
	applied := false
	for _, e := range res.Timeline {
		applied = applied || (e.Kind == model.FaultApplied && e.Fault == string(model.FaultRedisRestart))
	}
	if !applied {
		t.Error("no redis-restart applied")
	}
	assertNothingLeft(t, p.Label)
}

// TestContainersInterrupted cancels a run in the middle, and one during
// setup: nothing may be left either way.
func TestContainersInterrupted(t *testing.T) {
	t.Parallel()
	p := simtest.Containers(t)

	// Cancelled a second into the run proper (setup time varies with load).
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var started sync.Once
	observe := func(model.Event) { started.Do(func() { time.AfterFunc(time.Second, cancel) }) }
	res, err := real.Run(ctx, model.Scenario{Name: "interrupted", Instances: 3, Params: fast, Duration: time.Minute}, real.Options{Provider: p, Observe: observe})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v, want context.Canceled", err)
	}
	if res == nil || res.Complete {
		t.Fatalf("want a partial result marked incomplete, got %+v", res)
	}
	assertNothingLeft(t, p.Label)

	ctx, cancel = context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, err := real.Run(ctx, model.Scenario{Name: "interrupted-setup", Instances: 3, Params: fast}, real.Options{Provider: p}); err == nil {
		t.Fatal("Run whose setup was cut short returned no error")
	} else {
		t.Logf("setup cut short: %v", err)
	}
	assertNothingLeft(t, p.Label)
}

// requireTruth checks the ground-truth lane (keyspace notifications)
// worked: Redis's holder was recorded.
func requireTruth(t *testing.T, res *verdict.Result) {
	t.Helper()
	for _, e := range res.Timeline {
		if e.Kind == model.RedisHolder && e.Holder != "" {
			return
		}
	}
	t.Error("no Redis holder recorded: the keyspace-notification lane saw nothing")
}

// assertNothingLeft checks, with the docker CLI, that no container or
// network labelled with label is left.
func assertNothingLeft(t *testing.T, label string) {
	t.Helper()
	filter := "label=" + env.LabelEnv + "=" + label
	for _, args := range [][]string{
		{"ps", "-a", "-q", "--filter", filter},
		{"network", "ls", "-q", "--filter", filter},
	} {
		out, err := exec.Command("docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
		}
		if left := strings.TrimSpace(string(out)); left != "" {
			t.Errorf("docker %s: left behind: %s", strings.Join(args, " "), strings.ReplaceAll(left, "\n", " "))
		}
	}
}
