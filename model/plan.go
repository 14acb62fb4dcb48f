package model

import (
	"sort"
	"time"
)

// ActionKind says what a step of a scenario's plan does.
type ActionKind uint8

// Plan actions.
const (
	// ActionStart starts a delayed instance (Scenario.Starts).
	ActionStart ActionKind = iota + 1
	// ActionInject injects a fault.
	ActionInject
	// ActionHeal heals a fault that lasts (an instant one has none).
	ActionHeal
)

// Action is one step of a scenario's plan.
type Action struct {
	// At is when the step is due, from the start of the run.
	At   time.Duration
	Kind ActionKind
	// Index is the instance (ActionStart) or the fault (ActionInject,
	// ActionHeal), an index of Scenario.Faults.
	Index int
}

// FaultPlan is the scenario's schedule as every backend runs it: the delayed
// starts (an instance whose Starts entry is 0 or absent starts with the run,
// before the plan), each fault's injection at its At and, unless it is
// instant, its heal at HealAt; sorted stably by time, so at one moment the
// starts come first, then the faults in their order. Whatever is still
// active at the end of the fault phase is healed there by the backend, in
// fault order. Call it on the effective scenario (defaults filled, scaled).
func (s Scenario) FaultPlan() []Action {
	var plan []Action
	for i, d := range s.Starts {
		if i < s.Instances && d > 0 {
			plan = append(plan, Action{At: d, Kind: ActionStart, Index: i})
		}
	}
	for i, f := range s.Faults {
		plan = append(plan, Action{At: f.At, Kind: ActionInject, Index: i})
		if !f.Instant() {
			plan = append(plan, Action{At: s.HealAt(f), Kind: ActionHeal, Index: i})
		}
	}
	sort.SliceStable(plan, func(a, b int) bool { return plan[a].At < plan[b].At })
	return plan
}

// HealAt is when the schedule heals f, the one heal rule: At + For, or the
// end of the fault phase (Duration) if For is 0 or reaches past it. An
// instant fault heals nothing; HealAt is then its At.
func (s Scenario) HealAt(f Fault) time.Duration {
	if f.Instant() {
		return f.At
	}
	if f.For > 0 && f.At+f.For < s.Duration {
		return f.At + f.For
	}
	return s.Duration
}

// DefaultFailoverSwitch is how long a redis-failover's switch takes when
// nothing measured it (the promotion and the clients following it): the
// real backend measured 3-16 ms from the end of the lag to the instances
// reaching the promoted node; the virtual backend's default. A scheduled
// failover lasts its Lag plus this.
const DefaultFailoverSwitch = 10 * time.Millisecond
