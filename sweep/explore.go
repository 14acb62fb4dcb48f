package sweep

import (
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/virtual"
)

// The metrics Explore searches the worst schedule of, as expectations name
// them.
const (
	exOverlap  = string(model.MetricMaxOverlap)
	exGap      = string(model.MetricMaxGap)
	exStale    = string(model.MetricStaleLeadership)
	exFailover = string(model.MetricFailover)
)

// ExploreMetrics lists them, in the order reports show them.
var ExploreMetrics = []string{exOverlap, exGap, exStale, exFailover}

// The counts Explore searches the worst schedule of in runner mode, as
// expectations name them: what the TaskRunner's user asks of a set of
// timings (how many duplicate or stale chores, how many repeated tasks at
// worst). A count's Worst holds it in Measured as a number of
// nanoseconds, with Count set (Worst.Value prints it).
const (
	exDupChores   = string(model.MetricDuplicateChores)
	exStaleChores = string(model.MetricStaleChores)
	exDupTasks    = string(model.MetricDuplicateTasks)
)

// ExploreCounts lists them, in the order reports show them.
var ExploreCounts = []string{exDupChores, exStaleChores, exDupTasks}

// isCount reports whether m is one of ExploreCounts.
func isCount(m string) bool { return slices.Contains(ExploreCounts, m) }

// ParseMetric reads a metric as --metric takes it: an expectation's name
// (max_overlap, max_gap, stale_leadership, failover; in runner mode
// duplicate_chores, stale_chores, duplicate_tasks) or its short form
// (overlap, gap, stale).
func ParseMetric(s string) (string, error) {
	switch s {
	case "overlap":
		return exOverlap, nil
	case "gap":
		return exGap, nil
	case "stale":
		return exStale, nil
	}
	if slices.Contains(ExploreMetrics, s) || isCount(s) {
		return s, nil
	}
	return "", fmt.Errorf("metric %q: want one of overlap, gap, stale, failover, %s", s, strings.Join(ExploreCounts, ", "))
}

// ParamFor is the fault size a Range can vary besides the sweep axes': the
// For of every fault that lasts (not the instant ones).
const ParamFor = "for"

// VaryParams are the fault sizes a Range can vary.
var VaryParams = []string{ParamFor, ParamPartition, ParamPause, ParamLatency, ParamClockRate, ParamLag}

// Range is one fault size the search varies, from Lo to Hi (canonical
// texts, as an axis value: "1s", "0.5").
type Range struct {
	Param string `json:"param"`
	Lo    string `json:"lo"`
	Hi    string `json:"hi"`
}

// ParseRange reads PARAM=LO..HI ("for=1s..14s", "clock_rate=0.2..0.9";
// "rate" is clock_rate), as --vary takes it.
func ParseRange(s string) (Range, error) {
	param, rest, ok := strings.Cut(s, "=")
	lo, hi, ok2 := strings.Cut(rest, "..")
	if !ok || !ok2 {
		return Range{}, fmt.Errorf("vary %q: want PARAM=LO..HI, e.g. for=1s..14s", s)
	}
	if param == "rate" {
		param = ParamClockRate
	}
	r := Range{Param: param, Lo: lo, Hi: hi}
	if err := r.check(); err != nil {
		return Range{}, err
	}
	if r.Param != ParamClockRate {
		a, _ := time.ParseDuration(lo)
		b, _ := time.ParseDuration(hi)
		r.Lo, r.Hi = a.String(), b.String()
	}
	return r, nil
}

func (r Range) check() error {
	if !slices.Contains(VaryParams, r.Param) {
		return fmt.Errorf("vary %s: unknown fault size; want one of %s (rate for clock_rate)", r.Param, strings.Join(VaryParams, ", "))
	}
	axis := r.Param
	if axis == ParamFor {
		axis = ParamPartition // any positive duration
	}
	lo, err1 := parseValue(axis, r.Lo)
	hi, err2 := parseValue(axis, r.Hi)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("vary %s: %v", r.Param, err)
	}
	if lo.d > hi.d || lo.f > hi.f {
		return fmt.Errorf("vary %s: %s..%s; want LO ≤ HI", r.Param, r.Lo, r.Hi)
	}
	return nil
}

// at returns the value a fraction x ∈ [0, 1] of the way from Lo to Hi, in
// canonical text (durations to the µs, rates to 1e-4).
func (r Range) at(x float64) string {
	x = min(max(x, 0), 1)
	if r.Param == ParamClockRate {
		lo, _ := strconv.ParseFloat(r.Lo, 64)
		hi, _ := strconv.ParseFloat(r.Hi, 64)
		return strconv.FormatFloat(math.Round((lo+(hi-lo)*x)*1e4)/1e4, 'g', -1, 64)
	}
	lo, _ := time.ParseDuration(r.Lo)
	hi, _ := time.ParseDuration(r.Hi)
	return (lo + time.Duration(float64(hi-lo)*x)).Round(time.Microsecond).String()
}

// frac is where v lies between Lo and Hi, in [0, 1].
func (r Range) frac(v string) float64 {
	if r.Param == ParamClockRate {
		lo, _ := strconv.ParseFloat(r.Lo, 64)
		hi, _ := strconv.ParseFloat(r.Hi, 64)
		f, _ := strconv.ParseFloat(v, 64)
		if hi == lo {
			return 0
		}
		return (f - lo) / (hi - lo)
	}
	lo, _ := time.ParseDuration(r.Lo)
	hi, _ := time.ParseDuration(r.Hi)
	d, _ := time.ParseDuration(v)
	if hi == lo {
		return 0
	}
	return float64(d-lo) / float64(hi-lo)
}

// Space is what Explore searches: a base scenario whose faults' starts
// move, whose fault sizes vary within ranges, over seeds.
type Space struct {
	// Name names the search in reports; default the base scenario's name.
	Name string `json:"name"`
	// Base is the scenario (elector mode); its faults are the ones moved.
	Base model.Scenario `json:"base"`
	// Metrics are the metrics searched; default ExploreMetrics.
	Metrics []string `json:"metrics"`
	// Vary are the fault sizes searched (none: the base's sizes).
	Vary []Range `json:"vary,omitempty"`
	// Window is how far each fault's start moves: over [At - Window/2,
	// At + Window/2] of the base's At (never before 50ms), in the
	// scenario's units. Default TTL/2 + jitter + Wait: a renewal interval
	// and a Wait.
	Window time.Duration `json:"window"`
	// Seeds is how many seeds are searched (FirstSeed, FirstSeed+1, ...),
	// each an independent lane of the search with its own jitter and
	// backoff draws. Default 8.
	Seeds     int   `json:"seeds"`
	FirstSeed int64 `json:"first_seed"`
	// Budget is how many runs the whole search makes (split evenly over
	// the seeds). Default 40,000.
	Budget int `json:"budget"`
	// FixedStarts keeps the instances' starts as the base has them; by
	// default the followers' starts (Scenario.Starts of instances 1 to 3;
	// instance 0 starts first and leads) move over [0, Wait), which sets
	// where their acquire attempts fall against the leader's renewals.
	FixedStarts bool `json:"fixed_starts,omitempty"`
	// Tolerance is how far above its bound a measurement must be to count
	// as a violation: the bounds leave out the ~0.1ms of a healthy round
	// trip. Default 1ms.
	Tolerance time.Duration `json:"tolerance"`
}

// Explore's defaults.
const (
	DefaultExploreSeeds  = 8
	DefaultExploreBudget = 40000
	DefaultTolerance     = time.Millisecond
	minFaultAt           = 50 * time.Millisecond
)

func (s Space) withDefaults() Space {
	if s.Name == "" {
		s.Name = s.Base.Name
	}
	if s.Name == "" {
		s.Name = "explore"
	}
	if len(s.Metrics) == 0 {
		s.Metrics = slices.Clone(ExploreMetrics)
	}
	if s.Seeds == 0 {
		s.Seeds = DefaultExploreSeeds
	}
	if s.FirstSeed == 0 {
		s.FirstSeed = 1
	}
	if s.Budget == 0 {
		s.Budget = DefaultExploreBudget
	}
	if s.Tolerance == 0 {
		s.Tolerance = DefaultTolerance
	}
	if s.Window == 0 {
		p := s.Base.Params.WithDefaults()
		s.Window = p.TTL/2 + p.Jitter() + p.Wait
	}
	return s
}

// Check reports what is wrong with the space itself.
func (s Space) Check() error {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if err := virtual.Refuses(s.Base); err != nil {
		bad("%v", err)
	}
	if len(s.Base.Faults) == 0 {
		bad("the scenario has no fault to move")
	}
	for _, m := range s.Metrics {
		switch {
		case isCount(m) && s.Base.Mode != model.ModeRunner:
			bad("metric %s counts the TaskRunner's chores or tasks: the scenario is in elector mode, which runs none; use mode: runner", m)
		case !slices.Contains(ExploreMetrics, m) && !isCount(m):
			bad("metric %q: want one of %s", m, strings.Join(append(slices.Clone(ExploreMetrics), ExploreCounts...), ", "))
		}
	}
	seen := map[string]bool{}
	for _, r := range s.Vary {
		if err := r.check(); err != nil {
			bad("%v", err)
			continue
		}
		if seen[r.Param] {
			bad("vary %s is given twice", r.Param)
		}
		seen[r.Param] = true
		if r.Param == ParamFor {
			if !slices.ContainsFunc(s.Base.Faults, func(f model.Fault) bool { return !f.Instant() }) {
				bad("vary for: the scenario has no lasting fault to size")
			}
		} else if msg := needsFault(s.Base, r.Param); msg != "" {
			bad("vary %s", msg)
		}
	}
	if s.Seeds < 0 || s.Budget < 0 || s.Window < 0 || s.Tolerance < 0 {
		bad("seeds, budget, window and tolerance must not be negative")
	}
	if len(probs) > 0 {
		return fmt.Errorf("explore %q: %s", s.Name, strings.Join(probs, "; "))
	}
	if err := s.Base.Validate(); err != nil {
		return err
	}
	return nil
}

// Schedule is one point of the space: a seed, each fault's start, and
// each Range's value (in Space.Vary's order).
type Schedule struct {
	Seed  int64           `json:"seed"`
	At    []time.Duration `json:"at"`
	Sizes []string        `json:"sizes,omitempty"`
	// Starts are the instances' starts (Scenario.Starts); nil: the base's.
	Starts []time.Duration `json:"starts,omitempty"`
}

func (x Schedule) key() string {
	var b strings.Builder
	for _, a := range x.At {
		b.WriteString(strconv.FormatInt(int64(a), 36))
		b.WriteByte(',')
	}
	b.WriteString(strings.Join(x.Sizes, ","))
	for _, a := range x.Starts {
		b.WriteByte(';')
		b.WriteString(strconv.FormatInt(int64(a), 36))
	}
	return b.String()
}

// Scenario is the scenario the schedule runs: the base with its faults
// moved and sized, its fault phase stretched to hold them, and seed. The
// expectations are the base's.
func (s Space) Scenario(x Schedule) (model.Scenario, error) {
	s = s.withDefaults()
	sc := s.Base
	sc.Faults = slices.Clone(sc.Faults)
	sc.Seed = x.Seed
	if len(x.At) != len(sc.Faults) {
		return sc, fmt.Errorf("schedule: %d fault starts for %d faults", len(x.At), len(sc.Faults))
	}
	for i := range sc.Faults {
		sc.Faults[i].At = x.At[i]
	}
	if x.Starts != nil {
		sc.Starts = slices.Clone(x.Starts)
	}
	for k, r := range s.Vary {
		if k >= len(x.Sizes) {
			break
		}
		v := x.Sizes[k]
		switch r.Param {
		case ParamFor:
			d, _ := time.ParseDuration(v)
			for i := range sc.Faults {
				if !sc.Faults[i].Instant() {
					sc.Faults[i].For = d
				}
			}
		default:
			g := Grid{Base: sc, Axes: []Axis{{Param: r.Param, Values: []string{v}}}}
			var err error
			if sc, err = g.Scenario(0, x.Seed); err != nil {
				return sc, err
			}
		}
	}
	sc.Duration = stretchedPhase(sc, nil)
	return sc, sc.Validate()
}

// stretchedPhase is the fault phase of a schedule whose faults were moved
// or sized: the scenario's (30s if none) stretched to the latest fault's
// PhaseEnd. tell, if not nil, is told each comparison that decides it, the
// longest so far against each fault's PhaseEnd in turn: they depend on the
// schedule, so chaos prove's path records them.
func stretchedPhase(sc model.Scenario, tell func(longest, end time.Duration)) time.Duration {
	d := sc.Duration
	if d == 0 {
		d = 30 * time.Second
	}
	for _, f := range sc.Faults {
		end := f.PhaseEnd()
		if tell != nil {
			tell(d, end)
		}
		d = max(d, end)
	}
	return d
}

// Worst is the worst schedule found for one metric.
type Worst struct {
	Metric   string   `json:"metric"`
	Schedule Schedule `json:"schedule"`
	// Measured is the metric in the worst run; Open when a window was still
	// open at its end.
	Measured time.Duration `json:"measured"`
	Open     bool          `json:"open,omitempty"`
	// Predicted is the bound for the run's applied faults (without slack),
	// Formula how it is derived, Modes the failure modes it covers.
	Predicted time.Duration `json:"predicted"`
	Formula   string        `json:"formula"`
	Modes     []string      `json:"modes,omitempty"`
	// Ratio is Measured / Predicted (0 when Predicted is 0 or unbounded).
	Ratio float64 `json:"ratio"`
	// Violated: Measured exceeds Predicted by more than the tolerance.
	Violated bool `json:"violated"`
	// Phase is the search phase that found it: coarse, aligned (to an
	// elector call), refined (pattern search and edge bisection).
	Phase string `json:"phase"`
	// Found says whether any run measured the metric against a bound: a
	// run whose bound does not apply (unknown) or that never created the
	// metric's situation does not count.
	Found bool `json:"found"`
	// Unknown counts the runs whose check of this metric was unknown, and
	// Why says why for the first of them.
	Unknown int    `json:"unknown,omitempty"`
	Why     string `json:"why,omitempty"`
	// NotMeasured: the run's check failed for want of a value, not
	// against a bound (a failover with no stable leader before the run
	// ended); Unknown counts it too. Set by judge for a single run.
	NotMeasured bool `json:"not_measured,omitempty"`
	// Count: the metric is a count (ExploreCounts), Measured and
	// Predicted numbers of nanoseconds (Worst.Value prints them).
	Count bool `json:"count,omitempty"`
}

func (w Worst) excess() time.Duration {
	if w.Predicted == model.Unbounded {
		return math.MinInt64 / 2
	}
	return w.Measured - w.Predicted
}

// closeness is how near a run within its bound came to it, Measured /
// Predicted (0 for an unbounded or zero bound).
func (w Worst) closeness() float64 {
	if w.Predicted <= 0 || w.Predicted == model.Unbounded {
		return 0
	}
	return float64(w.Measured) / float64(w.Predicted)
}

// worse reports whether a is worse than b: a found run first, and one that
// measured something (0 of a 0 bound found nothing: ranked by excess it
// would beat every run near its bound, and a search varying the fault's
// size would refine only schedules where nothing happened); then a broken
// bound by the larger excess, then a kept one by the larger share of its
// bound, then the larger measurement. Ties keep b (the earlier).
func (a Worst) worse(b Worst) bool {
	if a.Found != b.Found {
		return a.Found
	}
	if na, nb := a.Measured == 0 && a.Predicted == 0, b.Measured == 0 && b.Predicted == 0; na != nb {
		return nb
	}
	ea, eb := a.excess(), b.excess()
	if va, vb := ea > 0, eb > 0; va != vb {
		return va
	} else if va && ea != eb {
		return ea > eb
	}
	if ca, cb := a.closeness(), b.closeness(); ca != cb {
		return ca > cb
	}
	if ea != eb {
		return ea > eb
	}
	return a.Measured > b.Measured
}

// RobustDelta is how far the robust pass moves each start either side: a
// few times the real backend's scheduling noise (faults land ≤ 1-2 ms
// late there), so that a schedule whose worst case sits on an edge a few
// µs wide is replaced by one that keeps most of it however the real
// backend's timing falls.
const RobustDelta = 5 * time.Millisecond

// Robust is the schedule near a metric's worst whose value holds when
// every fault start and follower start moves by ±Delta: the one to run on
// the real backend, whose timing is not exact to the µs.
type Robust struct {
	Metric   string   `json:"metric"`
	Schedule Schedule `json:"schedule"`
	// Measured is the metric at the schedule itself, Floor the least of it
	// over the schedule and its moves by ±Delta (one start at a time).
	Measured time.Duration `json:"measured"`
	Floor    time.Duration `json:"floor"`
	Delta    time.Duration `json:"delta"`
	Found    bool          `json:"found"`
	// Count: as Worst.Count.
	Count bool `json:"count,omitempty"`
}

// Lane is one seed's search.
type Lane struct {
	Seed   int64  `json:"seed"`
	Status string `json:"status"` // done, partial, not run
	Runs   int    `json:"runs"`
	// Skipped counts the schedules the validator refused (not runs: the
	// budget is spent on runs), SkipReasons why, most frequent first.
	Skipped     int          `json:"skipped,omitempty"`
	SkipReasons []SkipReason `json:"skip_reasons,omitempty"`
	Worst       []Worst      `json:"worst"`
	Robust      []Robust     `json:"robust,omitempty"`
}

// ExploreResult is Explore's outcome. Its JSON is byte-deterministic.
type ExploreResult struct {
	Format     int    `json:"format"`
	Space      Space  `json:"space"`
	Shard      *Shard `json:"shard,omitempty"`
	Complete   bool   `json:"complete"`
	Incomplete string `json:"incomplete,omitempty"`
	Runs       int    `json:"runs"`
	// Skipped counts the schedules model.Scenario.Validate refused (a
	// fault moved into a failover's lag, say), over every lane, and
	// SkipReasons why, most frequent first: skipped, not run, and not
	// counted in Runs.
	Skipped     int          `json:"skipped,omitempty"`
	SkipReasons []SkipReason `json:"skip_reasons,omitempty"`
	Lanes       []Lane       `json:"lanes"`
	Worst       []Worst      `json:"worst"`
	// Robust are, per metric, the schedules whose value holds best within
	// ±RobustDelta of every start (for the real backend).
	Robust []Robust `json:"robust"`
	// Elapsed is the wall time (not in the JSON).
	Elapsed time.Duration `json:"-"`
}

// Violations are the metrics whose worst run broke its bound.
func (r *ExploreResult) Violations() []Worst {
	var out []Worst
	for _, w := range r.Worst {
		if w.Violated {
			out = append(out, w)
		}
	}
	return out
}

// ExploreOptions configure Explore.
type ExploreOptions struct {
	// Workers is how many lanes run at once; default GOMAXPROCS.
	Workers int
	// Shard searches only the seeds (lanes) of one shard: lane k belongs
	// to shard k mod N.
	Shard Shard
	// Virtual configures the backend (OnCall is the explorer's own).
	Virtual virtual.Options
	// Predict, if set, replaces bounds.Predict for the bounds the runs are
	// judged against (a test double of the bound calculator).
	Predict func(model.Params, model.FaultSize) []bounds.Prediction
	// Progress, if set, is called after runs with the runs done and the
	// budget, one call at a time.
	Progress func(done, total int)
}

// Explore searches the space for the worst schedule of each metric on the
// virtual backend, and compares each with its predicted bound.
//
// Each seed is a lane, searched on its own and in four phases, each a pure
// function of what the lane measured before: a coarse pass (every fault's
// start over the window, the sizes over their ranges, low-discrepancy
// points); call alignment (the best schedules are re-run with the model's
// call recorder, and each fault's start, and heal where a size varies, is
// set within a few hundred µs either side of every send, arrival, reply
// and end of an elector call in the window); then a pattern search around
// each metric's best, halving its steps down to 1µs, which bisects the
// edges where a metric jumps (a fault just after a renewal's send versus
// just before it). The lanes run in parallel and are reduced in seed
// order, so the result does not depend on GOMAXPROCS, and Merge of the
// shards equals the unsharded search byte for byte.
//
// If ctx is cancelled, each lane stops at its next run and the result so
// far is returned, incomplete, with ctx's error.
func Explore(ctx context.Context, s Space, o ExploreOptions) (*ExploreResult, error) {
	s = s.withDefaults()
	if err := s.Check(); err != nil {
		return nil, err
	}
	if err := o.Shard.check(); err != nil {
		return nil, err
	}
	start := time.Now()
	res := &ExploreResult{Format: FormatVersion, Space: s, Complete: true, Lanes: make([]Lane, s.Seeds)}
	if o.Shard.N > 1 {
		sh := o.Shard
		res.Shard = &sh
	}
	var owned []int
	for k := range res.Lanes {
		res.Lanes[k] = Lane{Seed: s.FirstSeed + int64(k), Status: StatusNotRun}
		if o.Shard.owns(k) {
			owned = append(owned, k)
		}
	}
	per := max(s.Budget/s.Seeds, 1)
	total := per * len(owned)
	var done atomic.Int64
	var mu sync.Mutex
	progress := func() {
		d := done.Add(1)
		if o.Progress != nil && (d%256 == 0 || int(d) == total) {
			mu.Lock()
			o.Progress(int(d), total)
			mu.Unlock()
		}
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var next atomic.Int64
	var firstErr error
	var wg sync.WaitGroup
	for range min(workers, max(len(owned), 1)) {
		wg.Go(func() {
			for {
				j := int(next.Add(1)) - 1
				if j >= len(owned) {
					return
				}
				k := owned[j]
				ln := &lane{s: s, o: o, seed: s.FirstSeed + int64(k), budget: per, ctx: ctx, progress: progress}
				err := ln.search()
				res.Lanes[k] = ln.result()
				if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("seed %d: %w", ln.seed, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	res.reduce()
	res.Elapsed = time.Since(start)
	switch {
	case ctx.Err() != nil:
		res.Complete = false
		res.Incomplete = fmt.Sprintf("interrupted after %d of %d runs: %v", done.Load(), total, ctx.Err())
		return res, ctx.Err()
	case firstErr != nil:
		res.Complete = false
		res.Incomplete = "a run failed: " + firstErr.Error()
		return res, firstErr
	}
	return res, nil
}

// reduce computes Runs and Worst from the lanes, in seed order.
func (r *ExploreResult) reduce() {
	r.Runs = 0
	r.Worst = make([]Worst, len(r.Space.Metrics))
	for i, m := range r.Space.Metrics {
		r.Worst[i] = Worst{Metric: m}
	}
	r.Robust = make([]Robust, len(r.Space.Metrics))
	for i, m := range r.Space.Metrics {
		r.Robust[i] = Robust{Metric: m, Delta: RobustDelta, Count: isCount(m)}
	}
	for _, l := range r.Lanes {
		for i, x := range l.Robust {
			if i < len(r.Robust) && x.Found && (!r.Robust[i].Found || x.Floor > r.Robust[i].Floor) {
				r.Robust[i] = x
			}
		}
	}
	r.Skipped, r.SkipReasons = 0, nil
	for _, l := range r.Lanes {
		r.Skipped += l.Skipped
		r.SkipReasons = addReasons(r.SkipReasons, l.SkipReasons)
	}
	for _, l := range r.Lanes {
		r.Runs += l.Runs
		for i, w := range l.Worst {
			if i >= len(r.Worst) {
				break
			}
			unknown, why := r.Worst[i].Unknown+w.Unknown, r.Worst[i].Why
			if why == "" {
				why = w.Why
			}
			if w.worse(r.Worst[i]) {
				r.Worst[i] = w
			}
			r.Worst[i].Unknown, r.Worst[i].Why = unknown, why
		}
	}
}

// JSON is the result as result.json holds it: indented, byte-deterministic.
func (r *ExploreResult) JSON() ([]byte, error) { return indentJSON(r) }

// ReadExploreResult reads an explore result.json.
func ReadExploreResult(data []byte) (*ExploreResult, error) {
	var r ExploreResult
	if err := readJSON(data, "explore", &r, &r.Format); err != nil {
		return nil, err
	}
	return &r, nil
}

// MergeExplore combines the results of a search's shards: each lane is
// taken from the shard that owns it. Merge of all the shards equals the
// unsharded Explore byte for byte.
func MergeExplore(shards ...*ExploreResult) (*ExploreResult, error) {
	if len(shards) == 0 {
		return nil, errors.New("merge: no shard results")
	}
	parts := make([]shardPart, len(shards))
	for i, s := range shards {
		parts[i] = shardPart{key: s.Space, shard: s.Shard, complete: s.Complete, incomplete: s.Incomplete, size: len(s.Lanes)}
	}
	n, have, why, err := checkShards("search", "spaces", "seeds", len(shards[0].Lanes), parts)
	if err != nil {
		return nil, err
	}
	out := &ExploreResult{Format: FormatVersion, Space: shards[0].Space, Complete: true, Lanes: make([]Lane, len(shards[0].Lanes))}
	for k := range out.Lanes {
		if i, ok := have[k%n]; ok {
			out.Lanes[k] = shards[i].Lanes[k]
		} else {
			out.Lanes[k] = Lane{Seed: out.Space.FirstSeed + int64(k), Status: StatusNotRun}
		}
	}
	for _, i := range have {
		out.Elapsed += shards[i].Elapsed
	}
	out.reduce()
	if len(why) > 0 {
		out.Complete = false
		out.Incomplete = "merged: " + joinSemi(why)
	}
	return out, nil
}

// ---- one lane ----

// lane is one seed's search state.
type lane struct {
	s        Space
	o        ExploreOptions
	seed     int64
	budget   int
	ctx      context.Context
	progress func()

	runs   int
	limit  int                // the runs the current phase may reach
	done   map[string][]Worst // every schedule run, by key
	best   []Worst            // per metric
	robust []Robust           // per metric
	unk    []int
	why    []string
	ranked []scored // coarse results, for the alignment's starting points

	refused map[string]bool // schedules the validator refused, by key
	skipped map[string]int  // their reasons (refusedWhy), counted
}

type scored struct {
	x Schedule
	w []Worst
}

func (l *lane) result() Lane {
	ln := Lane{Seed: l.seed, Runs: l.runs, Worst: l.best, Robust: l.robust, Status: StatusDone, Skipped: len(l.refused)}
	for why, n := range l.skipped {
		ln.SkipReasons = append(ln.SkipReasons, SkipReason{Why: why, Count: n})
	}
	ln.SkipReasons = addReasons(nil, ln.SkipReasons)
	for i := range ln.Worst {
		ln.Worst[i].Unknown, ln.Worst[i].Why = l.unk[i], l.why[i]
	}
	switch {
	case l.ctx.Err() != nil && l.runs > 0:
		ln.Status = StatusPartial
	case l.ctx.Err() != nil:
		ln.Status = StatusNotRun
	}
	return ln
}

// errBudget ends a lane's search when its runs are spent.
var errBudget = errors.New("budget spent")

func (l *lane) search() error {
	l.done = map[string][]Worst{}
	l.refused, l.skipped = map[string]bool{}, map[string]int{}
	l.best = make([]Worst, len(l.s.Metrics))
	l.robust = make([]Robust, len(l.s.Metrics))
	for i, m := range l.s.Metrics {
		l.best[i] = Worst{Metric: m}
		l.robust[i] = Robust{Metric: m, Delta: RobustDelta, Count: isCount(m)}
	}
	// The last eighth of the budget is the robust pass's.
	reserve := min(max(l.budget/8, 16*len(l.s.Metrics)), l.budget/2)
	l.limit = l.budget - reserve
	l.unk, l.why = make([]int, len(l.s.Metrics)), make([]string, len(l.s.Metrics))
	err := l.phases()
	if errors.Is(err, errBudget) {
		err = nil
	}
	if err != nil {
		return err
	}
	// Each metric gets its share of what is left, in turn.
	for i := range l.best {
		l.limit = l.runs + (l.budget-l.runs)/(len(l.best)-i)
		if err := l.robustPass(i); err != nil && !errors.Is(err, errBudget) {
			return err
		}
	}
	l.limit = l.budget
	return nil
}

// followers is how many follower starts the search moves.
func (l *lane) followers() int {
	if l.s.FixedStarts {
		return 0
	}
	n := l.s.Base.Instances
	if n == 0 {
		n = 3
	}
	return min(n-1, 3)
}

func (l *lane) phases() error {
	nf, nv := len(l.s.Base.Faults), len(l.s.Vary)+l.followers()
	// Coarse: a third of the budget, half of it moving the schedule as a
	// whole (the faults keep their spacing), half every start and size on
	// its own (a Halton sequence: even cover, no clustering).
	coarse := max(l.budget/3, 8)
	whole := coarse
	if nf > 1 || nv > 0 {
		whole = coarse / 2
	}
	for k := range whole {
		x := l.schedule(func(d int) float64 {
			if d < nf {
				return (float64(k) + 0.5) / float64(whole) // the shift, every fault alike
			}
			return halton(k+1, primes[d%len(primes)])
		}, true)
		if err := l.eval(x, "coarse", true); err != nil {
			return err
		}
	}
	for k := range coarse - whole {
		x := l.schedule(func(d int) float64 { return halton(k+1, primes[d%len(primes)]) }, false)
		if err := l.eval(x, "coarse", true); err != nil {
			return err
		}
	}
	// Alignment: the coarse points that came closest to each metric's
	// bound, re-run with the call recorder, then faults started (and
	// healed) around each call's moments.
	if err := l.align(max(l.budget/3, 1)); err != nil {
		return err
	}
	// Refinement of each metric's best, with whatever budget is left.
	for round := 0; ; round++ {
		progress := false
		for i := range l.best {
			if !l.best[i].Found {
				continue
			}
			ok, err := l.refine(i)
			if err != nil {
				return err
			}
			progress = progress || ok
		}
		if !progress || round > 8 {
			break
		}
	}
	// Spend what is left on more coarse points (a finer cover).
	for k := coarse; ; k++ {
		x := l.schedule(func(d int) float64 { return halton(k+1, primes[d%len(primes)]) }, false)
		if err := l.eval(x, "coarse", false); err != nil {
			return err
		}
	}
}

// schedule builds a schedule from a point of the unit cube: dimension d <
// len(faults) is fault d's start in its window, then one per Range. With
// whole, every fault takes dimension 0's shift.
func (l *lane) schedule(u func(d int) float64, whole bool) Schedule {
	nf := len(l.s.Base.Faults)
	x := Schedule{Seed: l.seed, At: make([]time.Duration, nf)}
	for i, f := range l.s.Base.Faults {
		d := i
		if whole {
			d = 0
		}
		x.At[i] = l.startAt(f.At, u(d))
	}
	for k, r := range l.s.Vary {
		x.Sizes = append(x.Sizes, r.at(u(nf+k)))
	}
	if nfol := l.followers(); nfol > 0 {
		x.Starts = make([]time.Duration, nfol+1)
		for k := range nfol {
			x.Starts[k+1] = l.followerStart(u(nf + len(l.s.Vary) + k))
		}
	}
	return x
}

// followerStart is a follower's start a fraction v into [0, Wait).
func (l *lane) followerStart(v float64) time.Duration {
	wait := l.s.Base.Params.WithDefaults().Wait
	return time.Duration(min(max(v, 0), 1) * float64(wait-time.Microsecond)).Round(time.Microsecond)
}

// wrapStart moves a follower's start into [0, Wait) modulo Wait: a
// follower tries every Wait from its start, so its phase is circular, and a
// search step past either end must come back at the other. Clamped, a
// search stopped at the end: clock-drift's worst gap needs both followers'
// attempts just before the key's expiry, which its refinement reached only
// by moving a start from 6 s (the cap) on to 6.5 s ≡ 0.5 s (found 5.498 s of
// the 6 s bound; wrapped, 5.998 s).
func wrapStart(t, wait time.Duration) time.Duration {
	t %= wait
	if t < 0 {
		t += wait
	}
	return t
}

// startAt is a start a fraction v into the window around base.
func (l *lane) startAt(base time.Duration, v float64) time.Duration {
	lo := max(base-l.s.Window/2, minFaultAt)
	return (lo + time.Duration(v*float64(l.s.Window))).Round(time.Microsecond)
}

// inWindow clamps a start into its fault's window.
func (l *lane) inWindow(i int, t time.Duration) time.Duration {
	base := l.s.Base.Faults[i].At
	lo := max(base-l.s.Window/2, minFaultAt)
	return min(max(t, lo), lo+l.s.Window)
}

var primes = []int{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}

// halton is the k-th element of the van der Corput sequence in base b.
func halton(k, b int) float64 {
	f, r := 1.0, 0.0
	for k > 0 {
		f /= float64(b)
		r += f * float64(k%b)
		k /= b
	}
	return r
}

// eval runs a schedule (once: a repeat costs nothing) and keeps it if it
// is a metric's new worst. keep adds it to the coarse ranking.
func (l *lane) eval(x Schedule, phase string, keep bool) error {
	_, err := l.evalWith(x, phase, keep, nil)
	return err
}

// evalWith is eval that also returns whether the run improved a metric,
// and records the run's calls into onCall when given (even if the
// schedule ran before).
func (l *lane) evalWith(x Schedule, phase string, keep bool, onCall func(virtual.CallEvent)) (bool, error) {
	k := x.key()
	if _, ok := l.done[k]; (ok && onCall == nil) || l.refused[k] {
		return false, nil
	}
	if l.ctx.Err() != nil {
		return false, l.ctx.Err()
	}
	if l.runs >= l.limit {
		return false, errBudget
	}
	ws, err := l.run(x, onCall)
	if why, ok := refusedWhy(err); ok {
		// A mutant the validator refuses is not a run: skip it and search
		// on, but not forever when (nearly) every point is refused.
		l.refused[k] = true
		l.skipped[why]++
		if len(l.refused) > maxSkipsPerRun*max(l.budget, 1) {
			return false, errBudget
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	l.done[k] = ws
	l.runs++
	l.progress()
	improved := false
	for i := range ws {
		ws[i].Phase = phase
		if ws[i].Unknown > 0 {
			l.unk[i]++
			if l.why[i] == "" {
				l.why[i] = ws[i].Why
			}
		}
		ws[i].Unknown, ws[i].Why = 0, ""
		if ws[i].worse(l.best[i]) {
			l.best[i] = ws[i]
			improved = true
		}
	}
	if keep {
		l.ranked = append(l.ranked, scored{x, ws})
	}
	return improved, nil
}

// maxSkipsPerRun bounds the refused schedules a lane skips, per run of
// its budget, before it ends its search: a space most of whose points the
// validator refuses would otherwise search forever for runnable ones.
const maxSkipsPerRun = 8

// SkipReason is why the validator refused schedules, and how many.
type SkipReason struct {
	Why   string `json:"why"`
	Count int    `json:"count"`
}

// durationText matches the durations in a validation message, which
// differ from one refused schedule to the next.
var durationText = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m|h)(\d+(\.\d+)?(ns|µs|us|ms|s|m|h))*\b`)

// refusedWhy reports whether err is the validator's refusal of a schedule
// and, if so, its first problem with the durations left out ("faults[1]:
// is due at …, while the failover faults[0] holds the schedule …"), which
// groups the refusals of one kind.
func refusedWhy(err error) (string, bool) {
	var ve *model.ValidationError
	if !errors.As(err, &ve) || len(ve.Problems) == 0 {
		return "", false
	}
	p := ve.Problems[0]
	why := durationText.ReplaceAllString(p.Msg, "…")
	if p.Field != "" {
		why = p.Field + ": " + why
	}
	return why, true
}

// addReasons adds b's counts to a's and sorts them, most frequent first
// (then by reason, for a deterministic order).
func addReasons(a, b []SkipReason) []SkipReason {
	out := slices.Clone(a)
	for _, r := range b {
		if k := slices.IndexFunc(out, func(x SkipReason) bool { return x.Why == r.Why }); k >= 0 {
			out[k].Count += r.Count
		} else {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(x, y SkipReason) int {
		if x.Count != y.Count {
			return y.Count - x.Count
		}
		return strings.Compare(x.Why, y.Why)
	})
	return out
}

// run runs one schedule and judges each metric against its bound.
func (l *lane) run(x Schedule, onCall func(virtual.CallEvent)) ([]Worst, error) {
	sc, err := l.s.Scenario(x)
	if err != nil {
		return nil, err
	}
	sc.Expect = nil
	for _, m := range l.s.Metrics {
		if isCount(m) {
			sc.Expect = append(sc.Expect, countExpectation(m))
			continue
		}
		// A nanosecond of slack: the check's limit is then the bound itself.
		sc.Expect = append(sc.Expect, model.Expectation{Metric: model.Metric(m), Max: "predicted", Slack: time.Nanosecond})
	}
	vo := l.o.Virtual
	vo.OnCall = onCall
	r, err := virtual.Run(sc, vo)
	if err != nil {
		return nil, err
	}
	if l.o.Predict != nil {
		eff := r.Scenario.Scaled()
		eff.Params = r.Params
		r.Predictions = l.o.Predict(r.Params, bounds.AppliedFaultSize(eff, r.Analysis))
		r.Evaluation = verdict.Evaluate(eff, r.Analysis, r.Predictions)
	}
	return judge(l.s, x, r), nil
}

// judge reads each metric's check of a run.
func judge(s Space, x Schedule, r *verdict.Result) []Worst {
	out := make([]Worst, len(s.Metrics))
	applied := map[string]bool{}
	for _, f := range r.Analysis.Faults {
		if f.Mode != "" {
			applied[f.Mode] = true
		}
	}
	for i, m := range s.Metrics {
		w := Worst{Metric: m, Schedule: x}
		var c *model.Check
		for k := range r.Checks {
			if r.Checks[k].Metric == model.Metric(m) {
				c = &r.Checks[k]
				break
			}
		}
		switch {
		case c == nil:
			w.Unknown, w.Why = 1, "no check"
		case c.Count:
			judgeCount(&w, c, r)
		case c.Verdict == model.Unknown || c.NotMeasured:
			// The check's own slack (a nanosecond) says nothing to a reader.
			w.Unknown, w.Why = 1, strings.ReplaceAll(c.Detail, " + slack 1ns", "")
			w.NotMeasured = c.NotMeasured
		default:
			w.Found = true
			w.Measured, w.Open = c.Measured, c.Open
			w.Predicted = c.Max - time.Nanosecond
			w.Formula, w.Modes = formulaOf(c, r, applied)
			if w.Predicted > 0 && w.Predicted != model.Unbounded {
				w.Ratio = math.Round(float64(w.Measured)/float64(w.Predicted)*1e4) / 1e4
			}
			w.Violated = w.Predicted != model.Unbounded && (w.Measured > w.Predicted+s.Tolerance || (c.Open && w.Measured > w.Predicted))
		}
		out[i] = w
	}
	return out
}

// formulaOf is the formula behind a metric's bound, as the check derived
// it (model.Check.Formula), and the applied modes a prediction was taken
// for.
func formulaOf(c *model.Check, r *verdict.Result, applied map[string]bool) (string, []string) {
	var modes []string
	for _, p := range r.Predictions {
		if applied[p.Mode] {
			modes = append(modes, p.Mode)
		}
	}
	return c.Formula, modes
}

// anchorOffsets are where a fault's start (or heal) goes around a call's
// moment, in the order tried: inside the one-way hop (50µs) after it
// first (a partition that catches a command on the wire), then either
// side out to a few hundred µs.
var anchorOffsets = []time.Duration{
	10 * time.Microsecond, 25 * time.Microsecond, 40 * time.Microsecond, 2 * time.Microsecond, -2 * time.Microsecond,
	60 * time.Microsecond, 0, -10 * time.Microsecond, 100 * time.Microsecond, -25 * time.Microsecond, -40 * time.Microsecond,
	-60 * time.Microsecond, 200 * time.Microsecond, -100 * time.Microsecond, 400 * time.Microsecond, -200 * time.Microsecond,
	-400 * time.Microsecond,
}

// anchor is one place to align to: a schedule, the fault whose start (or,
// heal >= 0, whose length, Vary[heal]) moves, and a call's moment.
type anchor struct {
	x      Schedule
	fault  int
	heal   int
	moment time.Duration
}

// align re-runs the coarse points that came closest to each metric's bound
// with the call recorder, and tries each fault's start (and its heal, when
// a size varies its length) around every moment of every elector call in
// its window, one offset at a time over every anchor (breadth first: the
// budget may not cover them all).
func (l *lane) align(budget int) error {
	stop := l.runs + budget
	var starts []Schedule
	have := map[string]bool{}
	for i := range l.s.Metrics {
		ranked := slices.Clone(l.ranked)
		slices.SortStableFunc(ranked, func(a, b scored) int {
			switch {
			case a.w[i].worse(b.w[i]):
				return -1
			case b.w[i].worse(a.w[i]):
				return 1
			}
			return 0
		})
		for _, r := range ranked[:min(3, len(ranked))] {
			if k := r.x.key(); !have[k] {
				have[k] = true
				starts = append(starts, r.x)
			}
		}
	}
	scale := l.s.Base.TimeScale
	if scale == 0 {
		scale = 1
	}
	var anchors []anchor
	for _, x := range starts {
		var moments []time.Duration
		if _, err := l.evalWith(x, "aligned", false, func(e virtual.CallEvent) {
			moments = append(moments, time.Duration(float64(e.At)/scale))
		}); err != nil {
			return err
		}
		slices.Sort(moments)
		moments = slices.Compact(moments)
		for i, f := range l.s.Base.Faults {
			lo := max(f.At-l.s.Window/2, minFaultAt) - time.Millisecond
			hi := lo + l.s.Window + 2*time.Millisecond
			for _, m := range moments {
				if m >= lo && m <= hi {
					anchors = append(anchors, anchor{x: x, fault: i, heal: -1, moment: m})
				}
			}
			if f.Instant() {
				continue
			}
			for k, r := range l.s.Vary {
				if r.Param != ParamFor && !((r.Param == ParamPartition || r.Param == ParamPause) && sizes(r.Param, f)) {
					continue
				}
				for _, m := range moments {
					if m > x.At[i] {
						anchors = append(anchors, anchor{x: x, fault: i, heal: k, moment: m})
					}
				}
			}
		}
	}
	for _, off := range anchorOffsets {
		for _, a := range anchors {
			y := a.x
			if a.heal < 0 {
				y.At = slices.Clone(a.x.At)
				y.At[a.fault] = l.inWindow(a.fault, a.moment+off)
			} else {
				r := l.s.Vary[a.heal]
				rlo, _ := time.ParseDuration(r.Lo)
				rhi, _ := time.ParseDuration(r.Hi)
				d := (a.moment + off - a.x.At[a.fault]).Round(time.Microsecond)
				if d < rlo || d > rhi {
					continue
				}
				y.Sizes = slices.Clone(a.x.Sizes)
				y.Sizes[a.heal] = d.String()
			}
			if l.runs >= stop {
				return nil
			}
			if err := l.eval(y, "aligned", false); err != nil {
				return err
			}
		}
	}
	return nil
}

// refine runs a pattern search around metric i's best: each fault's start
// and each size moved by ± a step, the step halved when nothing improves,
// down to 1µs (a bisection of the edge the best lies on). It reports
// whether it improved the best.
func (l *lane) refine(i int) (bool, error) {
	nf, nv := len(l.s.Base.Faults), len(l.s.Vary)
	dims := nf + nv + l.followers()
	steps := make([]float64, dims) // in units of the dimension's span
	for d := range steps {
		steps[d] = 1.0 / 64
	}
	minStart := float64(time.Microsecond) / float64(max(l.s.Window, time.Microsecond))
	improvedAny := false
	for {
		cur := l.best[i].Schedule
		moved := false
		for d := range dims {
			for _, sign := range []float64{+1, -1} {
				y := cur
				if d < nf {
					y.At = slices.Clone(cur.At)
					delta := time.Duration(sign * steps[d] * float64(l.s.Window)).Round(time.Microsecond)
					if delta == 0 {
						delta = time.Duration(sign) * time.Microsecond
					}
					y.At[d] = l.inWindow(d, cur.At[d]+delta)
				} else if d < nf+nv {
					r := l.s.Vary[d-nf]
					y.Sizes = slices.Clone(cur.Sizes)
					y.Sizes[d-nf] = r.at(r.frac(cur.Sizes[d-nf]) + sign*steps[d])
				} else {
					k := d - nf - nv + 1
					wait := l.s.Base.Params.WithDefaults().Wait
					y.Starts = slices.Clone(cur.Starts)
					delta := time.Duration(sign * steps[d] * float64(wait)).Round(time.Microsecond)
					if delta == 0 {
						delta = time.Duration(sign) * time.Microsecond
					}
					y.Starts[k] = wrapStart(cur.Starts[k]+delta, wait)
				}
				ok, err := l.evalWith(y, "refined", false, nil)
				if err != nil {
					return improvedAny, err
				}
				if ok && l.best[i].Schedule.key() == y.key() {
					moved, improvedAny = true, true
					break
				}
			}
		}
		if moved {
			continue
		}
		smallest := true
		for d := range steps {
			limit := minStart
			if d >= nf && d < nf+nv {
				limit = 1e-4
			}
			if steps[d] > limit {
				steps[d] /= 2
				smallest = false
			}
		}
		if smallest {
			return improvedAny, nil
		}
	}
}

// value is the metric i of schedule x, run if it has not been; ran is
// false for a schedule the validator refuses (it is not in the space).
func (l *lane) value(x Schedule, i int) (v time.Duration, ran bool, err error) {
	if _, err := l.evalWith(x, "robust", false, nil); err != nil {
		return 0, false, err
	}
	ws, ok := l.done[x.key()]
	if !ok {
		return 0, false, nil
	}
	if !ws[i].Found {
		return 0, true, nil
	}
	return ws[i].Measured, true, nil
}

// moves are the schedules one start away from x by ±d: each fault's start
// and each follower's start.
func (l *lane) moves(x Schedule, d time.Duration) []Schedule {
	var out []Schedule
	for j := range x.At {
		for _, s := range []time.Duration{-d, d} {
			y := x
			y.At = slices.Clone(x.At)
			y.At[j] = l.inWindow(j, x.At[j]+s)
			out = append(out, y)
		}
	}
	wait := l.s.Base.Params.WithDefaults().Wait
	for k := 1; k < len(x.Starts); k++ {
		for _, s := range []time.Duration{-d, d} {
			y := x
			y.Starts = slices.Clone(x.Starts)
			y.Starts[k] = wrapStart(x.Starts[k]+s, wait)
			out = append(out, y)
		}
	}
	return out
}

// floor is the least of metric i over x and its moves by ±RobustDelta
// that the validator accepts; 0 for a schedule it refuses.
func (l *lane) floor(x Schedule, i int) (time.Duration, error) {
	v, ran, err := l.value(x, i)
	if err != nil || !ran {
		return 0, err
	}
	for _, y := range l.moves(x, RobustDelta) {
		w, ran, err := l.value(y, i)
		if err != nil {
			return 0, err
		}
		if ran {
			v = min(v, w)
		}
	}
	return v, nil
}

// robustPass looks near metric i's worst for the schedule whose floor is
// highest: a pattern search over the starts, steps from 40ms down to 1ms.
func (l *lane) robustPass(i int) error {
	if !l.best[i].Found || l.best[i].Measured <= 0 {
		return nil
	}
	cur := l.best[i].Schedule
	f, err := l.floor(cur, i)
	if err != nil {
		return err
	}
	keep := func() {
		m, _, _ := l.value(cur, i)
		l.robust[i] = Robust{Metric: l.s.Metrics[i], Schedule: cur, Measured: m, Floor: f, Delta: RobustDelta, Found: true, Count: isCount(l.s.Metrics[i])}
	}
	if f > 0 {
		keep()
	}
	for _, step := range []time.Duration{40 * time.Millisecond, 20 * time.Millisecond, 10 * time.Millisecond, 5 * time.Millisecond, 2 * time.Millisecond, time.Millisecond} {
		for moved := true; moved; {
			moved = false
			for _, y := range l.moves(cur, step) {
				g, err := l.floor(y, i)
				if err != nil {
					return err
				}
				if g > f {
					cur, f, moved = y, g, true
					keep()
					break
				}
			}
		}
	}
	return nil
}
