package virtual_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/virtual"
)

// TestPauseOfADownIndexIsSkipped: through the Go API (which the YAML path's
// refusal does not guard), a pause of an index that a crash took down has
// nothing to act on. The virtual backend recorded it applied and passed;
// the real one skipped it and said unknown, which is the rule (package
// faults): skipped, named in the Detail, and unknown.
func TestPauseOfADownIndexIsSkipped(t *testing.T) {
	sc := model.Scenario{Name: "pause-down", Instances: 3, Seed: 1, Duration: 10 * time.Second, Recovery: 7 * time.Second,
		Faults: []model.Fault{
			{At: 2 * time.Second, Kind: model.FaultCrash, Target: model.Target{Indexes: []int{1}}},
			{At: 4 * time.Second, For: 2 * time.Second, Kind: model.FaultPause, Target: model.Target{Indexes: []int{1}}},
		}}
	// Validate refuses this schedule on fixed indexes (sim.Run and a
	// scenario file alike); a role target can still make it at run time.
	res, err := sim.RunUnvalidated(context.Background(), sc, virtual.Backend{}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pause []model.Event
	for _, e := range res.Timeline {
		if e.FaultID == 1 && (e.Kind == model.FaultApplied || e.Kind == model.FaultSkipped || e.Kind == model.FaultHealed) {
			pause = append(pause, e)
		}
	}
	if len(pause) != 1 || pause[0].Kind != model.FaultSkipped || !strings.Contains(pause[0].Detail, "instance [1] not running") {
		t.Errorf("the pause's events: %+v, want one FaultSkipped naming instance [1] not running", pause)
	}
	if res.Verdict != model.Unknown {
		t.Errorf("verdict %s, want %s (a fault skipped)", res.Verdict, model.Unknown)
	}
}

// TestCrashRestartBeforeItsStartStartsOnce: a crash with restart of an
// index whose start comes later starts it at the heal; the start then
// finds it up and starts nothing (virtual started a second incarnation,
// three electors of two instances; realtime skipped it).
func TestCrashRestartBeforeItsStartStartsOnce(t *testing.T) {
	sc := model.Scenario{Name: "restart-before-start", Instances: 2, Seed: 1, Duration: 10 * time.Second,
		Recovery: 7 * time.Second, Starts: []time.Duration{0, 6 * time.Second},
		Faults: []model.Fault{{At: time.Second, For: 2 * time.Second, Kind: model.FaultCrash, Restart: true,
			Target: model.Target{Indexes: []int{1}}}}}
	res, err := sim.RunUnvalidated(context.Background(), sc, virtual.Backend{}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var starts []time.Duration
	for _, e := range res.Timeline {
		if e.Kind == model.InstanceStarted && e.Instance == 1 {
			starts = append(starts, e.At)
		}
	}
	if len(starts) != 1 || starts[0] != 3*time.Second {
		t.Errorf("instance 1 started at %v, want once, at 3s (the restart)", starts)
	}
}
