package reports

import (
	"github.com/leaselab/leaselab/model/analysis"

	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// TestRunnerFigures: chores and tasks of a runner-mode run reach the report,
// and long id lists are capped.
func TestRunnerFigures(t *testing.T) {
	res := fixture()
	res.Scenario.Mode = model.ModeRunner
	res.Scenario.Workload = model.Workload{DispatchRate: 20, Delay: time.Second, TaskDuration: 10 * time.Millisecond}
	a := &res.Analysis
	a.DuplicateChores = []analysis.DuplicateChore{{
		Chore:  "scheduler",
		First:  analysis.ChoreRun{Member: model.Member{Instance: 0, ID: idA}, At: ms(19000)},
		Second: analysis.ChoreRun{Member: model.Member{Instance: 1, ID: idB}, At: ms(19400)},
		Apart:  ms(400),
	}}
	a.StaleChores = []analysis.ChoreRun{{Member: model.Member{Instance: 1, ID: idB}, At: ms(21250)}}
	a.FencedChores = []analysis.ChoreRun{{Member: model.Member{Instance: 0, ID: idA}, At: ms(22000)}}
	a.Summary.StaleChores, a.Summary.FencedChores = 1, 1
	for i := range 25 {
		a.LostTasks = append(a.LostTasks, fmt.Sprintf("task-%02d", i))
	}
	a.RepeatedTasks = []analysis.RepeatedTask{
		{Task: "task-99", Completions: 2, By: []model.Member{{Instance: 0, ID: idA}, {Instance: 1, ID: idB}}, Reclaims: 1},
		{Task: "task-98", Completions: 2}, // a result.json from before By and Reclaims were recorded
	}
	a.Summary.TasksDispatched, a.Summary.TasksLost, a.Summary.TasksRepeated, a.Summary.DuplicateChores = 900, 25, 2, 1
	a.Summary.DelayedLateness = analysis.DurationStats{Count: 3, Min: ms(5), Median: ms(40), Max: ms(1200)}
	var b bytes.Buffer
	if err := Markdown(&b, res, Options{}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| scheduler | i0 (aaaaaa) at 19.000s | i1 (bbbbbb) at 19.400s | 400ms |",
		"| Lost (dispatched, never completed, gone from Redis) | **25** |",
		"task-19, … (5 more in result.json)",
		"task-99 ×2 by i0 (aaaaaa), i1 (bbbbbb), after a reclaim",
		"task-98 ×2, incarnations and reclaims not recorded",
		"| Repeated after a reclaim (at-least-once redelivery",
		"n=3, min 5ms, median 40ms, max 1.2s",
		"| Workload dispatch rate | 20/s |",
		"### Stale chores (a chore's writes landed while the lease key held another id or none)",
		"| i1 (bbbbbb) | 21.250s |",
		"### Fenced chores (safe mode: the chore's script refused to write)",
		"| i0 (aaaaaa) | 22.000s |",
		"| Stale chores / fenced chores | 1 / 1 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report does not contain %q", want)
		}
	}
	if strings.Contains(md, "task-20") {
		t.Error("the lost-task list is not capped")
	}
}

// TestScaledParameters: at a time scale other than 1 the parameters show
// both the effective and the written value, and the schedule is scaled.
func TestScaledParameters(t *testing.T) {
	res := fixture()
	res.TimeScale, res.Scenario.TimeScale = 0.2, 0.2
	res.Params.TTL, res.Params.Wait = time.Second, 1200*time.Millisecond
	var b bytes.Buffer
	if err := Markdown(&b, res, Options{}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| Parameter | Value (scaled) | As written | Meaning |",
		"| TTL | 1s | 5s |",
		"| 0 | 2.000s | 3s | partition | i0 |", // at 10s, for 15s, scaled by 0.2
		"--time-scale 0.2",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report does not contain %q", want)
		}
	}
}

// TestSkippedFault: a fault whose target matched nobody says so, instead
// of looking like a harness failure.
func TestSkippedFault(t *testing.T) {
	res := fixture()
	res.Scenario.Faults = append(res.Scenario.Faults, model.Fault{At: 40 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}})
	res.Timeline = append(res.Timeline, model.Event{At: ms(40000), Kind: model.FaultSkipped, Instance: -1, Fault: "crash", FaultID: 1, Detail: "no leader"})
	var b bytes.Buffer
	if err := Markdown(&b, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "| 1 | 40.000s | to end of fault phase | crash | the leader | — | **skipped at 40.000s: no leader** |"; !strings.Contains(b.String(), want) {
		t.Errorf("the schedule does not contain %q", want)
	}
}

// A report derives no bound: a result without the run's predictions (an
// older one) says "no prediction" for its faults, where it used to compute
// one afresh without the fault sizes the run applied.
func TestNoPredictionIsDerived(t *testing.T) {
	res := fixture()
	res.Predictions = nil
	var b bytes.Buffer
	if err := Markdown(&b, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "no prediction") {
		t.Errorf("a fault without the run's prediction does not say so:\n%s", b.String())
	}
	if strings.Contains(b.String(), "max(0, TTL/2 + Wait - ") {
		t.Errorf("the report shows a blackhole gap formula the run never predicted")
	}
}

// The Measurement section shows how late the machine ran the instances'
// timers and the harness's goroutines, which the verdicts count.
func TestStallsInMeasurement(t *testing.T) {
	res := fixture()
	res.Analysis.Stalls = []analysis.Stall{{Instance: 1, At: ms(12000), Late: ms(454)}, {Instance: -1, At: ms(11000), Late: ms(87)}}
	var b bytes.Buffer
	if err := Markdown(&b, res, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Instance timers fired late (≥ 2ms) | n=1, min 454ms", "| Harness wake-ups late (≥ 2ms, its probe) | n=1, min 87ms"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report does not contain %q", want)
		}
	}
}
