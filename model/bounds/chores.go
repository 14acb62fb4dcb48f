package bounds

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"fmt"
	"time"
)

// LeaderChores is how many chores the runner's leader runs on each tick
// (the scheduler, the metrics reset, the capacity publication): a
// duplicate can be counted for each.
const LeaderChores = 3

// ChoreBound bounds a run's duplicate chores (the same chore run by two
// instances less than one ChoreInterval I apart) from its overlap bound O
// (the "predicted" max_overlap of the faults it applied), per fault:
//
//	per chore ≤ 2·⌈O/I⌉ + 1   (+1 for a pause or suspend)
//
// A duplicate pairs a run with the other instance's latest run less than I
// before it (exactly I apart is the cadence of a clean handover), so a
// chain of duplicates has one fewer than its runs. With the old leader
// believing until e and the new one from s (O = e - s, 0 for a handover
// without overlap), the old leader's runs that can pair lie in (s - I, e]
// and the new one's in [s, e + I): half-open stretches of O + I, in which
// runs I apart on a ticker number at most ⌈O/I⌉ + 1 each. A paused or
// suspended leader's ticker fires once at resume, off its phase: one run
// more. The bound is ×LeaderChores and × the faults applied (each a
// failover). Tested adversarially by explore (TestExploreCounts).
//
// ok is false, with the reason in formula, where no bound is known: a
// clock fault (the ticker runs on the faulty clock), an overlap bound that
// is unbounded or does not apply, or no chore interval.
func ChoreBound(sc model.Scenario, a analysis.Analysis, preds []Prediction) (n int, formula string, ok bool) {
	p := sc.Params
	if sc.Mode != model.ModeRunner {
		return 0, "no chores: the scenario is in elector mode", false
	}
	if p.ChoreInterval <= 0 {
		return 0, "no bound known: no chore interval", false
	}
	faults := BoundFaults(a)
	resumes := 0
	for _, f := range faults {
		switch model.FaultKind(f.Kind) {
		case model.FaultClock:
			return 0, "no bound known for duplicate chores under a clock fault: the chore ticker runs on the faulty clock", false
		case model.FaultPause, model.FaultSuspend:
			resumes++
		}
	}
	o, _, of, broken := PredictedLimit(model.MetricMaxOverlap, sc, a, preds)
	if broken != "" {
		return 0, "no bound known: the overlap bound does not apply (" + broken + ")", false
	}
	if o == model.Unbounded {
		return 0, "no bound known: the overlap is unbounded (" + of + ")", false
	}
	return choreBound(o, p.ChoreInterval, max(len(faults), 1), resumes)
}

// ChoreBoundFor is ChoreBound for a failover of overlap bound o, before any
// run: chaos bounds' figure (resume: the fault pauses or suspends the
// leader).
func ChoreBoundFor(o, interval time.Duration, resume bool) (int, string, bool) {
	if o == model.Unbounded {
		return 0, "no bound known: the overlap is unbounded", false
	}
	if interval <= 0 {
		return 0, "no bound known: no chore interval", false
	}
	r := 0
	if resume {
		r = 1
	}
	return choreBound(o, interval, 1, r)
}

func choreBound(o, interval time.Duration, faults, resumes int) (int, string, bool) {
	per := 2*int((o+interval-1)/interval) + 1
	extra := ""
	if resumes > 0 {
		extra = fmt.Sprintf(" + %d resumed", resumes)
	}
	n := LeaderChores*(per*faults) + LeaderChores*resumes
	return n, fmt.Sprintf("%d chores × (%d failover(s) × (2·⌈overlap %v / interval %v⌉ + 1)%s) = %d",
		LeaderChores, faults, o.Round(time.Millisecond), interval, extra, n), true
}
