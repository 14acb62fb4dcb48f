package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/leaselab/leaselab/internal/userfile"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

// Starter is the starter suite that keeps checking an advice in CI: the
// recommended timings, the constraints as limits for the failure modes of
// the envelope (the others expect the bound calculator's worst case), and
// the envelope's latency, pause, suspend and Redis pause as the faults'
// sizes.
func (a Advice) Starter() scenarios.StarterOptions {
	modes, size := envelopeModes(a.Envelope.withDefaults())
	o := scenarios.StarterOptions{
		Params:     a.Params,
		Limits:     map[model.Metric]string{model.MetricMaxGap: dur(a.Constraints.MaxGap)},
		Within:     modes,
		Latency:    size.Latency,
		Pause:      size.Pause,
		Suspend:    a.Envelope.MaxSuspend,
		RedisPause: a.Envelope.MaxRedisPause,
	}
	if a.Constraints.MaxOverlap != NoLimit {
		o.Limits[model.MetricMaxOverlap] = dur(a.Constraints.MaxOverlap)
	}
	if a.Constraints.MaxStale != NoLimit {
		o.Limits[model.MetricStaleLeadership] = dur(a.Constraints.MaxStale)
	}
	return o
}

// ReadAdvice reads the advice.json that chaos advise --out writes (what
// WriteAdvice writes), refusing a file that is not one: JSON of another
// shape, or an advice without constraints, and anything but a regular
// file (userfile.Read).
func ReadAdvice(path string) (Advice, error) {
	b, err := userfile.Read(path, 0, "an advice.json")
	if err != nil {
		return Advice{}, fmt.Errorf("reading the advice: %w", err)
	}
	var adv Advice
	if err := json.Unmarshal(b, &adv); err != nil {
		return Advice{}, fmt.Errorf("%s is not the advice.json of chaos advise: %w", path, err)
	}
	if adv.Constraints.MaxGap <= 0 {
		return Advice{}, fmt.Errorf("%s has no constraints: is it the advice.json of chaos advise?", path)
	}
	return adv, nil
}

// StarterPhaseBudget is the runs WorstPhase spends on one starter
// scenario: about 0.4 s on one core of this machine (≈ 2,600 runs/s),
// within the 2 s a search of a scenario may take.
const StarterPhaseBudget = 1000

// WorstPhase places sc's faults where a short search (Explore: 2 seeds,
// budget runs, default StarterPhaseBudget, every metric) finds the worst
// case of the metric that matters most for it: the overlap if any
// schedule made one, else the gap. It takes the robust schedule near that
// worst (its value holds when any start moves by ±RobustDelta, so the real
// backend keeps it), or the worst itself when none is robust, and writes
// its seed, fault starts and follower starts into the scenario. note says
// how it was found, for the file. The search is returned too: it checks
// the bounds of every metric (ExploreResult.Violations: a schedule that
// beat its formula). A scenario the virtual backend cannot run, or a
// runner-mode one (its run costs twenty times an elector's: the starter
// keeps its phase), comes back as it was, with note "" and no search; one
// in which the search found nothing, as it was with the search.
func WorstPhase(ctx context.Context, sc model.Scenario, budget int) (model.Scenario, string, *ExploreResult, error) {
	if budget <= 0 {
		budget = StarterPhaseBudget
	}
	// A scenario that does not validate is the writer's to report, with
	// its file and line.
	if len(sc.Faults) == 0 || sc.Mode == model.ModeRunner || virtual.Refuses(sc) != nil || sc.Validate() != nil {
		return sc, "", nil, nil
	}
	s := Space{Base: sc, Metrics: []string{exOverlap, exGap, exStale, exFailover}, Seeds: 2, Budget: budget}
	res, err := Explore(ctx, s, ExploreOptions{})
	if err != nil {
		return sc, "", nil, fmt.Errorf("searching the worst phase of %s: %w", sc.Name, err)
	}
	pick := -1
	for i, w := range res.Worst {
		if (w.Metric == exOverlap || w.Metric == exGap) && w.Found && w.Measured > 0 {
			pick = i
			break
		}
	}
	if pick < 0 {
		return sc, "", res, nil
	}
	w := res.Worst[pick]
	x, value, robust := w.Schedule, w.Measured, ""
	if k := slices.IndexFunc(res.Robust, func(r Robust) bool { return r.Metric == w.Metric && r.Found && r.Floor > 0 }); k >= 0 {
		r := res.Robust[k]
		x, value = r.Schedule, r.Measured
		robust = fmt.Sprintf(" (at least %s when any start moves by ±%v, as on the real backend)", r.value(r.Floor), r.Delta)
	}
	out, err := res.Space.Scenario(x)
	if err != nil {
		return sc, "", nil, fmt.Errorf("the worst phase of %s: %w", sc.Name, err)
	}
	out.Expect, out.Description, out.StrictClaims = sc.Expect, sc.Description, sc.StrictClaims
	note := fmt.Sprintf("Fault placed by chaos explore (%d runs on the virtual backend, seeds %d-%d) where it finds the worst %s for these timings: at %s with seed %d and these starts, %s%s.",
		res.Runs, res.Space.FirstSeed, res.Space.FirstSeed+int64(res.Space.Seeds)-1, shortMetric(w.Metric), atText(out.Faults), out.Seed, w.Value(value), robust)
	return out, note, res, nil
}

// atText lists faults' starts.
func atText(fs []model.Fault) string {
	var s string
	for i, f := range fs {
		if i > 0 {
			s += ", "
		}
		s += f.At.String()
	}
	return s
}
