package sweep_test

import (
	"github.com/leaselab/leaselab/model/bounds"

	"context"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sweep"
)

// pauseRunner is the pause built-in in runner mode: the resumed leader's
// chores land beside the new leader's.
func pauseRunner(t *testing.T) model.Scenario {
	t.Helper()
	e, ok := scenarios.Lookup("pause")
	if !ok {
		t.Fatal("no pause built-in")
	}
	sc := e.Scenario
	sc.Mode = model.ModeRunner
	sc.Expect = nil
	return sc
}

// TestExploreCounts: explore searches the worst schedule for the runner's
// counts and judges duplicate chores against bounds.ChoreBound; the search
// is the bound's adversarial test (it ranks runs by their share of the
// bound), and the counts with no bound say so.
func TestExploreCounts(t *testing.T) {
	s := sweep.Space{Base: pauseRunner(t), Metrics: []string{"duplicate_chores", "stale_chores", "duplicate_tasks"},
		Vary: []sweep.Range{{Param: sweep.ParamPause, Lo: "2s", Hi: "20s"}}, Seeds: 2, Budget: 600}
	r, err := sweep.Explore(context.Background(), s, sweep.ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dup, stale, tasks := r.Worst[0], r.Worst[1], r.Worst[2]
	if !dup.Found || !dup.Count || dup.Measured <= 0 {
		t.Fatalf("duplicate chores: %+v, want some found", dup)
	}
	if dup.Predicted == model.Unbounded || dup.Violated || dup.Measured > dup.Predicted {
		t.Errorf("duplicate chores %s against bound %s (%s): violated %v", dup.Value(dup.Measured), dup.BoundValue(), dup.Formula, dup.Violated)
	}
	if !strings.Contains(dup.Formula, "3 chores ×") {
		t.Errorf("formula %q", dup.Formula)
	}
	if !stale.Found || stale.Predicted != model.Unbounded || stale.BoundValue() != "unknown" || !strings.HasPrefix(stale.Formula, "no bound known") {
		t.Errorf("stale chores: %+v", stale)
	}
	if !tasks.Count || tasks.Violated {
		t.Errorf("duplicate tasks: %+v", tasks)
	}
	if got := dup.BesideBound(); strings.Contains(got, "ns") || !strings.Contains(got, " of ") {
		t.Errorf("a count reads %q", got)
	}
	sc, err := r.WorstScenario(dup)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Expect) != 1 || sc.Expect[0].Metric != "duplicate_chores" || sc.Expect[0].Max != dup.BoundValue() {
		t.Errorf("worst scenario expects %+v, want duplicate_chores ≤ %s", sc.Expect, dup.BoundValue())
	}
	if err := sc.Validate(); err != nil {
		t.Errorf("worst scenario does not validate: %v", err)
	}
}

// TestExploreCountsNeedRunnerMode: a count of chores or tasks is refused
// for an elector-mode scenario, naming the metric; ParseMetric takes the
// counts' names.
func TestExploreCountsNeedRunnerMode(t *testing.T) {
	sc := pauseRunner(t)
	sc.Mode = model.ModeElector
	err := sweep.Space{Base: sc, Metrics: []string{"duplicate_chores"}}.Check()
	if err == nil || !strings.Contains(err.Error(), "duplicate_chores counts the TaskRunner's chores") {
		t.Fatalf("error %v", err)
	}
	for _, m := range []string{"duplicate_chores", "stale_chores", "duplicate_tasks"} {
		if got, err := sweep.ParseMetric(m); err != nil || got != m {
			t.Errorf("ParseMetric(%q) = %q, %v", m, got, err)
		}
	}
}

// TestChoreBoundFor: the bound per failover, 3 chores × (2·⌈O/I⌉ + 1),
// one run more per chore after a pause; none for an unbounded overlap.
func TestChoreBoundFor(t *testing.T) {
	for _, c := range []struct {
		o      time.Duration
		resume bool
		want   int
	}{{0, false, 3}, {999 * time.Millisecond, false, 9}, {time.Second, false, 9}, {1001 * time.Millisecond, false, 15}, {5505 * time.Millisecond, true, 42}} {
		if n, f, ok := bounds.ChoreBoundFor(c.o, time.Second, c.resume); !ok || n != c.want {
			t.Errorf("overlap %v resume %v: %d (%s), want %d", c.o, c.resume, n, f, c.want)
		}
	}
	if _, f, ok := bounds.ChoreBoundFor(model.Unbounded, time.Second, false); ok || !strings.HasPrefix(f, "no bound known") {
		t.Errorf("unbounded overlap: ok %v, %q", ok, f)
	}
}
