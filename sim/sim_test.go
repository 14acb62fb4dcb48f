package sim_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
)

// fakeBackend records what the pipeline hands it and returns a fixed
// recording: a unit test of the pipeline's own logic, not of a backend.
type fakeBackend struct {
	refuse error
	err    error
	got    *model.Scenario
	rec    sim.Recording
}

func (*fakeBackend) Name() string { return "fake" }

func (b *fakeBackend) Refuses(model.Scenario) error { return b.refuse }

func (b *fakeBackend) Run(_ context.Context, eff model.Scenario, _ func(model.Event)) (*sim.Recording, error) {
	b.got = &eff
	rec := b.rec
	return &rec, b.err
}

func scenario() model.Scenario {
	return model.Scenario{Name: "pipeline", Instances: 2, TimeScale: 0.5, Duration: 10 * time.Second, Seed: 3,
		Faults: []model.Fault{{At: 2 * time.Second, For: time.Second, Kind: model.FaultPartition, Target: model.Target{Role: model.RoleLeader}}}}
}

func TestRunHandsTheBackendTheScaledScenario(t *testing.T) {
	b := &fakeBackend{rec: sim.Recording{RunID: "id", Elapsed: time.Second, Errors: []string{"boom"},
		Timeline: model.Timeline{{At: 0, Kind: model.RunEnded, Instance: -1, Detail: "complete"}}}}
	res, err := sim.Run(context.Background(), scenario(), b, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b.got == nil || b.got.Duration != 5*time.Second || b.got.Faults[0].At != time.Second {
		t.Fatalf("backend got %+v; want the scenario scaled by 0.5", b.got)
	}
	if res.Backend != "fake" || res.RunID != "id" || res.Scenario.Duration != 10*time.Second || res.Params != b.got.Params || !res.Complete {
		t.Errorf("result %+v does not carry the recording and the unscaled scenario", res)
	}
	if res.Verdict != model.Fail {
		t.Errorf("verdict %v with a harness error; want fail", res.Verdict)
	}
}

func TestRunRefusal(t *testing.T) {
	reason := errors.New("not here")
	b := &fakeBackend{refuse: reason}
	res, err := sim.Run(context.Background(), scenario(), b, sim.Options{})
	if res != nil || !sim.IsRefusal(err) || !errors.Is(err, reason) || err.Error() != "not here" {
		t.Fatalf("Run = %v, %v; want a refusal that wraps the reason", res, err)
	}
	if b.got != nil {
		t.Error("a refused scenario ran")
	}
	if sim.IsRefusal(errors.New("other")) {
		t.Error("IsRefusal of a plain error")
	}
}

func TestRunInvalidScenarioDoesNotReachTheBackend(t *testing.T) {
	b := &fakeBackend{}
	sc := scenario()
	sc.Instances = -1
	if _, err := sim.Run(context.Background(), sc, b, sim.Options{}); err == nil || sim.IsRefusal(err) {
		t.Fatalf("Run of an invalid scenario: %v; want a validation error", err)
	}
	if b.got != nil {
		t.Error("an invalid scenario ran")
	}
}

func TestRunInterruptedIsIncomplete(t *testing.T) {
	b := &fakeBackend{err: context.Canceled}
	res, err := sim.Run(context.Background(), scenario(), b, sim.Options{})
	if !errors.Is(err, context.Canceled) || res == nil || res.Complete || res.Incomplete != context.Canceled.Error() || res.Verdict == model.Pass {
		t.Fatalf("Run = %+v, %v; want the partial result marked incomplete with ctx's error", res, err)
	}
}

// describedBackend says what it is and computes: the result carries both,
// so that reports need not know its name.
type describedBackend struct{ fakeBackend }

func (describedBackend) About() string  { return "a model, virtual time" }
func (describedBackend) Computes() bool { return true }

func TestRunRecordsWhatTheBackendSaysOfItself(t *testing.T) {
	res, err := sim.Run(context.Background(), scenario(), &describedBackend{}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.BackendAbout != "a model, virtual time" || !res.VirtualTime {
		t.Errorf("about %q, virtual time %v; want the backend's description and virtual time", res.BackendAbout, res.VirtualTime)
	}
	res, err = sim.Run(context.Background(), scenario(), &fakeBackend{}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.BackendAbout != "" || res.VirtualTime {
		t.Errorf("a backend that says nothing: about %q, virtual time %v", res.BackendAbout, res.VirtualTime)
	}
}
