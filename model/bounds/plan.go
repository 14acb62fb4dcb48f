package bounds

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"slices"
	"time"
)

// ScheduledFaultSize is the size of the faults the scenario schedules, as
// the predictions before a run assume it: AppliedFaultSize over the fault
// spans of the plan (each fault injected at its At, healed at HealAt; a
// failover switching DefaultFailoverSwitch after its Lag; a redis-restart
// taken as instant). A target that names a role is resolved only at run
// time, so it is taken to hit every instance. sc is the effective scenario
// (defaults filled, scaled). chaos bounds FILE, a sweep's cells and advise
// use it; a run's own checks use AppliedFaultSize on what it applied.
func ScheduledFaultSize(sc model.Scenario) model.FaultSize {
	every := make([]int, max(sc.Instances, 0))
	for i := range every {
		every[i] = i
	}
	a := analysis.Analysis{Params: sc.Params}
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
		if i := slices.IndexFunc(sc.Faults, func(f model.Fault) bool { return len(f.Target.Indexes) > 0 }); i >= 0 {
			first = sc.Faults[i].Target.Indexes[0]
		}
		a.Beliefs = []analysis.Belief{
			{Member: model.Member{Instance: first}, Window: model.Window{Open: true}},
			{Member: model.Member{Instance: -1}, Window: model.Window{Start: last, Open: true}},
		}
	}
	for i, f := range sc.Faults {
		sp := model.FaultSpan{ID: i, Kind: string(f.Kind), Mode: model.ModeOf(f.Kind, f.Mode), Applied: f.At, Healed: sc.HealAt(f), Instant: f.Instant()}
		if end := model.KindSpecOf(f.Kind).PlanEnd; end != nil {
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
		o := model.FaultOutcome{FaultSpan: sp, LeaderHit: f.Target.Role != model.RoleFollower}
		if o.LeaderHit {
			for _, i := range sp.Target {
				o.LeadersAtInjection = append(o.LeadersAtInjection, model.Member{Instance: i})
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
func PredictScheduled(sc model.Scenario) []Prediction {
	e := sc.WithDefaults().Scaled()
	size := ScheduledFaultSize(e)
	var out []Prediction
	seen := map[string]bool{}
	for _, f := range e.Faults {
		m := model.ModeOf(f.Kind, f.Mode)
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
