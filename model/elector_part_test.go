package model

import "testing"

func TestElectorPart(t *testing.T) {
	runner := Scenario{Mode: ModeRunner, Description: "d.", Workload: Workload{DispatchRate: 20},
		Expect: []Expectation{{Metric: "max_gap", Max: "predicted"}, {Metric: "lost_tasks", Max: "0"}, {Metric: "duplicate_chores", Max: "0"}}}
	part, ok := runner.ElectorPart()
	if !ok || part.Mode != ModeElector || part.Workload.DispatchRate != 0 || len(part.Expect) != 1 || part.Expect[0].Metric != "max_gap" {
		t.Fatalf("elector part %+v, %v: want elector mode, no workload, max_gap only", part, ok)
	}
	if len(runner.Expect) != 3 {
		t.Errorf("ElectorPart changed the scenario's own expectations: %v", runner.Expect)
	}
	if err := part.Validate(); err != nil {
		t.Errorf("the elector part does not validate: %v", err)
	}
	if _, ok := (Scenario{Mode: ModeRunner, Expect: []Expectation{{Metric: "lost_tasks", Max: "0"}}}).ElectorPart(); ok {
		t.Error("a scenario judged only on tasks has an elector part")
	}
	if _, ok := (Scenario{Mode: ModeElector}).ElectorPart(); ok {
		t.Error("an elector scenario has an elector part")
	}
}
