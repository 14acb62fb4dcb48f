package sim_test

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
)

// gateBackend runs a scenario until the test releases it, counting how many
// run at once; it refuses the scenarios named "refused".
type gateBackend struct {
	mu            sync.Mutex
	running, peak int
	started       chan string
	release       chan struct{}
}

func (*gateBackend) Name() string { return "gate" }

func (*gateBackend) Refuses(sc model.Scenario) error {
	if sc.Name == "refused" {
		return errors.New("not on this backend")
	}
	return nil
}

func (b *gateBackend) Run(ctx context.Context, eff model.Scenario, observe func(model.Event)) (*sim.Recording, error) {
	b.mu.Lock()
	b.running++
	b.peak = max(b.peak, b.running)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.running--
		b.mu.Unlock()
	}()
	b.started <- eff.Name
	e := model.Event{Kind: model.RunEnded, Instance: -1, Detail: "complete"}
	if observe != nil {
		observe(e)
	}
	rec := &sim.Recording{RunID: eff.Name, Timeline: model.Timeline{e}}
	select {
	case <-b.release:
		return rec, nil
	case <-ctx.Done():
		return rec, ctx.Err()
	}
}

func named(names ...string) []model.Scenario {
	var scs []model.Scenario
	for _, n := range names {
		scs = append(scs, model.Scenario{Name: n, Instances: 1})
	}
	return scs
}

// A suite runs at most Parallel at once, in order; a refusal is neither
// run nor failed; each run's observer sees its events and its end.
func TestSuiteParallelRefusalsObservers(t *testing.T) {
	b := &gateBackend{started: make(chan string, 10), release: make(chan struct{})}
	var mu sync.Mutex
	events, done := map[int]int{}, map[int]bool{}
	s := sim.Suite{Backend: b, Parallel: 2, Start: func(i int, sc model.Scenario) sim.RunObserver {
		return sim.RunObserver{
			Event: func(model.Event) { mu.Lock(); events[i]++; mu.Unlock() },
			Done:  func(r *sim.SuiteRun) { mu.Lock(); done[i] = true; mu.Unlock() },
		}
	}}
	go func() {
		for range 4 { // the four that run (one of the five is refused)
			<-b.started
			b.release <- struct{}{}
		}
	}()
	runs := s.Run(context.Background(), named("a", "refused", "b", "c", "d"))
	if b.peak > 2 {
		t.Errorf("%d ran at once; Parallel is 2", b.peak)
	}
	if len(runs) != 5 || runs[1].Refused == nil || runs[1].Result != nil || runs[0].Result == nil || runs[0].Result.RunID != "a" || runs[4].Result.RunID != "d" {
		t.Fatalf("runs %+v", runs)
	}
	for i := range 5 {
		if !done[i] || (i != 1 && events[i] != 1) {
			t.Errorf("run %d: done %v, %d events observed", i, done[i], events[i])
		}
	}
	if c := sim.Count(runs); c.Refused != 1 || c.Failed+c.Unknown+c.Passed != 4 {
		t.Errorf("counts %+v", c)
	}
}

// Interrupted, the suite keeps the partial runs and marks the queued
// scenarios not started, calling NotStarted for each.
func TestSuiteInterrupt(t *testing.T) {
	b := &gateBackend{started: make(chan string, 10), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	var skipped []int
	s := sim.Suite{Backend: b, Parallel: 1, NotStarted: func(i int, _ model.Scenario) { skipped = append(skipped, i) }}
	go func() {
		<-b.started // "a" runs, holding the only slot
		cancel()
	}()
	runs := s.Run(ctx, named("a", "b", "c"))
	if runs[0].Result == nil || runs[0].Result.Complete || !errors.Is(runs[0].Err, context.Canceled) {
		t.Errorf("the interrupted run: %+v; want its partial result with ctx's error", runs[0])
	}
	if !runs[1].NotStarted || !runs[2].NotStarted || len(skipped) != 2 || skipped[0] != 1 {
		t.Errorf("queued runs %+v, NotStarted called for %v; want 1 and 2 not started", runs[1:], skipped)
	}
	if c := sim.Count(runs); c.Failed != 3 {
		t.Errorf("counts %+v: an interrupted suite is no pass", c)
	}
}

// countBackend records the seeds it ran; it cannot start seed 13.
type countBackend struct {
	mu    sync.Mutex
	seeds []int64
}

func (*countBackend) Name() string                 { return "count" }
func (*countBackend) Refuses(model.Scenario) error { return nil }
func (b *countBackend) Run(_ context.Context, eff model.Scenario, _ func(model.Event)) (*sim.Recording, error) {
	if eff.Seed == 13 {
		return nil, errors.New("no environment")
	}
	b.mu.Lock()
	b.seeds = append(b.seeds, eff.Seed)
	b.mu.Unlock()
	return &sim.Recording{Timeline: model.Timeline{{Kind: model.RunEnded, Instance: -1, Detail: "complete"}}}, nil
}

// Seeds runs every seed once, handing each result over one at a time; a
// run that cannot start stops the sweep with its seed named.
func TestSeeds(t *testing.T) {
	b := &countBackend{}
	sc := model.Scenario{Name: "s", Instances: 1, Seed: 1}
	got := map[int64]bool{}
	var inEach sync.Mutex
	err := sim.Seeds(context.Background(), sc, b, 10, 3, func(r *verdict.Result) {
		if !inEach.TryLock() {
			t.Error("each called concurrently")
			return
		}
		defer inEach.Unlock()
		got[r.Seed] = true
	})
	if err != nil || len(got) != 10 || !got[1] || !got[10] {
		t.Fatalf("Seeds: %v, seeds %v; want 1 to 10 once each", err, got)
	}
	err = sim.Seeds(context.Background(), sc, b, 20, 2, func(*verdict.Result) {})
	if err == nil || !strings.Contains(err.Error(), "s seed 13: no environment") {
		t.Errorf("a run that cannot start: %v", err)
	}
}

// By default a suite runs one scenario per core on a backend that
// computes, PerCPU per core on one that waits, never more than it has.
func TestDefaultParallel(t *testing.T) {
	cores := runtime.GOMAXPROCS(0)
	waits, computes := &fakeBackend{}, &describedBackend{}
	if got := sim.DefaultParallel(waits, 1000); got != sim.PerCPU*cores {
		t.Errorf("waiting backend: %d at once, want %d", got, sim.PerCPU*cores)
	}
	if got := sim.DefaultParallel(computes, 1000); got != cores {
		t.Errorf("computing backend: %d at once, want %d", got, cores)
	}
	if got := sim.DefaultParallel(waits, 1); got != 1 {
		t.Errorf("one scenario: %d at once", got)
	}
}

// stampBackend records when each run started.
type stampBackend struct {
	fakeBackend
	mu     sync.Mutex
	starts []time.Time
}

func (b *stampBackend) Run(context.Context, model.Scenario, func(model.Event)) (*sim.Recording, error) {
	b.mu.Lock()
	b.starts = append(b.starts, time.Now())
	b.mu.Unlock()
	return &sim.Recording{}, nil
}

// On a backend whose runs wait, the first wave starts DefaultStagger apart
// unless Stagger says otherwise. The suite waits DefaultStagger between
// launching two runs, but each run's goroutine reaches the backend when
// the scheduler lets it: a first run that got there later than the second
// (CI at load: 148.86 ms apart) shortens the gap the backend sees, so the
// check is that there is a gap of the stagger's order, not none (a few µs).
func TestSuiteDefaultStagger(t *testing.T) {
	b := &stampBackend{}
	sim.Suite{Backend: b}.Run(context.Background(), named("a", "b"))
	if len(b.starts) != 2 {
		t.Fatalf("%d runs started, want 2", len(b.starts))
	}
	if d := b.starts[1].Sub(b.starts[0]); d < sim.DefaultStagger/2 {
		t.Errorf("second start %v after the first; want DefaultStagger (%v) less the first run's scheduling delay", d, sim.DefaultStagger)
	}
}

// A suite's verdict: nil when all that ran passed (refusals aside), the
// counts when some did not, and an error when the backend refused all.
func TestVerdict(t *testing.T) {
	pass := &verdict.Result{Evaluation: verdict.Evaluation{Verdict: model.Pass}}
	refused := sim.SuiteRun{Refused: errors.New("no runner mode")}
	for _, tt := range []struct {
		name string
		runs []sim.SuiteRun
		want string
	}{
		{"passed and refused", []sim.SuiteRun{{Result: pass}, refused}, ""},
		{"failed, unknown", []sim.SuiteRun{{Result: pass}, {Result: &verdict.Result{Evaluation: verdict.Evaluation{Verdict: model.Fail}}}, {Result: &verdict.Result{Evaluation: verdict.Evaluation{Verdict: model.Unknown}}}, {NotStarted: true}},
			"3 of 4 scenarios did not pass: 2 failed, 1 unknown"},
		{"all refused", []sim.SuiteRun{refused, refused}, "every scenario was refused by the backend: nothing ran"},
	} {
		err := sim.Verdict(tt.runs)
		if got := fmt.Sprint(err); tt.want == "" && err != nil || tt.want != "" && got != tt.want {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
