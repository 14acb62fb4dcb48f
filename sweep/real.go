package sweep

import (
	"github.com/leaselab/leaselab/model/verdict"

	"fmt"
	"io"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/virtual"
)

// RealCheckOf puts sc's run on the real backend (res, or, when it could
// not run, err) beside the virtual backend's figures for the same scenario
// and seed, which it computes.
func RealCheckOf(sc model.Scenario, res *verdict.Result, err error) RealCheck {
	rc := RealCheck{Scenario: sc.Name, Runner: sc.Mode == model.ModeRunner}
	if v, verr := virtual.Run(sc, virtual.Options{}); verr == nil {
		s := v.Analysis.Summary
		rc.VirtualGap, rc.VirtualOverlap, rc.VirtualStale = s.MaxGap, s.MaxOverlap, s.MaxStale
		rc.VirtualDuplicateChores, rc.VirtualStaleChores = s.DuplicateChores, s.StaleChores
	}
	if res == nil {
		rc.Error = fmt.Sprint(err)
		return rc
	}
	s := res.Analysis.Summary
	rc.Verdict, rc.Gap, rc.Overlap, rc.Stale = string(res.Verdict), s.MaxGap, s.MaxOverlap, s.MaxStale
	rc.DuplicateChores, rc.StaleChores = s.DuplicateChores, s.StaleChores
	return rc
}

// Confirmable are the robust schedules the search found, as scenarios to
// run on the real backend (RobustScenario), each beside its Robust.
func (r *ExploreResult) Confirmable() ([]model.Scenario, []Robust, error) {
	var scs []model.Scenario
	var robust []Robust
	for _, x := range r.Robust {
		if !x.Found {
			continue
		}
		sc, err := r.RobustScenario(x)
		if err != nil {
			return nil, nil, err
		}
		scs, robust = append(scs, sc), append(robust, x)
	}
	return scs, robust, nil
}

// Real is the robust schedule's metric as res (its run on the real
// backend) measured it, and how that compares with the scenario's
// expectation of it: "not measured" and "" when res checked no such
// metric.
func (x Robust) Real(res *verdict.Result) (value, how string) {
	value = "not measured"
	for _, c := range res.Checks {
		if c.Metric == model.Metric(x.Metric) {
			value = c.Value()
			how = fmt.Sprintf(" (%s against %s)", c.Verdict, c.Want())
		}
	}
	return value, how
}

// RealRun is one robust schedule's run on the real backend: its result
// (nil when it did not run, Err says why) and its report's directory.
type RealRun struct {
	// Result is the real run's result, nil when it did not run.
	Result *verdict.Result
	// Err is why the run did not run or did not finish.
	Err error
	// Dir is the run's report directory.
	Dir string
}

// WriteConfirmation writes, per robust schedule (Confirmable), its real
// run's figure (Robust.Real) beside the virtual backend's, as chaos
// explore --confirm-real prints them.
func WriteConfirmation(w io.Writer, robust []Robust, runs []RealRun) {
	fmt.Fprintf(w, "real backend (the robust schedules, %s; same seeds):\n", "robust-*.yaml")
	for i, o := range runs {
		x := robust[i]
		if o.Result == nil {
			fmt.Fprintf(w, "  %-17s not run: %v\n", x.Metric, o.Err)
			continue
		}
		real, how := x.Real(o.Result)
		fmt.Fprintf(w, "  %-17s real %s%s; virtual %s (≥ %s within ±%v); report %s\n", x.Metric, real, how, x.value(x.Measured), x.value(x.Floor), x.Delta, o.Dir)
	}
}
