package model

import "slices"

// ElectorPart is a runner-mode scenario as instances that run only an
// elector can run it: the same faults and timings in elector mode, with no
// workload and without the expectations only a task runner is measured on
// (lost and duplicate tasks, duplicate, stale and fenced chores). Its
// description says so. ok is false when s is not in runner mode, or when
// every expectation it has is a runner's: then there is nothing an elector
// could be judged on.
//
// The process backend refuses a runner-mode scenario for an agent that
// does not declare the runner capability; sim.Run then runs this instead,
// so that an elector-only agent is judged on leader-crash's gap and
// failover, not refused.
func (s Scenario) ElectorPart() (part Scenario, ok bool) {
	if s.Mode != ModeRunner {
		return s, false
	}
	part = s
	part.Mode, part.Workload = ModeElector, Workload{}
	part.Expect = slices.DeleteFunc(slices.Clone(s.Expect), func(e Expectation) bool { return slices.Contains(runnerMetrics, e.Metric) })
	if len(part.Expect) == 0 && len(s.Expect) > 0 {
		return s, false
	}
	note := "Run as an elector-only agent's: its instances run no task runner, so the workload and the expectations on tasks and chores are left out."
	if part.Description != "" {
		note = part.Description + " " + note
	}
	part.Description = note
	return part, true
}
