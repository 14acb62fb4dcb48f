package sweep

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
)

// Clock faults. A drifting clock reads the real time elapsed times its
// rate, rounded down to the nanosecond, and its timers fire after their
// clock duration divided by the rate, rounded up (virtual's clockRate, at
// the rate's exact fraction model.RateFraction). Those roundings make an
// event time a step function of the schedule, not an affine one: along the
// fault's start, at 0.2× a reading moves by one nanosecond every five.
//
// On the lattice of step L (model.Lattice: every drifting rate's numerator
// times its denominator, multiplied; 5 ns at 0.2×) they do not: on one residue class of the schedule's times modulo L, every time a
// drifting clock reads is a multiple of the denominator plus a constant,
// so it rounds by the same amount everywhere in the class, and so does
// every timer it arms. Prove therefore walks (or cuts into cells) each
// residue class on its own, with the class's points as integer
// coordinates, and takes each metric's worst over all classes: every
// schedule of the range on the nanosecond grid lies in exactly one class.
// The walk's own checks (interior points on their predicted path, every
// witness replayed) test that claim at run time, as they test the recorder.

// MaxProveLattice is the largest lattice step Prove takes, in nanoseconds:
// a walk costs one walk per residue class, a box the step squared.
const MaxProveLattice = 16

// lattice maps a walk's integer coordinates to the schedule's times: axis
// i at coordinate u is res[i] + unit·u. The zero lattice is the identity.
type lattice struct {
	unit int64
	res  [2]int64
}

// at is axis i's time at coordinate u.
func (l lattice) at(i int, u time.Duration) time.Duration {
	if l.unit <= 1 {
		return u
	}
	return time.Duration(l.res[i] + l.unit*int64(u))
}

// coords are the least and greatest coordinates of axis i whose times lie
// in [lo, hi] (lo > hi when none does).
func (l lattice) coords(i int, lo, hi time.Duration) (time.Duration, time.Duration) {
	if l.unit <= 1 {
		return lo, hi
	}
	return time.Duration(ceilDiv(int64(lo)-l.res[i], l.unit)), time.Duration(floorDiv(int64(hi)-l.res[i], l.unit))
}

// point is the coordinates of the schedule (x, y) (times) on the class,
// and whether it lies on it.
func (l lattice) point(x, y int64) ([2]int64, bool) {
	if l.unit <= 1 {
		return [2]int64{x, y}, true
	}
	if (x-l.res[0])%l.unit != 0 || (y-l.res[1])%l.unit != 0 {
		return [2]int64{}, false
	}
	return [2]int64{(x - l.res[0]) / l.unit, (y - l.res[1]) / l.unit}, true
}

// driftRates are the exact rates of the space's drifting clock faults, and
// each one's index in the scenario's faults.
func (s ProveSpace) driftRates() (rates []model.RateFraction, faults []int) {
	for k, f := range s.Base.Faults {
		if f.Kind == model.FaultClock && f.Rate > 0 {
			rates, faults = append(rates, model.RateFractionOf(f.Rate)), append(faults, k)
		}
	}
	return rates, faults
}

// latticeStep is the step of the space's drifting clocks' lattice (1
// without one), and whether it is within MaxProveLattice.
func (s ProveSpace) latticeStep() (int64, bool) {
	rates, _ := s.driftRates()
	unit, ok := model.Lattice(MaxProveLattice, rates...)
	return int64(unit), ok
}

// latticeProblem says why the space's clock rates need too many residue
// classes, naming each drifting fault.
func (s ProveSpace) latticeProblem() string {
	rates, faults := s.driftRates()
	var texts []string
	for i, r := range rates {
		k := faults[i]
		texts = append(texts, fmt.Sprintf("faults[%d] (%s) %v = %d/%d", k, s.Base.Faults[k].Kind, s.Base.Faults[k].Rate, r.Num, r.Den))
	}
	step := "beyond 2⁶²ns"
	if unit, ok := model.Lattice(1<<62, rates...); ok {
		step = time.Duration(unit).String()
	}
	what := "clock rate "
	if len(texts) > 1 {
		what = "clock rates "
	}
	return fmt.Sprintf("%s%s: a drifting clock rounds its readings to the nanosecond, so prove proves each residue class of the schedule's times modulo the rates' lattice, here %s, one by one; it takes a lattice of at most %dns (each drifting fault multiplies it by its rate's numerator and denominator: 0.2 = 1/5 makes 5ns, 0.5 = 1/2 2ns)",
		what, strings.Join(texts, " and "), step, MaxProveLattice)
}

// latticeText says how the result's residue classes were walked, for its
// text.
func (r *ProveResult) latticeText() string {
	t := fmt.Sprintf("a drifting clock rounds its readings to the nanosecond: the range is proven one residue class of its times modulo %dns at a time, %d classes", r.Lattice, r.Classes)
	if !r.Complete {
		t += fmt.Sprintf(" (%d walked whole)", r.ClassesDone)
	}
	return t
}

// proveClasses is Prove over each residue class of the space's times
// modulo unit (the walk's: unit classes; the box's: unit²), merged: each
// metric's worst is the worst of any class, its verdict the gravest.
// The segment limit is shared.
func proveClasses(ctx context.Context, s ProveSpace, o ProveOptions, unit int64) (*ProveResult, error) {
	start := time.Now()
	var classes []lattice
	for r0 := range unit {
		if len(s.Vary) == 1 {
			classes = append(classes, lattice{unit: unit, res: [2]int64{r0}})
			continue
		}
		for r1 := range unit {
			classes = append(classes, lattice{unit: unit, res: [2]int64{r0, r1}})
		}
	}
	var res *ProveResult
	stopped := 0 // the class that stopped, counted from 1
	limit := s.MaxSegments
	progress := o.Progress
	for k, lat := range classes {
		cs := s
		cs.MaxSegments = limit
		if res != nil {
			// Bound splits count toward the limit as segments do (boundSplits).
			cs.MaxSegments = limit - res.Segments - res.BoundSplits
		}
		if progress != nil {
			o.Progress = func(f float64) { progress((float64(k) + f) / float64(len(classes))) }
		}
		var (
			r   *ProveResult
			err error
		)
		if cs.MaxSegments <= 0 {
			r = &ProveResult{Reached: res.Reached, Incomplete: "not started: " + errSegmentLimit.Error()}
		} else if len(s.Vary) == 2 {
			r, err = proveBoxResult(ctx, cs, o, lat)
		} else {
			r, err = proveWalk(ctx, cs, o, lat)
		}
		if err != nil {
			return nil, fmt.Errorf("the residue class %s: %w", lat.text(s), err)
		}
		if res == nil {
			res = r
			res.Space = s
		} else {
			res.merge(r)
		}
		if !r.Complete {
			res.Complete = false
			res.Reached = r.Reached
			res.Incomplete = fmt.Sprintf("the residue class %s (%d of %d) %s; %d segments or cells in all", lat.text(s), k+1, len(classes), r.Incomplete, res.Segments)
			stopped = k + 1
			break
		}
		res.ClassesDone++
	}
	res.Lattice, res.Classes = unit, len(classes)
	for i := range res.Curves {
		// The classes' points, interleaved along the axis.
		slices.SortStableFunc(res.Curves[i].Points, func(a, b CurvePoint) int { return cmp.Compare(a.At, b.At) })
	}
	if res.Complete && len(s.Vary) == 1 {
		res.Reached = res.Hi
	}
	if !res.Complete {
		for i := range res.Proofs {
			if res.Proofs[i].Verdict == VerdictProven {
				res.Proofs[i].Verdict, res.Proofs[i].Why = VerdictIncomplete, fmt.Sprintf("residue class %d of %d was not proven whole", stopped, len(classes))
			}
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// text names a residue class: "at ≡ 3ns (mod 5ns)".
func (l lattice) text(s ProveSpace) string {
	t := fmt.Sprintf("%s ≡ %v", s.Vary[0].Param, time.Duration(l.res[0]))
	if len(s.Vary) == 2 {
		t += fmt.Sprintf(", %s ≡ %v", s.Vary[1].Param, time.Duration(l.res[1]))
	}
	return t + fmt.Sprintf(" (mod %v)", time.Duration(l.unit))
}

// merge adds another residue class's result: counts add up, each metric's
// proof merges (mergeProof).
func (r *ProveResult) merge(o *ProveResult) {
	r.Segments += o.Segments
	r.Runs += o.Runs
	r.BoundSplits += o.BoundSplits
	r.BoundAffine += o.BoundAffine
	r.Complete = r.Complete && o.Complete
	for i := range r.Maps {
		if i >= len(o.Maps) {
			continue
		}
		for j := range r.Maps[i].V {
			for k := range r.Maps[i].V[j] {
				if o.Maps[i].here[j][k] {
					r.Maps[i].V[j][k], r.Maps[i].Known[j][k], r.Maps[i].here[j][k] = o.Maps[i].V[j][k], o.Maps[i].Known[j][k], true
				}
			}
		}
	}
	for i := range r.Curves {
		if i < len(o.Curves) {
			r.Curves[i].Points = append(r.Curves[i].Points, o.Curves[i].Points...)
		}
	}
	if r.Curves == nil {
		r.Curves = o.Curves
	}
	for i := range r.Proofs {
		if i < len(o.Proofs) {
			r.Proofs[i] = mergeProof(r.Proofs[i], o.Proofs[i])
		}
	}
}

// verdictRank orders verdicts by gravity: a counterexample anywhere is
// one over the range, then an incomplete class, then a proof.
var verdictRank = map[string]int{VerdictNone: 0, VerdictProven: 1, VerdictIncomplete: 2, VerdictCounterexample: 3}

// mergeProof is one metric's proof over two disjoint sets of schedules:
// the larger worst (of equal ones, the smaller schedule), the larger
// supremum and excess, the graver verdict, the counts added.
func mergeProof(a, b Proof) Proof {
	aNM := a.NotMeasured > 0 && a.Why == a.notMeasuredWhy()
	bNM := b.NotMeasured > 0 && b.Why == b.notMeasuredWhy()
	m := a
	if b.found && (!a.found || b.Worst > a.Worst || b.Worst == a.Worst && (b.At < a.At || b.At == a.At && b.At2 < a.At2)) {
		m.Worst, m.At, m.At2, m.Open = b.Worst, b.At, b.At2, b.Open
		m.Bound, m.Formula, m.Replayed = b.Bound, b.Formula, b.Replayed
	}
	m.found = a.found || b.found
	m.Sup = max(a.Sup, b.Sup)
	// A confirmed counterexample's excess first: a box class can keep a
	// larger excess it could not confirm (its verdict incomplete), and the
	// witness must be the schedule that fails.
	acx, bcx := a.Verdict == VerdictCounterexample, b.Verdict == VerdictCounterexample
	if b.seen && (!a.seen || bcx && !acx || bcx == acx && (b.Excess > a.Excess || b.Excess == a.Excess && (b.ExcessAt < a.ExcessAt || b.ExcessAt == a.ExcessAt && b.ExcessAt2 < a.ExcessAt2))) {
		m.Excess, m.ExcessAt, m.ExcessAt2 = b.Excess, b.ExcessAt, b.ExcessAt2
	}
	m.seen = a.seen || b.seen
	m.BoundVaries = a.BoundVaries || b.BoundVaries
	m.Unknown += b.Unknown
	if m.UnknownWhy == "" {
		m.UnknownWhy = b.UnknownWhy
	}
	m.NotMeasured += b.NotMeasured
	if m.NotMeasuredAt == "" {
		m.NotMeasuredAt, m.notMeasuredReason = b.NotMeasuredAt, b.notMeasuredReason
	}
	switch {
	case verdictRank[b.Verdict] > verdictRank[a.Verdict]:
		m.Verdict, m.Why = b.Verdict, b.Why
	case b.Verdict == a.Verdict && m.Why == "":
		m.Why = b.Why
	}
	if m.Verdict == VerdictIncomplete && (m.Why == a.Why && aNM || m.Why == b.Why && bNM) {
		// Its count is both classes' now.
		m.Why = m.notMeasuredWhy()
	}
	return m
}
