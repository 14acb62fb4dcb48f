package real_test

import (
	"github.com/leaselab/leaselab/model/verdict"

	"testing"
	"time"

	"github.com/leaselab/leaselab/internal/stallmeter"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/real"
	"github.com/leaselab/leaselab/sim/virtual"
)

// Scenario.Starts delays an instance's start on the real backend as on the
// virtual one: the follower started 1.1s in takes the crashed leader's key
// at one of its own attempts (1.1s + k × Wait), on both backends.
func TestStartsDelayInstances(t *testing.T) {
	t.Parallel()
	sc := model.Scenario{Instances: 2, Params: fast, Duration: 3 * time.Second, Recovery: time.Second,
		Starts: []time.Duration{0, 1100 * time.Millisecond},
		Faults: []model.Fault{{At: 1500 * time.Millisecond, Kind: model.FaultCrash, Target: model.Target{Indexes: []int{0}}}}}
	// The real run can only be late, by as much as this process was kept
	// from running (a loaded machine) until instance 1 led.
	// The stall counts from the run's first event (not the environment's
	// setup) to the gain; Observe runs on the recording goroutine, in order.
	meter := stallmeter.Start()
	var began, stalled time.Duration
	startStall := map[int]time.Duration{} // by instance, at its start
	first := true
	res := runScenarioWith(t, sc, real.Options{Observe: func(e model.Event) {
		if first {
			began, first = meter.SoFar(), false
		}
		switch {
		case e.Kind == model.InstanceStarted:
			startStall[e.Instance] = meter.SoFar() - began
		case e.Kind == model.LeaderGained && e.Instance == 1 && stalled == 0:
			stalled = meter.SoFar() - began
		}
	}})
	meter.Stop()
	vres, err := virtual.Run(sc, virtual.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(r *verdict.Result, kind model.Kind, instance int) time.Duration {
		for _, e := range r.Timeline {
			if e.Kind == kind && e.Instance == instance {
				return e.At
			}
		}
		t.Fatalf("%s: no %s of instance %d", r.Backend, kind, instance)
		return 0
	}
	// A start is never early; late by at most 150 ms (100 ms for the
	// first) plus, on the real run, what the process had stalled by then.
	for _, r := range []*verdict.Result{res, vres} {
		late := func(i int) time.Duration {
			if r == res {
				return startStall[i]
			}
			return 0
		}
		if s := at(r, model.InstanceStarted, 1); s < 1100*time.Millisecond || s > 1250*time.Millisecond+late(1) {
			t.Errorf("%s: instance 1 started at %v, want 1.1s (+ stalled %v)", r.Backend, s, late(1))
		}
		if s := at(r, model.InstanceStarted, 0); s > 100*time.Millisecond+late(0) {
			t.Errorf("%s: instance 0 started at %v, want at once (+ stalled %v)", r.Backend, s, late(0))
		}
	}
	// The key expires TTL after the leader's last renewal (by 2s); the
	// follower's attempts come at 1.1s + k × 600ms: 2.3s at the latest.
	const tol = 60 * time.Millisecond
	gain, virt := at(res, model.LeaderGained, 1), at(vres, model.LeaderGained, 1)
	stall := stalled
	t.Logf("instance 1 led at %v (real), %v (virtual): %v apart, the process stalled %v", gain, virt, gain-virt, stall)
	if d := gain - virt; d < -tol || d > tol+stall {
		t.Errorf("instance 1 led at %v (real), %v (virtual); want within [-%v, %v + stalled %v]", gain, virt, tol, tol, stall)
	}
}
