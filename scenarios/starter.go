package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
)

// StarterOptions describe a starter suite: the timings as deployed, the
// limits they must keep, and how large its faults are. Zero values mean the
// documented defaults.
type StarterOptions struct {
	// Params are the elector's timings and go-redis options as deployed;
	// zero fields are the spec's and go-redis's defaults.
	Params model.Params
	// Limits are the user's constraints as expectation limits ("12s", "0s",
	// "ttl + wait"), by metric: max_gap, max_overlap, stale_leadership. A
	// metric without one expects "predicted": the bound calculator's worst
	// case for the timings, which a sound elector always keeps.
	Limits map[string]string
	// Within names the failure modes (model.ModeLeaderCrash, …) the limits
	// are promised for, as chaos advise's envelope does; the scenarios of
	// other modes expect "predicted" only and say so. Empty: every mode.
	Within []string
	// Latency is the one-way latency of the latency scenario. Default
	// min(200ms, TTL/10): slow, but survivable by the spec's renewal.
	Latency time.Duration
	// Pause is how long the pause scenario stops the leader (a GC or VM
	// stall). Default 1s.
	Pause time.Duration
	// Suspend is how long the suspend scenario suspends the leader's VM or
	// host (its clock stops too); 0: no suspend scenario.
	Suspend time.Duration
	// Instances is how many electors each scenario runs. Default 3.
	Instances int
}

// StarterMetrics are the metrics a starter suite limits, in file order.
var StarterMetrics = []string{"max_gap", "max_overlap", "stale_leadership"}

// Starter is a suite to check the timings in CI from day one: one scenario
// per failure mode an elector meets — a leader crash, a graceful stop, each
// partition mode, latency, a pause (and a suspend if sized) and a Redis restart — each on bare
// electors with the fault on the leader, expecting the limits (or the
// bound calculator's worst case). Every scenario validates and runs on
// both backends.
func Starter(o StarterOptions) ([]model.Scenario, error) {
	for m := range o.Limits {
		if !slices.Contains(StarterMetrics, m) {
			return nil, fmt.Errorf("starter: limit on %q; want one of %s", m, strings.Join(StarterMetrics, ", "))
		}
	}
	p := o.Params.WithDefaults()
	if o.Instances == 0 {
		o.Instances = 3
	}
	if o.Latency == 0 {
		o.Latency = min(200*time.Millisecond, p.TTL/10)
	}
	if o.Pause == 0 {
		o.Pause = time.Second
	}
	// Long enough for the leader's hung renewal to end inside the fault,
	// and for the followers to take over: the worst case can happen.
	call := model.CallBound(p, model.ModePartitionBlackhole)
	if call == model.Unbounded {
		call = 2 * p.TTL
	}
	long := 2*p.TTL + p.Wait + call
	leader := model.Target{Role: model.RoleLeader}
	type fault struct {
		name, what string
		f          model.Fault
	}
	faults := []fault{
		{"leader-crash", "The leader crashes: no release, its key expires.", model.Fault{Kind: model.FaultCrash, Target: leader}},
		{"leader-stop", "The leader stops gracefully: it steps down and releases the lease.", model.Fault{Kind: model.FaultStop, Target: leader}},
	}
	for _, mode := range model.PartitionModes {
		faults = append(faults, fault{"partition-" + mode, fmt.Sprintf("The leader is cut off from Redis (%s) for %v.", mode, long),
			model.Fault{Kind: model.FaultPartition, Mode: mode, For: long, Target: leader}})
	}
	faults = append(faults,
		fault{"latency", fmt.Sprintf("Every call of the leader is %v slower each way.", o.Latency), model.Fault{Kind: model.FaultLatency, For: long, Latency: o.Latency, Target: leader}},
		fault{"pause", fmt.Sprintf("The leader's process is stopped for %v (a GC or VM stall, SIGSTOP): its clock runs on, timers due meanwhile fire at the resume, traffic held.", o.Pause), model.Fault{Kind: model.FaultPause, For: o.Pause, Target: leader}},
	)
	if o.Suspend > 0 {
		faults = append(faults, fault{"suspend", fmt.Sprintf("The leader's VM or host is suspended for %v: its clock stops too, traffic held.", o.Suspend), model.Fault{Kind: model.FaultSuspend, For: o.Suspend, Target: leader}})
	}
	faults = append(faults,
		fault{"redis-restart", "Redis restarts empty: the lease vanishes behind the leader's back.", model.Fault{Kind: model.FaultRedisRestart}},
	)
	written := p
	written.ChoreInterval = 0 // runner mode's; these are bare electors
	out := make([]model.Scenario, 0, len(faults))
	for _, s := range faults {
		f := s.f
		f.At = p.TTL
		mode := model.ModeOf(f.Kind, f.Mode)
		within := len(o.Within) == 0 || slices.Contains(o.Within, mode)
		sc := model.Scenario{
			Name:      s.name,
			Instances: o.Instances,
			Mode:      model.ModeElector,
			Params:    written, // in full: the file shows the timings it checks
			Duration:  f.At + max(p.TTL/2, p.Wait) + f.For + p.TTL,
			Faults:    []model.Fault{f},
		}
		sc.Description = s.what + " Written by chaos init: expects "
		if within && len(o.Limits) > 0 {
			sc.Description += "your limits, and the worst case the bound calculator predicts for the rest."
		} else if len(o.Limits) > 0 {
			sc.Description += "the worst case the bound calculator predicts: this failure mode is outside the envelope your limits were chosen for."
		} else {
			sc.Description += "the worst case the bound calculator predicts for these timings."
		}
		for _, m := range StarterMetrics {
			limit, ok := o.Limits[m]
			if !ok || !within {
				limit = "predicted"
			}
			sc.Expect = append(sc.Expect, model.Expectation{Metric: m, Max: limit})
		}
		out = append(out, sc)
	}
	return out, nil
}
