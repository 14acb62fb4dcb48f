package sweep

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"
	"math/big"

	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/virtual"
)

// ParamAt is the axis Prove can walk besides a fault's size: the fault's
// start.
const ParamAt = "at"

// ProveParams are the axes Prove walks: the fault's start (at) or its
// length (for); besides, startN is instance N's start (Scenario.Starts[N]:
// a follower's phase), and atK and forK are faults[K]'s start and length in
// a scenario of several faults (at and for are faults[0]'s).
var ProveParams = []string{ParamAt, ParamFor}

// startAxis returns N for the axis "startN", or -1.
func startAxis(param string) int { return indexAfter(param, "start", false) }

// faultAxis returns, for the axes at, for, atK and forK, which field of
// which fault they move (ParamAt or ParamFor, and K: 0 for at and for);
// ok false for any other axis.
func faultAxis(param string) (field string, k int, ok bool) {
	for _, f := range ProveParams {
		if k := indexAfter(param, f, true); k >= 0 {
			return f, k, true
		}
	}
	return "", 0, false
}

// indexAfter returns N for the axis prefix+N (N decimal, at most three
// digits), 0 for the bare prefix when bare is allowed, else -1.
func indexAfter(param, prefix string, bare bool) int {
	rest, ok := strings.CutPrefix(param, prefix)
	if !ok || len(rest) > 3 || (rest == "" && !bare) || (len(rest) > 1 && rest[0] == '0') {
		return -1 // start1, never start01 (at and at0 are one axis: Check refuses both)
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			return -1
		}
		n = 10*n + int(c-'0')
	}
	return n
}

// ParseProveRange reads an axis as `chaos prove --vary` takes it:
// at=LO..HI (the fault's start), for=LO..HI (its length),
// startN=LO..HI (instance N's start: start1=0s..6s moves the first
// follower's attempts over a Wait), or atK=LO..HI and forK=LO..HI
// (faults[K]'s start and length, in a scenario of several faults).
func ParseProveRange(s string) (Range, error) {
	param, rest, ok := strings.Cut(s, "=")
	lo, hi, ok2 := strings.Cut(rest, "..")
	if !ok || !ok2 {
		return Range{}, fmt.Errorf("vary %q: want PARAM=LO..HI, e.g. at=4s..12s", s)
	}
	if _, _, ok := faultAxis(param); !ok && startAxis(param) < 0 {
		return Range{}, fmt.Errorf("vary %s: prove walks at, for, startN, atK or forK (the fault's start, its length, instance N's start, faults[K]'s start or length)", param)
	}
	a, err1 := time.ParseDuration(lo)
	b, err2 := time.ParseDuration(hi)
	if err := errors.Join(err1, err2); err != nil {
		return Range{}, fmt.Errorf("vary %s: %v", param, err)
	}
	if a < 0 || b < a {
		return Range{}, fmt.Errorf("vary %s: %s..%s; want 0 ≤ LO ≤ HI", param, lo, hi)
	}
	return Range{Param: param, Lo: a.String(), Hi: b.String()}, nil
}

// ProveSpace is what Prove walks: an elector scenario, one axis (a fault's
// start, its length, an instance's start) over a range, or a box of two,
// one seed; every other fault stays where the scenario has it.
type ProveSpace struct {
	// Name names the proof in reports; default the base scenario's name.
	Name string `json:"name"`
	// Base is the scenario: elector mode (spec or safe), one fault or
	// more; clock faults whose rates' lattice is at most MaxProveLattice.
	Base model.Scenario `json:"base"`
	// Metrics are the metrics proven: max_overlap, max_gap,
	// stale_leadership. Default all three.
	Metrics []string `json:"metrics"`
	// Vary is the axis walked (ParseProveRange), or the two axes of a box;
	// default the (first) fault's start over explore's window (TTL/2 +
	// jitter + Wait) centred on the base's.
	Vary []Range `json:"vary,omitempty"`
	// Seed fixes the jitter and backoff draws; default the base's seed, or
	// 1.
	Seed int64 `json:"seed"`
	// MaxSegments stops the walk (the result is then incomplete, saying
	// how far it got). Default 100,000.
	MaxSegments int `json:"max_segments"`
	// Tolerance is how far above its bound a worst case may be and still
	// count as the bound's: the bounds leave out the ~0.1 ms of a healthy
	// round trip. Default 1ms, as explore's.
	Tolerance time.Duration `json:"tolerance"`
}

// DefaultMaxSegments is ProveSpace.MaxSegments's default.
const DefaultMaxSegments = 100000

// ProveMetrics are the metrics Prove proves by default: each a maximum of
// end − start over windows of the timeline, so that along a segment, where
// the order of every event is fixed, it is a maximum of affine functions of
// the axis and its supremum lies at a segment's end.
var ProveMetrics = []string{exOverlap, exGap, exStale}

// proveMetrics are the metrics Prove takes: ProveMetrics and failover,
// which is proven only when asked for. Its stability rule (the first sole
// leader that led alone for a TTL) and the fault's reach are comparisons
// of the analysis, not of the run, so its path records them too
// (analysis.Options.OnCompare); on a segment that keeps them, each fault's
// failover is the distance between two fixed events, affine in the axis.
// Recorded for every metric, they would cut the other metrics' segments
// finer than their windows need.
var proveMetrics = []string{exOverlap, exGap, exStale, exFailover}

func (s ProveSpace) withDefaults() ProveSpace {
	if s.Name == "" {
		s.Name = s.Base.Name
	}
	if s.Name == "" {
		s.Name = "prove"
	}
	if len(s.Metrics) == 0 {
		s.Metrics = slices.Clone(ProveMetrics)
	}
	if s.Seed == 0 {
		s.Seed = s.Base.Seed
	}
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.MaxSegments == 0 {
		s.MaxSegments = DefaultMaxSegments
	}
	if s.Tolerance == 0 {
		s.Tolerance = DefaultTolerance
	}
	if len(s.Vary) == 0 && len(s.Base.Faults) > 0 {
		p := s.Base.Params.WithDefaults()
		w := p.TTL/2 + p.Jitter() + p.Wait
		at := s.Base.Faults[0].At
		s.Vary = []Range{{Param: ParamAt, Lo: max(at-w/2, minFaultAt).String(), Hi: (at + w/2).String()}}
	}
	return s
}

// Check reports what Prove does not prove about the space, each refusal
// naming why, rather than answering wrongly.
func (s ProveSpace) Check() error {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	sc := s.Base
	if sc.Mode == model.ModeRunner {
		bad("runner mode: prove walks an elector scenario (the runner's chores and tasks are not recorded as a path)")
	}
	if len(sc.Faults) == 0 {
		bad("the scenario has no fault to walk")
	}
	if _, ok := s.latticeStep(); !ok {
		bad("%s", s.latticeProblem())
	}
	for _, m := range s.Metrics {
		if !slices.Contains(proveMetrics, m) {
			bad("metric %q: want one of %s", m, strings.Join(proveMetrics, ", "))
		}
	}
	if len(s.Vary) > maxAxes {
		bad("%d axes: prove walks one axis or a box of up to %d", len(s.Vary), maxAxes)
	}
	if unit, ok := s.latticeStep(); ok && unit > 1 && len(s.Vary) > 2 {
		bad("%d axes with a drifting clock: its residue classes are proven over a walk or a box of two axes (a box of %d axes would take %d classes)", len(s.Vary), len(s.Vary), pow(unit, len(s.Vary)))
	}
	for j, r := range s.Vary {
		for _, q := range s.Vary[:j] {
			if q.Param == r.Param {
				bad("vary %s twice: a box needs different axes", r.Param)
			}
		}
	}
	for j, r := range s.Vary {
		field, k, isFault := faultAxis(r.Param)
		switch n := startAxis(r.Param); {
		case n >= sc.Instances:
			bad("vary %s: the scenario has %d instances (start0 to start%d)", r.Param, sc.Instances, sc.Instances-1)
		case n >= 0:
		case !isFault:
			bad("vary %s: prove walks at, for, startN, atK or forK", r.Param)
		case len(sc.Faults) == 0:
		case k >= len(sc.Faults):
			bad("vary %s: the scenario has %d faults (faults[0] to faults[%d])", r.Param, len(sc.Faults), len(sc.Faults)-1)
		case field == ParamFor && sc.Faults[k].Instant():
			bad("vary %s: faults[%d] (%s) is instant, it has no length to walk", r.Param, k, sc.Faults[k].Kind)
		}
		for _, q := range s.Vary[:j] {
			if f2, k2, ok := faultAxis(q.Param); isFault && ok && f2 == field && k2 == k && q.Param != r.Param {
				bad("vary %s and %s: both move faults[%d]'s %s", q.Param, r.Param, k, field)
			}
		}
	}
	if s.MaxSegments < 0 || s.Tolerance < 0 {
		bad("max segments and tolerance must not be negative")
	}
	if len(probs) > 0 {
		return fmt.Errorf("prove %q: %s", s.Name, strings.Join(probs, "; "))
	}
	return sc.Validate()
}

// Proof is one metric's exact worst case over the walked range.
type Proof struct {
	Metric string `json:"metric"`
	// Worst is the largest value the metric takes over the range (every
	// schedule on the nanosecond grid the model runs on), At the axis value
	// where it does (the smallest such), Open when its window was still
	// open at the run's end.
	Worst time.Duration `json:"worst"`
	At    time.Duration `json:"at"`
	Open  bool          `json:"open,omitempty"`
	// At2 is the second axis's value of a box proof's worst schedule,
	// AtMore the third's and the fourth's.
	At2    time.Duration   `json:"at2,omitempty"`
	AtMore []time.Duration `json:"at_more,omitempty"`
	// Sup is a box proof's supremum of the metric over its cells' real
	// polygons: it bounds every schedule of the box, and a proof compares
	// it with the bound (Worst, the largest schedule found, is at most a
	// few of the grid's steps below it: nanoseconds, or with a drifting
	// clock the residue classes' lattice steps).
	Sup time.Duration `json:"sup,omitempty"`
	// Bound is the predicted bound there (the same prediction chaos bounds
	// and explore use), Formula how it is derived; Unbounded when none
	// applies.
	Bound   time.Duration `json:"bound"`
	Formula string        `json:"formula,omitempty"`
	// Verdict is VerdictProven, VerdictCounterexample, VerdictIncomplete
	// or VerdictNone (no run measured the metric against a bound).
	Verdict string `json:"verdict"`
	// Excess is the most the metric exceeds its bound by over the range
	// (negative: how far below it stays at the closest), ExcessAt where:
	// the counterexample's schedule when positive. BoundVaries: the bound
	// changes within a segment (found by bisection: see Prove).
	Excess    time.Duration `json:"excess"`
	ExcessAt  time.Duration `json:"excess_at"`
	ExcessAt2 time.Duration `json:"excess_at2,omitempty"`
	// ExcessAtMore are ExcessAt's third and fourth axes.
	ExcessAtMore []time.Duration `json:"excess_at_more,omitempty"`
	BoundVaries  bool            `json:"bound_varies,omitempty"`
	// Replayed is the metric measured by the ordinary virtual run of the
	// witness schedule (equal to Worst, or Prove fails).
	Replayed time.Duration `json:"replayed"`
	// Why is the verdict's reason: what an incomplete proof lacks, or why
	// none was possible (VerdictNone).
	Why string `json:"why,omitempty"`
	// Unknown counts the evaluated schedules whose check was unknown (left
	// out of the worst), NotMeasured's among them; UnknownWhy is the first
	// other one's reason.
	Unknown    int    `json:"unknown,omitempty"`
	UnknownWhy string `json:"unknown_why,omitempty"`
	// NotMeasured counts the evaluated schedules (segment ends, or cells)
	// whose run measured no value of the metric (a failover with no stable
	// leader before the run ended), NotMeasuredAt the first of them: the
	// worst there is not known, so the verdict is incomplete at best.
	NotMeasured   int    `json:"not_measured,omitempty"`
	NotMeasuredAt string `json:"not_measured_at,omitempty"`
	// found: a run measured the metric; seen: against a bound (Excess
	// holds then). What merging the residue classes' proofs reads.
	found, seen bool
	// notMeasuredReason is why the first of NotMeasured measured nothing.
	notMeasuredReason string
}

// ProveCurve is one metric along a walk's axis.
type ProveCurve struct {
	Metric string
	Points []CurvePoint
}

// CurvePoint is a metric's exact value at one schedule of a walk (At on
// its axis), with its bound there (model.Unbounded when none applies);
// Found is false when the run measured no value.
type CurvePoint struct {
	At, Value, Bound time.Duration
	Found            bool
}

// Prove's verdicts.
const (
	VerdictProven         = "proven"
	VerdictCounterexample = "counterexample"
	VerdictIncomplete     = "incomplete"
	VerdictNone           = "not measured"
)

// ProveResult is what Prove found.
type ProveResult struct {
	Format int        `json:"format"`
	Space  ProveSpace `json:"space"`
	// Axis, Lo and Hi are the axis walked and its range (closed).
	Axis string        `json:"axis"`
	Lo   time.Duration `json:"lo"`
	Hi   time.Duration `json:"hi"`
	// Axis2, Lo2 and Hi2 are a box proof's second axis; Segments then
	// counts its cells.
	Axis2 string        `json:"axis2,omitempty"`
	Lo2   time.Duration `json:"lo2,omitempty"`
	Hi2   time.Duration `json:"hi2,omitempty"`
	// More are a box's third and fourth axes.
	More []ProveAxis `json:"more_axes,omitempty"`
	// Segments is how many segments the walk cut the range into (on each
	// every recorded comparison keeps its outcome), Runs how many virtual
	// runs it took, Reached how far it got (Hi when complete; with residue
	// classes, how far along the axis the class that stopped got, the
	// ClassesDone before it walked whole; a box's is 0).
	Segments int `json:"segments"`
	// BoundSplits is how many times the bound changed inside a segment
	// (each found by bisection).
	BoundSplits int `json:"bound_splits,omitempty"`
	// BoundAffine is how many segments have a bound that moves along them
	// affinely (a term of it is the axis), kept whole.
	BoundAffine int           `json:"bound_affine,omitempty"`
	Runs        int           `json:"runs"`
	Reached     time.Duration `json:"reached"`
	// Lattice is, with a drifting clock, the step of the residue classes
	// proven one by one (each a walk or a box of its own: see Prove); 0
	// without one. Classes is how many there are (Lattice, or its square
	// for a box; 1 without a drifting clock), ClassesDone how many were
	// proven whole (all of them when Complete).
	Lattice     int64 `json:"lattice,omitempty"`
	Classes     int   `json:"classes"`
	ClassesDone int   `json:"classes_done"`
	// Complete is false when the walk stopped early; Incomplete says why.
	Complete   bool   `json:"complete"`
	Incomplete string `json:"incomplete,omitempty"`
	// FullOrder is ProveOptions.FullOrder: the paths were full orders.
	FullOrder bool `json:"full_order,omitempty"`
	// Proofs are the metrics' results, in Space.Metrics' order.
	Proofs []Proof `json:"proofs"`
	// Curves are, for a walk, each metric at every schedule it was taken
	// at (every segment's ends, and the bound's pieces'), in axis order:
	// the report's plots and curves.csv. Not in result.json.
	Curves []ProveCurve `json:"-"`
	// Maps are, for a box, each metric over a grid of the box's schedules:
	// the report's heatmaps. Not in result.json.
	Maps []ProveMap `json:"-"`
	// Elapsed is the wall time of the walk (it differs between machines;
	// everything else is a function of the space).
	Elapsed time.Duration `json:"elapsed"`
}

// ProveAxis is one axis of a box proof and its range (closed).
type ProveAxis struct {
	Axis string        `json:"axis"`
	Lo   time.Duration `json:"lo"`
	Hi   time.Duration `json:"hi"`
}

// setAt sets the worst schedule's coordinates.
func (pr *Proof) setAt(x []time.Duration) {
	pr.At, pr.At2, pr.AtMore = splitPoint(x)
}

// setExcessAt sets the coordinates of the schedule closest to the bound.
func (pr *Proof) setExcessAt(x []time.Duration) {
	pr.ExcessAt, pr.ExcessAt2, pr.ExcessAtMore = splitPoint(x)
}

// Point is the worst schedule's coordinates, one per axis of r.
func (r *ProveResult) Point(p Proof) []time.Duration {
	return r.point(p.At, p.At2, p.AtMore...)
}

// ExcessPoint is the coordinates of the schedule closest to the bound (the
// counterexample's).
func (r *ProveResult) ExcessPoint(p Proof) []time.Duration {
	return r.point(p.ExcessAt, p.ExcessAt2, p.ExcessAtMore...)
}

func splitPoint(x []time.Duration) (a, b time.Duration, more []time.Duration) {
	a = x[0]
	if len(x) > 1 {
		b = x[1]
	}
	if len(x) > 2 {
		more = slices.Clone(x[2:])
	}
	return a, b, more
}

// ProveOptions configure Prove.
type ProveOptions struct {
	// Virtual configures the backend (its path hooks are Prove's own).
	Virtual virtual.Options
	// Interior is how many random interior points of each segment are
	// checked against the segment's recorded path (a runtime check of the
	// recorder). Default 1; negative: none.
	Interior int
	// Predict, if set, replaces bounds.Predict for the bounds (a test
	// double of the bound calculator).
	Predict func(model.Params, model.FaultSize) []bounds.Prediction
	// Progress, if set, is called now and then with how far the walk got,
	// as a fraction of the range.
	Progress func(frac float64)
	// FullOrder records every run's full order (every comparison the
	// virtual queue makes) rather than its partial order (only the events
	// that depend on each other: virtual.Options.PartialOrder). The two
	// give the same worst values; the full order cuts the range far finer
	// (two followers' attempts crossing is a breakpoint of its own) and is
	// there to check the partial order against.
	FullOrder bool
	// withoutOutcomeCmps leaves the analysis's comparisons out of the
	// failover metric's path: a test's, to show the interior checks catch
	// the failover they leave non-affine.
	withoutOutcomeCmps bool
}

// ErrPathMismatch is wrapped by Prove's error when a run leaves the path
// its segment predicts: a comparison the recorder does not see, a bug.
var ErrPathMismatch = errors.New("a run left its segment's predicted path")

// Prove walks the space's axis from breakpoint to breakpoint and returns,
// per metric, the exact worst value over the range within the virtual
// model (spec or safe mode, each clock at its fixed rate), with its bound
// and a verdict. With a drifting clock it proves each residue class of the
// range modulo the rates' lattice on its own (prove_lattice.go). Over
// a box of two axes it cuts the box into cells instead (see the box
// prover's model in prove_box.go), and certifies their coverage by
// counting their schedules.
//
// A run records its path: the events the queue pops and every comparison
// of two times that decides what it does (virtual.Options.OnPop,
// OnCompare). With each clock rate fixed (and, for a drifting clock, on
// one residue class) each operand is an affine function
// of the axis value x, c + k·x; its coefficients come from the runs at x
// and x+1ns. The segment from x runs up to the first value at which some
// comparison's outcome could change (its operands cross), and is checked:
// the run at its end, and at Interior random points inside it, must take
// the same path with every operand where the coefficients put it (else
// ErrPathMismatch). Along a segment the order of every event is fixed, so
// each metric (a maximum of end − start over windows) is a maximum of
// affine functions of x: its supremum is at one of the segment's two ends.
// The bound is compared piece by piece: where the prediction changes inside
// a segment (it reads the run's analysis, whose comparisons the path does
// not record), it is kept whole if the bound moves affinely along it, else
// the change is found by bisection, assuming one change between two points
// whose bounds differ (boundSplits). Each metric's worst schedule is
// replayed with the ordinary virtual run, which must measure the same
// value.
func Prove(ctx context.Context, s ProveSpace, o ProveOptions) (*ProveResult, error) {
	s = s.withDefaults()
	if err := s.Check(); err != nil {
		return nil, err
	}
	unit, _ := s.latticeStep()
	if unit > 1 {
		res, err := proveClasses(ctx, s, o, unit)
		if res != nil {
			res.FullOrder = o.FullOrder
		}
		return res, err
	}
	prove := proveWalk
	switch {
	case len(s.Vary) == 2:
		prove = proveBoxResult
	case len(s.Vary) > 2:
		prove = provePolyResult
	}
	res, err := prove(ctx, s, o, lattice{})
	if err != nil {
		return nil, err
	}
	res.Classes, res.FullOrder = 1, o.FullOrder
	if res.Complete {
		res.ClassesDone = 1
	}
	return res, nil
}

// proveWalk is Prove along one axis, on the points of one residue class.
func proveWalk(ctx context.Context, s ProveSpace, o ProveOptions, lat lattice) (*ProveResult, error) {
	r := s.Vary[0]
	lo, _ := time.ParseDuration(r.Lo)
	hi, _ := time.ParseDuration(r.Hi)
	start := time.Now()
	ulo, uhi := lat.coords(0, lo, hi)
	p := &prover{s: s, o: o, lat: lat, axis: r.Param, lo: ulo, hi: uhi, rng: rand.New(rand.NewPCG(uint64(s.Seed), 0x9e0f))}
	res := &ProveResult{Format: FormatVersion, Space: s, Axis: p.axis, Lo: lo, Hi: hi, Complete: true}
	n := len(s.Metrics)
	if ulo > uhi {
		// A residue class with no schedule in the range: nothing to walk.
		for _, m := range s.Metrics {
			res.Proofs = append(res.Proofs, Proof{Metric: m, Verdict: VerdictNone})
		}
		res.Reached = hi
		return res, nil
	}
	p.best = make([]Proof, n)
	p.found, p.boundVaries, p.excessSeen = make([]bool, n), make([]bool, n), make([]bool, n)
	p.excess, p.excessAt = make([]time.Duration, n), make([]time.Duration, n)
	for i, m := range s.Metrics {
		p.best[i] = Proof{Metric: m, Verdict: VerdictNone}
	}
	err := p.walk(ctx)
	res.Segments, res.Runs, res.Reached, res.BoundSplits, res.BoundAffine = p.segments, p.runs, lat.at(0, p.reached), p.splits, p.affine
	if err != nil {
		if errors.Is(err, errSegmentLimit) || ctx.Err() != nil {
			res.Complete = false
			res.Incomplete = fmt.Sprintf("stopped at %s=%v of %v..%v after %d segments: %v", p.axis, res.Reached, lo, hi, p.segments, err)
		} else {
			return nil, err
		}
	}
	for i := range p.best {
		b := &p.best[i]
		if !p.found[i] {
			b.Why = b.UnknownWhy
			if b.NotMeasured > 0 {
				// Not a metric no run is about: its worst is not known.
				b.Verdict, b.Why = VerdictIncomplete, b.notMeasuredWhy()
			}
			continue
		}
		rep, err := p.replay(b.At, i)
		if err != nil {
			return nil, err
		}
		if rep.Measured != b.Worst {
			return nil, fmt.Errorf("%w: the ordinary run of %s measures %s %v, the walk %v", ErrPathMismatch, p.pointText(b.At), b.Metric, rep.Measured, b.Worst)
		}
		b.Replayed = rep.Measured
		b.BoundVaries = p.boundVaries[i]
		if p.excessSeen[i] {
			b.Excess, b.ExcessAt = p.excess[i], p.excessAt[i]
		}
		if p.excessSeen[i] && b.Excess > 0 {
			// The counterexample's schedule is a witness too.
			rep, err := p.replay(b.ExcessAt, i)
			if err != nil {
				return nil, err
			}
			if rep.Measured-rep.Predicted != b.Excess {
				return nil, fmt.Errorf("%w: the ordinary run of %s exceeds the %s bound by %v, the walk by %v", ErrPathMismatch, p.pointText(b.ExcessAt), b.Metric, rep.Measured-rep.Predicted, b.Excess)
			}
		}
		switch {
		case p.excessSeen[i] && b.Excess > 0:
			b.Verdict = VerdictCounterexample
		case !res.Complete:
			b.Verdict, b.Why = VerdictIncomplete, fmt.Sprintf("the walk stopped at %s=%v, before the range's end", p.axis, res.Reached)
		case b.NotMeasured > 0:
			b.Verdict, b.Why = VerdictIncomplete, b.notMeasuredWhy()
		case !p.excessSeen[i]:
			b.Verdict = VerdictNone
			b.Why = "no bound applies"
		default:
			b.Verdict = VerdictProven
		}
	}
	for i := range p.best {
		b := &p.best[i]
		b.found, b.seen = p.found[i], p.excessSeen[i]
		b.At, b.ExcessAt = lat.at(0, b.At), lat.at(0, b.ExcessAt)
	}
	res.Proofs = p.best
	res.Curves = p.curves
	res.Elapsed = time.Since(start)
	return res, nil
}

var errSegmentLimit = errors.New("segment limit reached")

// prover is one walk.
type prover struct {
	s    ProveSpace
	o    ProveOptions
	lat  lattice // the walk's coordinates: schedules' times on it
	axis string
	axes []string // a box's axes (axis is then the first)
	// capComps and capPops are the longest path recorded so far.
	capComps, capPops int
	lo, hi            time.Duration
	rng               *rand.Rand

	runs, segments int
	splits         int // bound changes found inside segments
	affine         int // segments whose bound moves along them, affinely
	reached        time.Duration
	best           []Proof
	// Per metric: whether a run measured it against a bound, whether its
	// bound differed between two points of one segment, and the largest
	// excess over its bound (measured − bound) and where.
	found, boundVaries, excessSeen []bool
	excess, excessAt               []time.Duration
	curves                         []ProveCurve
	lastTaken                      time.Duration // the axis value take saw last (walks take in axis order)
}

// path is what one run recorded: the identities of the events popped, and
// each comparison's two operands, in order.
type path struct {
	pops []virtual.Pop // At zeroed: identity only
	a, b []int64
	ws   []Worst
	// wins are, per metric, the lengths of the windows it is the maximum
	// of (the box prover's metric is affine per window in a cell).
	wins [][]int64
	// least are each window's least length to count (windows).
	least [][]int64
}

// windows are, per metric, the lengths of the timeline's windows whose
// maximum it is (analysis.Measure: overlaps, gaps, stale leaderships), and
// the least length at which each counts: the analysis drops a closed stale
// window shorter than TruthResolution, which the prover keeps, in time
// order, so that a cell's windows are the same at every point of it.
func windows(metrics []string, r *verdict.Result) (wins, least [][]int64) {
	wins, least = make([][]int64, len(metrics)), make([][]int64, len(metrics))
	a := r.Analysis
	for i, m := range metrics {
		var ws, ls []int64
		switch m {
		case exOverlap:
			for _, o := range a.Overlaps {
				ws, ls = append(ws, int64(o.Duration)), append(ls, 0)
			}
		case exGap:
			for _, g := range a.Gaps {
				ws, ls = append(ws, int64(g.Duration)), append(ls, 0)
			}
		case exFailover:
			// Each fault that demoted a leader it hit, as analysis.Measure
			// takes them.
			for _, f := range a.Faults {
				if f.Demotion != nil && f.Failover != nil {
					ws, ls = append(ws, int64(*f.Failover)), append(ls, 0)
				}
			}
		case exStale:
			all := append(slices.Clone(a.Redis.Stale), a.Redis.ShortStale...)
			slices.SortStableFunc(all, func(x, y analysis.Stale) int { return cmp.Compare(x.Start, y.Start) })
			for _, s := range all {
				l := int64(analysis.TruthResolution)
				if s.Open {
					l = 0
				}
				ws, ls = append(ws, int64(s.Duration)), append(ls, l)
			}
		}
		wins[i], least[i] = ws, ls
	}
	return wins, least
}

// scenario is the base at axis value x, as explore builds it: the fault
// phase stretched to hold the fault (durationCmp is that comparison).
func (p *prover) scenario(x time.Duration) model.Scenario { return p.scenarioAt(x) }

// axisNames are the axes the prover walks: its one axis, or a box's.
func (p *prover) axisNames() []string {
	if len(p.axes) > 0 {
		return p.axes
	}
	return []string{p.axis}
}

// scenarioAt is the base with each axis at its value in xs.
func (p *prover) scenarioAt(xs ...time.Duration) model.Scenario { return p.scenarioTelling(nil, xs...) }

// scenarioTelling is scenarioAt that tells tell the comparisons that
// stretch its fault phase (stretchedPhase).
func (p *prover) scenarioTelling(tell func(a, b time.Duration), xs ...time.Duration) model.Scenario {
	sc := p.s.Base
	sc.Faults = slices.Clone(sc.Faults)
	sc.Starts = slices.Clone(sc.Starts)
	sc.Seed = p.s.Seed
	for i, axis := range p.axisNames() {
		setAxis(&sc, axis, p.lat.at(i, xs[i]))
	}
	sc.Duration = stretchedPhase(sc, tell)
	sc.Expect = nil
	for _, m := range p.s.Metrics {
		// A nanosecond of slack: the check's limit is then the bound itself.
		sc.Expect = append(sc.Expect, model.Expectation{Metric: model.Metric(m), Max: "predicted", Slack: time.Nanosecond})
	}
	return sc
}

// setAxis sets one axis of the scenario: a fault's start or length, or an
// instance's start.
func setAxis(sc *model.Scenario, axis string, x time.Duration) {
	switch field, k, ok := faultAxis(axis); {
	case ok && field == ParamAt:
		sc.Faults[k].At = x
	case ok:
		sc.Faults[k].For = x
	default:
		n := startAxis(axis)
		starts := make([]time.Duration, max(len(sc.Starts), n+1))
		copy(starts, sc.Starts)
		starts[n] = x
		sc.Starts = starts
	}
}

// pointText is a schedule's coordinates, "at=2s" or "at=2s for=3s".
func (p *prover) pointText(xs ...time.Duration) string {
	var parts []string
	for i, a := range p.axisNames() {
		parts = append(parts, fmt.Sprintf("%s=%v", a, p.lat.at(i, xs[i])))
	}
	return strings.Join(parts, " ")
}

// record runs the schedule at x with the path hooks.
func (p *prover) record(x time.Duration) (*path, error) { return p.recordAt(x) }

// recordAt runs the schedule at the point xs with the path hooks.
func (p *prover) recordAt(xs ...time.Duration) (*path, error) {
	// Sized as the longest path so far: appending to a path grown from
	// nothing was a fifth of a box proof's time.
	pa := &path{a: make([]int64, 0, p.capComps), b: make([]int64, 0, p.capComps), pops: make([]virtual.Pop, 0, p.capPops)}
	// The fault phase's stretch comes first in the path.
	sc := p.scenarioTelling(func(a, b time.Duration) {
		pa.a, pa.b = append(pa.a, int64(a)), append(pa.b, int64(b))
	}, xs...)
	vo := p.o.Virtual
	vo.OnCall = nil
	vo.PartialOrder = !p.o.FullOrder
	vo.OnPop = func(e virtual.Pop) {
		e.At = 0
		pa.pops = append(pa.pops, e)
	}
	vo.OnCompare = func(a, b time.Duration) {
		pa.a = append(pa.a, int64(a))
		pa.b = append(pa.b, int64(b))
	}
	if slices.Contains(p.s.Metrics, exFailover) && !p.o.withoutOutcomeCmps {
		vo.OnOutcomeCompare = vo.OnCompare
	}
	res, err := virtual.Run(sc, vo)
	if err != nil {
		return nil, fmt.Errorf("running %s: %w", p.pointText(xs...), err)
	}
	p.runs++
	p.capComps, p.capPops = max(p.capComps, len(pa.a)), max(p.capPops, len(pa.pops))
	pa.ws = p.judge(res)
	pa.wins, pa.least = windows(p.s.Metrics, res)
	return pa, nil
}

// samePath reports whether q took p's path: the same events, the same
// number of comparisons.
func samePath(p, q *path) bool {
	return len(p.a) == len(q.a) && slices.Equal(p.pops, q.pops)
}

func sign(d int64) int {
	switch {
	case d < 0:
		return -1
	case d > 0:
		return 1
	}
	return 0
}

// walk cuts [lo, hi] into segments and takes each metric's worst.
func (p *prover) walk(ctx context.Context) error {
	interior := p.o.Interior
	if interior == 0 {
		interior = 1
	}
	x := p.lo
	cur, err := p.record(x)
	if err != nil {
		return err
	}
	for {
		p.reached = x
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p.segments >= p.s.MaxSegments {
			return errSegmentLimit
		}
		p.segments++
		p.take(x, x, cur)
		if x == p.hi {
			return nil
		}
		nx, err := p.record(x + 1)
		if err != nil {
			return err
		}
		e := x
		if samePath(cur, nx) {
			e = p.segmentEnd(x, cur, nx)
		}
		if e == x {
			// A segment of one point (a crossing): the next starts at x+1.
			x, cur = x+1, nx
			continue
		}
		end := nx
		if e > x+1 {
			if end, err = p.record(e); err != nil {
				return err
			}
			if err := p.check(x, e, cur, nx, end); err != nil {
				return err
			}
			for range interior {
				if e-x < 3 {
					break
				}
				y := x + 2 + time.Duration(p.rng.Int64N(int64(e-x-2)))
				mid, err := p.record(y)
				if err != nil {
					return err
				}
				if err := p.check(x, y, cur, nx, mid); err != nil {
					return err
				}
				if err := p.convex(x, e, y, cur, end, mid); err != nil {
					return err
				}
			}
		}
		if err := p.boundSplits(ctx, x, e, cur, nx, end); err != nil {
			return err
		}
		p.take(e, x, end)
		p.reached = e
		if e == p.hi {
			return nil
		}
		x = e + 1
		if cur, err = p.record(x); err != nil {
			return err
		}
		if p.o.Progress != nil && p.segments%256 == 0 {
			p.o.Progress(float64(x-p.lo) / float64(max(p.hi-p.lo, 1)))
		}
	}
}

// segmentEnd is the last axis value, from x, at which every comparison
// recorded at x keeps the sign of its operands' difference, each operand
// taken as affine with the slope between the runs at x and x+1 (capped at
// hi).
func (p *prover) segmentEnd(x time.Duration, cur, nx *path) time.Duration {
	first := int64(p.hi-x) + 1 // the first offset at which a sign changes
	for k := range cur.a {
		d0 := cur.a[k] - cur.b[k]
		sd := (nx.a[k] - nx.b[k]) - d0
		var t int64
		switch {
		case sd == 0:
			continue
		case d0 == 0:
			t = 1
		case d0 > 0 && sd < 0:
			t = ceilDiv(d0, -sd)
		case d0 < 0 && sd > 0:
			t = ceilDiv(-d0, sd)
		default:
			continue
		}
		first = min(first, t)
	}
	return x + time.Duration(first-1)
}

// ceilDiv is ⌈a/b⌉ for any nonzero b.
func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// notMeasured counts a schedule, at, whose run measured no value of the
// metric, and says incomplete what pr would otherwise call proven.
func (pr *Proof) notMeasured(w Worst, at string) {
	if !w.NotMeasured {
		return
	}
	pr.NotMeasured++
	if pr.NotMeasuredAt == "" {
		// The check's detail ends with what was missing, after its bound.
		_, why, ok := strings.Cut(w.Why, "not measured: ")
		if !ok {
			why = w.Why
		}
		pr.NotMeasuredAt, pr.notMeasuredReason = at, why
	}
}

// notMeasuredWhy is the incomplete verdict's reason for pr's schedules
// without a value.
func (pr *Proof) notMeasuredWhy() string {
	return fmt.Sprintf("%d of the schedules evaluated measure no %s (the first at %s: %s), so the worst is not known there; a longer recovery lets their runs see it",
		pr.NotMeasured, pr.Metric, pr.NotMeasuredAt, pr.notMeasuredReason)
}

// countUnknown counts a run whose check of the metric was unknown, and
// keeps the first reason.
func (pr *Proof) countUnknown(w Worst) {
	if w.Unknown > 0 {
		pr.Unknown++
		if pr.UnknownWhy == "" && !w.NotMeasured {
			pr.UnknownWhy = unknownReason(w.Why)
		}
	}
}

// check verifies that the run at y, inside the segment starting at x,
// took the segment's path with every operand where its coefficients put
// it.
func (p *prover) check(x, y time.Duration, cur, nx, got *path) error {
	if !samePath(cur, got) {
		return fmt.Errorf("%w: %s took another path than %s (%d comparisons and %d events against %d and %d)",
			ErrPathMismatch, p.pointText(y), p.pointText(x), len(got.a), len(got.pops), len(cur.a), len(cur.pops))
	}
	t := int64(y - x)
	for k := range cur.a {
		wa := cur.a[k] + (nx.a[k]-cur.a[k])*t
		wb := cur.b[k] + (nx.b[k]-cur.b[k])*t
		if got.a[k] != wa || got.b[k] != wb {
			return fmt.Errorf("%w: %s: comparison %d of the segment from %s has operands %v, %v where their coefficients put %v, %v",
				ErrPathMismatch, p.pointText(y), k, p.pointText(x), time.Duration(got.a[k]), time.Duration(got.b[k]), time.Duration(wa), time.Duration(wb))
		}
	}
	// Every window too: a metric is affine per window only if what decides
	// the windows is on the path (a failover's stability rule is the
	// analysis's comparison, recorded only when failover is asked for).
	for i := range cur.wins {
		if len(got.wins[i]) != len(cur.wins[i]) || len(nx.wins[i]) != len(cur.wins[i]) {
			return fmt.Errorf("%w: %s: %s has %d windows, %d at %s", ErrPathMismatch, p.pointText(y), p.s.Metrics[i], len(got.wins[i]), len(cur.wins[i]), p.pointText(x))
		}
		for j, l := range cur.wins[i] {
			if want := l + (nx.wins[i][j]-l)*t; got.wins[i][j] != want {
				return fmt.Errorf("%w: %s: a %s window of the segment from %s is %v where its gradient puts %v",
					ErrPathMismatch, p.pointText(y), p.s.Metrics[i], p.pointText(x), time.Duration(got.wins[i][j]), time.Duration(want))
			}
		}
	}
	return nil
}

// convex verifies that each metric at y, inside the segment [x, e], is at
// most the larger of its values at the ends: each window is affine, so
// longest at an end, and one that counts anywhere (a stale window from
// 20 ms on) counts there.
func (p *prover) convex(x, e, y time.Duration, a, b, mid *path) error {
	for i, w := range mid.ws {
		if !w.Found || !a.ws[i].Found || !b.ws[i].Found {
			continue
		}
		if w.Measured > max(a.ws[i].Measured, b.ws[i].Measured) {
			return fmt.Errorf("%w: %s at %s is %v, above both ends of its segment from %s to %s (%v, %v)",
				ErrPathMismatch, w.Metric, p.pointText(y), w.Measured, p.pointText(x), p.pointText(e), a.ws[i].Measured, b.ws[i].Measured)
		}
	}
	return nil
}

// take counts the run at x (in the segment from seg) towards each
// metric's worst.
func (p *prover) take(x, seg time.Duration, pa *path) {
	if p.curves != nil && x == p.lastTaken {
		// A bound's piece ending at the segment's end: taken once.
		return
	}
	p.lastTaken = x
	if p.curves == nil {
		for _, m := range p.s.Metrics {
			p.curves = append(p.curves, ProveCurve{Metric: m})
		}
	}
	for i, w := range pa.ws {
		p.curves[i].Points = append(p.curves[i].Points, CurvePoint{At: p.lat.at(0, x), Value: w.Measured, Bound: w.Predicted, Found: w.Found})
		b := &p.best[i]
		b.countUnknown(w)
		b.notMeasured(w, p.pointText(x))
		if !w.Found {
			continue
		}
		if !p.found[i] || w.Measured > b.Worst {
			b.Worst, b.At, b.Open = w.Measured, x, w.Open
			b.Bound, b.Formula = w.Predicted, w.Formula
		}
		p.found[i] = true
		if w.Predicted != model.Unbounded && (!p.excessSeen[i] || w.Measured-w.Predicted > p.excess[i]) {
			p.excessSeen[i] = true
			p.excess[i], p.excessAt[i] = w.Measured-w.Predicted, x
		}
	}
}

// sameBound reports whether a and b have the same bound for every
// metric.
func sameBound(a, b *path) bool {
	for i := range a.ws {
		if a.ws[i].Found != b.ws[i].Found || a.ws[i].Predicted != b.ws[i].Predicted {
			return false
		}
	}
	return true
}

// boundSplits cuts the segment [x, e] (a at x, a1 at x+1, b at e) into
// pieces on which every metric's bound is affine: the prediction reads the
// run's analysis (whether the fault caught a call, how long a pause held
// the leader), whose own comparisons the path does not record, so it can
// change inside a segment, and a bound can move with the axis (a pause's
// length is a term of pause's bound) or be a constant. On such a piece the
// excess, a convex metric less an affine bound, is largest at an end, and
// both ends of every piece are taken. A bound equal at x, x+1 and e is
// taken as constant; a segment whose bound at e, a third and two thirds of
// the way lies on the line through its values at x and x+1 stays whole.
// Otherwise that line is followed: a bisection between x+1 and the first
// of those points found off it finds the last point on it, which ends a
// piece, and the next piece starts 1 ns later. It assumes that a bound equal at a piece's
// first two points and its last is constant on it, that a bound on a line
// at the points checked is on it between them, and that a bound off it at
// a point stays off it beyond. Pieces count toward the segment limit.
func (p *prover) boundSplits(ctx context.Context, x, e time.Duration, a, a1, b *path) error {
	for e-x > 1 {
		if a1 == nil {
			var err error
			if a1, err = p.record(x + 1); err != nil {
				return err
			}
		}
		if sameBound(a, b) && sameBound(a, a1) {
			return nil
		}
		if e-x == 2 {
			// Three points, each taken: nothing lies between them.
			p.noteBoundVaries(a, b)
			p.noteBoundVaries(a, a1)
			p.take(x+1, x, a1)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p.segments+p.splits >= p.s.MaxSegments {
			return errSegmentLimit
		}
		hi, ph, err := p.offLine(x, e, a, a1, b)
		if err != nil {
			return err
		}
		if ph == nil {
			// On one line along the segment: it stays whole.
			p.noteBoundVaries(a, b)
			p.affine++
			return nil
		}
		// lo is on the line through x and x+1, hi is off it; pl and ph are
		// their runs.
		lo, pl := x+1, a1
		for hi-lo > 1 {
			m := lo + (hi-lo)/2
			pm, err := p.record(m)
			if err != nil {
				return err
			}
			if onLine(x, a, a1, m, pm) {
				lo, pl = m, pm
			} else {
				hi, ph = m, pm
			}
		}
		p.noteBoundVaries(a, b)
		p.noteBoundVaries(a, a1)
		p.splits++
		p.take(lo, x, pl)
		p.take(hi, x, ph)
		x, a, a1 = hi, ph, nil
	}
	return nil
}

// onLine reports whether the run c at m has every metric's bound on the
// line through the bounds of a at x and a1 at x+1 (and measures the same
// metrics).
func onLine(x time.Duration, a, a1 *path, m time.Duration, c *path) bool {
	for i := range a.ws {
		if c.ws[i].Found != a.ws[i].Found || a1.ws[i].Found != a.ws[i].Found {
			return false
		}
		slope := new(big.Int).SetInt64(int64(a1.ws[i].Predicted - a.ws[i].Predicted))
		want := slope.Mul(slope, big.NewInt(int64(m-x)))
		want.Add(want, big.NewInt(int64(a.ws[i].Predicted)))
		if want.Cmp(big.NewInt(int64(c.ws[i].Predicted))) != 0 {
			return false
		}
	}
	return true
}

// offLine finds where the bound leaves the line through its values at x
// and x+1 (a, a1) along [x, e] (b at e): e, if off it, else the run a
// third or two thirds of the way found off it first, with its run; a nil
// run when all are on it and the bound is taken as affine along the
// segment.
func (p *prover) offLine(x, e time.Duration, a, a1, b *path) (time.Duration, *path, error) {
	if !onLine(x, a, a1, e, b) {
		return e, b, nil
	}
	for _, k := range []int64{1, 2} {
		m := x + time.Duration(int64(e-x)*k/3)
		pm, err := p.record(m)
		if err != nil {
			return 0, nil, err
		}
		if !onLine(x, a, a1, m, pm) {
			return m, pm, nil
		}
	}
	return 0, nil, nil
}

// noteBoundVaries notes the metrics whose bound differs between a and b.
func (p *prover) noteBoundVaries(a, b *path) {
	for i := range a.ws {
		p.boundVaries[i] = p.boundVaries[i] || a.ws[i].Predicted != b.ws[i].Predicted
	}
}

// replay runs the schedule at x with the ordinary virtual run (no hooks)
// and returns metric i's measurement.
func (p *prover) replay(x time.Duration, i int) (Worst, error) { return p.replayAt(i, x) }

// replayAt is replay at the point xs.
func (p *prover) replayAt(i int, xs ...time.Duration) (Worst, error) {
	vo := p.o.Virtual
	vo.OnCall, vo.OnPop, vo.OnCompare, vo.OnOutcomeCompare = nil, nil, nil, nil
	res, err := virtual.Run(p.scenarioAt(xs...), vo)
	if err != nil {
		return Worst{}, fmt.Errorf("replaying %s: %w", p.pointText(xs...), err)
	}
	return p.judge(res)[i], nil
}

// judge reads each metric's check of a run (against Options.Predict's
// bounds when set).
func (p *prover) judge(r *verdict.Result) []Worst {
	if p.o.Predict != nil {
		eff := r.Scenario.Scaled()
		eff.Params = r.Params
		r.Predictions = p.o.Predict(r.Params, bounds.AppliedFaultSize(eff, r.Analysis))
		r.Evaluation = verdict.Evaluate(eff, r.Analysis, r.Predictions)
	}
	return judge(Space{Metrics: p.s.Metrics, Tolerance: p.s.Tolerance}, Schedule{Seed: p.s.Seed}, r)
}

// pow is b to the power k.
func pow(b int64, k int) int64 {
	out := int64(1)
	for range k {
		out *= b
	}
	return out
}
