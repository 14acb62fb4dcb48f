package virtual_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

// runnerBuiltin returns a runner-mode built-in as it is.
func runnerBuiltin(t testing.TB, name string) model.Scenario {
	t.Helper()
	e, ok := scenarios.Lookup(name)
	if !ok || e.Scenario.Mode != model.ModeRunner {
		t.Fatalf("no runner-mode built-in %q", name)
	}
	return e.Scenario
}

// Runner mode is as deterministic as elector mode: a seed gives the same
// bytes, tasks and chores included.
func TestRunnerDeterministic(t *testing.T) {
	sc := runnerBuiltin(t, "leader-crash")
	a, _ := json.Marshal(run(t, sc, virtual.Options{}))
	b, _ := json.Marshal(run(t, sc, virtual.Options{}))
	if !bytes.Equal(a, b) {
		t.Fatal("two runs of leader-crash differ")
	}
}

// The counts the schedule decides, as the real backend measured them on
// seeds 1-3 (docs/virtual.md's calibration): every task of a steady run
// completes once, a crashed leader's pending tasks are taken over, a lossy
// failover loses the delayed tasks of its last second and repeats what
// the replica missed, and its stale leader's chores land stale in spec
// mode and are fenced in safe mode.
func TestRunnerCounts(t *testing.T) {
	type want struct{ lost, stale, fenced, dup int }
	for name, w := range map[string]want{
		"steady-state":              {},
		"leader-crash":              {},
		"leader-stop":               {},
		"redis-failover-lossy":      {lost: 3, stale: 3},
		"redis-failover-lossy-safe": {lost: 3, fenced: 1},
		"partition-blackhole-safe":  {},
	} {
		for seed := int64(1); seed <= 3; seed++ {
			sc := runnerBuiltin(t, name)
			sc.Seed = seed
			res := run(t, sc, virtual.Options{})
			s := res.Analysis.Summary
			if res.Verdict != model.Pass || s.TasksLost != w.lost || s.StaleChores != w.stale || s.FencedChores != w.fenced || s.DuplicateChores != w.dup {
				t.Errorf("%s seed %d: %s, lost %d stale %d fenced %d duplicate chores %d; want pass, %+v",
					name, seed, res.Verdict, s.TasksLost, s.StaleChores, s.FencedChores, s.DuplicateChores, w)
			}
			if s.TasksDispatched < 200 || s.TasksUnreported+s.TasksUnfinished != 0 {
				t.Errorf("%s seed %d: %d dispatched, %d unreported, %d unfinished", name, seed, s.TasksDispatched, s.TasksUnreported, s.TasksUnfinished)
			}
			chores := map[string]int{}
			for _, e := range res.Timeline {
				if e.Kind == model.ChoreRan {
					chores[e.Chore]++
				}
			}
			// A leader runs the three chores once per ChoreInterval
			// while there is one.
			if n := chores["scheduler"]; n < 10 || chores["metrics"] < n-2 || chores["capacity"] < n-2 {
				t.Errorf("%s seed %d: chores %v", name, seed, chores)
			}
		}
	}
	// A crashed leader's pending entries are reclaimed after ClaimIdle, and
	// nothing is repeated: it reported none of them completed.
	res := run(t, runnerBuiltin(t, "leader-crash"), virtual.Options{})
	reclaimed := 0
	for _, e := range res.Timeline {
		if e.Kind == model.TaskReclaimed {
			reclaimed++
		}
	}
	if s := res.Analysis.Summary; reclaimed == 0 || s.TasksRepeated != 0 {
		t.Errorf("leader-crash: %d reclaimed, %d repeated; want some reclaimed, none repeated", reclaimed, s.TasksRepeated)
	}
}

// The fence, over every phase of the chore tick against the failover: in
// safe mode a stale leader's chore is refused inside Redis in every run
// and none lands stale; in spec mode the same chores land stale.
func TestRunnerFenceEveryPhase(t *testing.T) {
	for _, name := range []string{"redis-failover-lossy-safe", "redis-failover-lossy"} {
		for ms := 0; ms < 1000; ms += 100 {
			sc := runnerBuiltin(t, name)
			sc.Faults = append([]model.Fault(nil), sc.Faults...)
			sc.Faults[0].At = 6*time.Second + time.Duration(ms)*time.Millisecond
			s := run(t, sc, virtual.Options{}).Analysis.Summary
			safe := sc.Params.Safe
			if safe && (s.StaleChores != 0 || s.FencedChores == 0) || !safe && (s.StaleChores == 0 || s.FencedChores != 0) {
				t.Errorf("%s at %v: stale %d, fenced %d", name, sc.Faults[0].At, s.StaleChores, s.FencedChores)
			}
		}
	}
}

// A chore's reply held by a pause reaches the runner after the resume: its
// ChoreRan comes then, with Took spanning the pause, and it is not stale
// (its write landed before the pause, while the instance held the lease),
// as the real backend records it.
func TestRunnerChoreReplyHeldByPause(t *testing.T) {
	sc := runnerBuiltin(t, "pause-safe")
	// Find the leader's scheduler chore in flight after 6 s.
	var at time.Duration
	for _, e := range run(t, sc, virtual.Options{}).Timeline {
		if e.Kind == model.ChoreRan && e.Chore == "scheduler" && e.At > 6*time.Second {
			at = e.At - e.Took/2
			break
		}
	}
	sc.Faults = append([]model.Fault(nil), sc.Faults...)
	sc.Faults[0].At = at
	res := run(t, sc, virtual.Options{})
	late := false
	for _, e := range res.Timeline {
		if e.Kind == model.ChoreRan && e.Chore == "scheduler" && e.Took >= sc.Faults[0].For {
			late = true
		}
	}
	if !late || res.Analysis.Summary.StaleChores != 0 {
		t.Errorf("pause at %v: a chore reply held through the pause: %v; stale chores %d (want 0)", at, late, res.Analysis.Summary.StaleChores)
	}
}

// A runner crashed or stopped while its Start still waits for Redis does
// not hold the others back: the harness starts them one after the other
// and goes on when a Start fails.
func TestRunnerCrashInStartStartsTheOthers(t *testing.T) {
	for _, kind := range []model.FaultKind{model.FaultCrash, model.FaultStop} {
		sc := runnerBuiltin(t, "leader-crash")
		sc.Faults = []model.Fault{{At: 6 * time.Millisecond, Kind: kind, Target: model.Target{Indexes: []int{0}}}}
		sc.Expect = nil
		res := run(t, sc, virtual.Options{})
		started := map[int]bool{}
		for _, e := range res.Timeline {
			if e.Kind == model.InstanceStarted {
				started[e.Instance] = true
			}
		}
		if !started[1] || !started[2] || res.Analysis.Summary.TasksDispatched == 0 {
			t.Errorf("%s of instance 0 in its Start: started %v, %d tasks dispatched", kind, started, res.Analysis.Summary.TasksDispatched)
		}
	}
}
