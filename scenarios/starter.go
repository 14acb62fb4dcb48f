package scenarios

import (
	"github.com/leaselab/leaselab/model/bounds"

	"fmt"
	"slices"
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
	// case for the timings, which a sound elector always keeps. And the
	// spec's claims (split brain ≤ TTL, gap ≤ TTL + Wait) gate unless a
	// tolerance is stated for their metric: with neither max_overlap nor
	// max_gap every scenario has strict claims (a claim not held fails,
	// named); with one of them, the other metric's limit is its claim
	// ("ttl", "ttl + wait") where the prediction exceeds it.
	Limits map[model.Metric]string
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
	// RedisPause is how long the redis-pause scenario pauses Redis's
	// writes (CLIENT PAUSE WRITE, as during a FAILOVER or maintenance); 0:
	// no redis-pause scenario.
	RedisPause time.Duration
	// Instances is how many electors each scenario runs. Default 3.
	Instances int
}

// StarterMetrics are the metrics a starter suite limits, in file order.
var StarterMetrics = []model.Metric{model.MetricMaxGap, model.MetricMaxOverlap, model.MetricStaleLeadership}

// Starter is a suite to check the timings in CI from day one: one scenario
// per failure mode an elector meets — a leader crash, a graceful stop, each
// partition mode, latency, a pause (and a suspend and a Redis pause if
// sized) and a Redis restart — each on bare electors with the fault on the
// leader, expecting the limits (or the bound calculator's worst case). Each
// kind gives its own scenarios (model.KindSpec.Starter), in the order of
// model.FaultKinds. Every scenario validates and runs on both backends.
func Starter(o StarterOptions) ([]model.Scenario, error) {
	for m := range o.Limits {
		if !slices.Contains(StarterMetrics, m) {
			return nil, fmt.Errorf("starter: limit on %q; want one of %s", m, model.JoinMetrics(StarterMetrics, ", "))
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
	call := bounds.CallBound(p, model.ModePartitionBlackhole)
	if call == model.Unbounded {
		call = 2 * p.TTL
	}
	long := 2*p.TTL + p.Wait + call
	sizes := model.StarterSizes{Long: long, Latency: o.Latency, Pause: o.Pause, Suspend: o.Suspend, RedisPause: o.RedisPause}
	var faults []model.StarterEntry
	for _, k := range model.Kinds() {
		if k.Starter != nil {
			faults = append(faults, k.Starter(sizes)...)
		}
	}
	written := p
	written.ChoreInterval = 0 // runner mode's; these are bare electors
	out := make([]model.Scenario, 0, len(faults))
	for _, s := range faults {
		f := s.Fault
		f.At = p.TTL
		mode := f.FailureMode()
		within := len(o.Within) == 0 || slices.Contains(o.Within, mode)
		sc := model.Scenario{
			Name:      s.Name,
			Instances: o.Instances,
			Mode:      model.ModeElector,
			Params:    written, // in full: the file shows the timings it checks
			Duration:  f.At + max(p.TTL/2, p.Wait) + f.For + p.TTL,
			Faults:    []model.Fault{f},
		}
		sc.Description = s.What + " Written by chaos init: expects "
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
		gateOnClaims(&sc, o.Limits, within)
		out = append(out, sc)
	}
	return out, nil
}

// Claims are the spec's timing claims a starter suite gates on, by the
// metric a user's tolerance for it limits.
var claimOf = map[model.Metric]struct{ name, limit string }{
	model.MetricMaxOverlap: {"split brain ≤ TTL", "ttl"},
	model.MetricMaxGap:     {"gap ≤ TTL + Wait", "ttl + wait"},
}

// gateOnClaims makes sc fail when a spec claim the user stated no
// tolerance for is not held: with none stated, strict claims (each claim
// a check of its own, named); with one, the other metric limited to its
// claim where the prediction exceeds it (strict claims would fail the
// claim the user tolerated). A failure mode outside the envelope limits
// were chosen for expects the prediction only.
func gateOnClaims(sc *model.Scenario, limits map[model.Metric]string, within bool) {
	_, overlap := limits[model.MetricMaxOverlap]
	_, gap := limits[model.MetricMaxGap]
	switch {
	case !within && len(limits) > 0:
		return
	case !overlap && !gap:
		sc.StrictClaims = true
		sc.Description += " It also gates on the spec's claims (split brain ≤ TTL, gap ≤ TTL + Wait, no overlap without a fault): chaos init --max-overlap/--max-gap state a tolerance instead."
		return
	}
	preds := bounds.PredictScheduled(*sc)
	if len(preds) == 0 {
		return
	}
	g, o := model.ClaimBounds(sc.Params.WithDefaults())
	for i, e := range sc.Expect {
		c, ok := claimOf[e.Metric]
		if !ok || e.Max != "predicted" {
			continue
		}
		if (e.Metric == model.MetricMaxOverlap && preds[0].MaxOverlap > o) || (e.Metric == model.MetricMaxGap && preds[0].MaxGap > g) {
			sc.Expect[i].Max = c.limit
			sc.Description += fmt.Sprintf(" Its %s is the spec's claim, %s, which the predicted worst case exceeds.", e.Metric, c.name)
		}
	}
}
