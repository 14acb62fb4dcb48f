package model

import (
	"slices"
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

// ScheduledFaultSize is the size of the faults the scenario schedules, as
// the predictions before a run assume it: AppliedFaultSize over the fault
// spans of the plan (each fault injected at its At, healed at HealAt; a
// failover switching DefaultFailoverSwitch after its Lag; a redis-restart
// taken as instant). A target that names a role is resolved only at run
// time, so it is taken to hit every instance. sc is the effective scenario
// (defaults filled, scaled). chaos bounds FILE, a sweep's cells and advise
// use it; a run's own checks use AppliedFaultSize on what it applied.
func ScheduledFaultSize(sc Scenario) FaultSize {
	every := make([]int, max(sc.Instances, 0))
	for i := range every {
		every[i] = i
	}
	a := Analysis{Params: sc.Params}
	if sc.Instances > 0 {
		// The first leader promotes at the start: its first renewal is
		// a cold one (coldRenewals). A run passes over a leader a fault
		// hit before that renewal could land (firstRenewer): the next
		// leader's first renewal is then the cold one, promoted when is
		// not known before the run. So, as the run judges at worst: a
		// first leader the first targeted fault hits, and after it one
		// that no fault hits, promoted after the last fault's start.
		first, last := 0, time.Duration(0)
		for _, f := range sc.Faults {
			last = max(last, f.At)
		}
		if i := slices.IndexFunc(sc.Faults, func(f Fault) bool { return len(f.Target.Indexes) > 0 }); i >= 0 {
			first = sc.Faults[i].Target.Indexes[0]
		}
		a.Beliefs = []Belief{
			{Member: Member{Instance: first}, Window: Window{Open: true}},
			{Member: Member{Instance: -1}, Window: Window{Start: last, Open: true}},
		}
	}
	for i, f := range sc.Faults {
		sp := FaultSpan{ID: i, Kind: string(f.Kind), Mode: ModeOf(f.Kind, f.Mode), Applied: f.At, Healed: sc.HealAt(f), Instant: f.Instant()}
		if end := specOf(f.Kind).planEnd; end != nil {
			sp.Healed = end(f)
		}
		switch {
		case f.Kind.OnRedis():
		case len(f.Target.Indexes) > 0:
			sp.Target = f.Target.Indexes
		default:
			sp.Target = every
		}
		// Any fault but one on a follower may hit a leader.
		o := FaultOutcome{FaultSpan: sp, LeaderHit: f.Target.Role != RoleFollower}
		if o.LeaderHit {
			for _, i := range sp.Target {
				o.LeadersAtInjection = append(o.LeadersAtInjection, Member{Instance: i})
			}
		}
		a.Faults = append(a.Faults, o)
	}
	return AppliedFaultSize(sc, a)
}

// PredictScheduled is the prediction of each mode sc's faults put the
// election in (in the order of the faults, each mode once; a fault whose
// mode has no bound, none), sized as the scenario schedules them
// (ScheduledFaultSize of its effective, scaled form): what a run of sc is
// predicted to measure at worst, before it runs. chaos init's table and a
// sweep cell's prediction are it.
func PredictScheduled(sc Scenario) []Prediction {
	e := sc.WithDefaults().Scaled()
	size := ScheduledFaultSize(e)
	var out []Prediction
	seen := map[string]bool{}
	for _, f := range e.Faults {
		m := ModeOf(f.Kind, f.Mode)
		if m == "" || seen[m] {
			continue
		}
		seen[m] = true
		if pr, ok := PredictMode(e.Params, m, size); ok {
			out = append(out, pr)
		}
	}
	return out
}
