package sweep

import (
	"github.com/leaselab/leaselab/model/bounds"

	"fmt"
	"io"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
)

// JSON is the result as result.json holds it.
func (r *ProveResult) JSON() ([]byte, error) { return indentJSON(r) }

// Scenario is the schedule at axis value x as a scenario (the one Prove
// ran there), with metric's bound as its one expectation.
func (r *ProveResult) Scenario(x time.Duration, metric string) model.Scenario {
	p := &prover{s: r.Space, axis: r.Axis}
	sc := p.scenario(x)
	sc.Expect = []model.Expectation{{Metric: model.Metric(metric), Max: "predicted"}}
	sc.StrictClaims = false
	return sc
}

// WitnessScenario is the scenario that reproduces a proof's witness: its
// counterexample (the schedule exceeding the bound the most) when there is
// one, with a nanosecond of slack so that `chaos run FILE` fails as the
// proof did on the virtual backend; else its worst schedule, with the
// bound's default slack.
func (r *ProveResult) WitnessScenario(p Proof) model.Scenario {
	x := p.At
	if p.Verdict == VerdictCounterexample {
		x = p.ExcessAt
	}
	sc := r.Scenario(x, p.Metric)
	sc.Name = r.Space.Base.Name + "-proven-" + shortMetric(p.Metric)
	if len(sc.Name) > 60 {
		sc.Name = "prove-" + shortMetric(p.Metric)
	}
	switch p.Verdict {
	case VerdictCounterexample:
		sc.Expect[0].Slack = time.Nanosecond
		sc.Description = fmt.Sprintf("chaos prove: a counterexample to the %s bound of %s over %s=%v..%v (seed %d): at %s=%v it exceeds %s (%s) by %s.",
			p.Metric, r.Space.Base.Name, r.Axis, r.Lo, r.Hi, r.Space.Seed, r.Axis, x, bounds.BoundText(p.Bound), p.Formula, model.DurationText(p.Excess))
	default:
		worst, bound := model.DurationsApart(p.Worst, p.Bound)
		sc.Description = fmt.Sprintf("chaos prove: the exact worst %s of %s over %s=%v..%v (seed %d) on the virtual backend: %s at %s=%v, bound %s (%s): %s.",
			p.Metric, r.Space.Base.Name, r.Axis, r.Lo, r.Hi, r.Space.Seed, worst, r.Axis, x, bound, p.Formula, p.Verdict)
	}
	return sc
}

// WitnessFile names a metric's witness scenario file.
func WitnessFile(metric string) string { return "witness-" + shortMetric(metric) + ".yaml" }

// WriteProve writes result.json and, per metric measured, its witness
// scenario file into dir.
func WriteProve(dir string, r *ProveResult) (Files, error) {
	fs, err := newFileSet(dir, r.JSON)
	if err != nil {
		return nil, err
	}
	for _, p := range r.Proofs {
		if p.Verdict == VerdictNone {
			continue
		}
		y, err := scenarios.Marshal(r.WitnessScenario(p))
		if err != nil {
			return fs.names, fmt.Errorf("the witness of %s: %w", p.Metric, err)
		}
		if err := fs.put(WitnessFile(p.Metric), y); err != nil {
			return fs.names, err
		}
	}
	return fs.names, nil
}

// WriteTable prints the proof: per metric the exact worst, where, the
// bound, the verdict; then the walk's size and time.
func (r *ProveResult) WriteTable(w io.Writer) {
	fixed := "the followers' starts"
	if startAxis(r.Axis) >= 0 {
		fixed = "the fault and the other instances' starts"
	}
	fmt.Fprintf(w, "%s: %s=%v..%v, seed %d, %s as the file has them; virtual model, fixed clock rate, spec mode\n",
		r.Space.Name, r.Axis, r.Lo, r.Hi, r.Space.Seed, fixed)
	for _, p := range r.Proofs {
		if p.Verdict == VerdictNone {
			fmt.Fprintf(w, "  %-17s not measured (%d schedules unknown: %s)\n", p.Metric, p.Unknown, p.Why)
			continue
		}
		v := p.Verdict
		switch {
		case p.Verdict == VerdictCounterexample:
			v = fmt.Sprintf("COUNTEREXAMPLE: %s over the bound at %s=%v", model.DurationText(p.Excess), r.Axis, p.ExcessAt)
		case p.Verdict == VerdictProven:
			v = fmt.Sprintf("proven (%s below the bound)", model.DurationText(-p.Excess))
		}
		worst, bound := model.DurationsApart(p.Worst, p.Bound)
		// The schedule's coordinate stays exact: it is what reproduces.
		fmt.Fprintf(w, "  %-17s worst %-14s at %s=%-14v bound %-10s %s\n      %s\n",
			p.Metric, worst, r.Axis, p.At, bound, v, p.Formula)
	}
	extra := ""
	if r.BoundSplits > 0 {
		extra = fmt.Sprintf(", %d bound changes inside segments (bisected)", r.BoundSplits)
	}
	fmt.Fprintf(w, "%d segments, %d runs%s, in %v\n", r.Segments, r.Runs, extra, r.Elapsed.Round(time.Millisecond))
	if !r.Complete {
		fmt.Fprintf(w, "INCOMPLETE: %s\n", r.Incomplete)
	}
}
