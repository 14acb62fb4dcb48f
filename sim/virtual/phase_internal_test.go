package virtual

import (
	"github.com/leaselab/leaselab/model/bounds"

	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
)

// phaseFine makes TestPhaseSearchBuiltins search as the bounds table in
// docs/bounds.md was measured: a 1 ms grid over the window, 2 µs steps
// within ±300 µs of every call, 60 start spreads. The default is coarser,
// to keep the test short under -race.
var phaseFine = flag.Bool("phase.fine", false, "phase search: 1 ms grid and 2 µs steps around every call (slow)")

// phaseWorst is the worst a phase search measured on one "predicted"
// metric: the largest value, the bound at that phase, the first fault's
// start that gave it, and the largest measured / bound ratio.
type phaseWorst struct {
	measured, bound, at time.Duration
	ratio               float64
	violated            bool
	violation           string
}

// phaseSearch moves sc's whole fault schedule so that its first fault
// starts at each candidate time and runs it, and returns per "predicted"
// metric the worst measurement against its bound. Candidates: a grid of
// step over [at0 - one renewal interval, at0 + Wait], where at0 is the
// first fault's start, and fine steps within ±near of every call the
// instances start in that window in a fault-free run (a partition a hop
// after a renewal's send is another case than one between calls); then,
// around each metric's worst start, steps spreads of the instances' starts
// over a Wait. A value above its bound by more than tol is a violation.
func phaseSearch(t *testing.T, sc model.Scenario, step, fine, near, tol time.Duration, steps int) map[string]*phaseWorst {
	t.Helper()
	eff := effective(t, sc)
	at0 := eff.Faults[0].At
	for _, f := range eff.Faults {
		at0 = min(at0, f.At)
	}
	renew := eff.Params.TTL/2 + eff.Params.Jitter()
	from, to := max(at0-renew, 0), at0+eff.Params.Wait
	var cands []time.Duration
	for a := from; a <= to; a += step {
		cands = append(cands, a)
	}
	for _, s := range callStarts(t, eff) {
		if s < from-near || s > to+near {
			continue
		}
		for d := -near; d <= near; d += fine {
			if a := s + d; a >= 0 {
				cands = append(cands, a)
			}
		}
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	out := map[string]*phaseWorst{}
	scale := sc.TimeScale
	if scale == 0 {
		scale = 1
	}
	try := func(a time.Duration, o Options) {
		c := shifted(sc, time.Duration(float64(a)/scale))
		res, err := Run(c, o)
		if err != nil {
			t.Fatalf("%s at %v: %v", sc.Name, a, err)
		}
		for _, ch := range res.Evaluation.Checks {
			if !strings.HasSuffix(ch.Limit, "predicted") || ch.Verdict == model.Unknown || ch.Max == model.Unbounded {
				continue
			}
			bound := ch.Max - bounds.DefaultSlack
			w := out[string(ch.Metric)]
			if w == nil {
				w = &phaseWorst{}
				out[string(ch.Metric)] = w
			}
			if ch.Measured > w.measured || w.at == 0 {
				w.measured, w.bound, w.at = max(ch.Measured, w.measured), bound, a
			}
			if bound > 0 {
				w.ratio = max(w.ratio, float64(ch.Measured)/float64(bound))
			}
			if ch.Measured > bound+tol && !w.violated {
				w.violated = true
				w.violation = fmt.Sprintf("first fault at %v (start step %v, seed %d): %s measured %v > bound %v (%s)", a, o.StartStep, sc.Seed, ch.Metric, ch.Measured, bound, ch.Detail)
			}
		}
	}
	for _, a := range cands {
		try(a, Options{})
	}
	// The followers' phase: where their attempts fall against the key's
	// expiry decides how much of an overlap or gap bound a run can reach.
	// Around each metric's worst start, spread the instances' starts
	// (Options.StartStep) over a Wait.
	best := map[time.Duration]bool{}
	for _, w := range out {
		best[w.at] = true
	}
	for a := range best {
		for k := 1; k <= steps; k++ {
			o := Options{StartStep: time.Duration(k) * eff.Params.Wait / time.Duration(steps+1)}
			for d := -near; d <= near; d += near / 3 {
				if a+d >= 0 {
					try(a+d, o)
				}
			}
		}
	}
	return out
}

// effective is sc as the backend runs it.
func effective(t *testing.T, sc model.Scenario) model.Scenario {
	t.Helper()
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	sc.Faults = slices.Clone(sc.Faults)
	return sc.WithDefaults().Scaled()
}

// callStarts are the moments the instances start a renewal or an acquire
// in a fault-free run of sc (effective), in time order.
func callStarts(t *testing.T, eff model.Scenario) []time.Duration {
	t.Helper()
	quiet := eff
	quiet.Faults, quiet.Expect = nil, nil
	quiet.Params.Client.SharedPool = false
	w := newWorld(quiet, Options{}.withDefaults())
	w.simulate()
	var out []time.Duration
	for _, c := range w.calls {
		if c.op == election.OpRenew || c.op == election.OpAcquire {
			out = append(out, c.sent)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// shifted is sc with its whole fault schedule moved so that the first
// fault starts at at (unscaled), the phase stretched to hold it.
func shifted(sc model.Scenario, at time.Duration) model.Scenario {
	sc.Faults = slices.Clone(sc.Faults)
	first := sc.Faults[0].At
	for _, f := range sc.Faults {
		first = min(first, f.At)
	}
	dur := sc.Duration
	if dur == 0 {
		dur = 30 * time.Second
	}
	for i := range sc.Faults {
		sc.Faults[i].At += at - first
		f := sc.Faults[i]
		dur = max(dur, f.At+f.For+f.Lag+time.Millisecond)
	}
	sc.Duration = dur
	return sc
}

// Every built-in's "predicted" limits hold wherever its fault schedule
// starts, within a hop of any call included, and the worst case found
// reaches most of the bound (logged: the ratios of docs/bounds.md).
func TestPhaseSearchBuiltins(t *testing.T) {
	step, fine, near, steps := 10*time.Millisecond, 10*time.Microsecond, 300*time.Microsecond, 8
	if *phaseFine {
		step, fine, near, steps = time.Millisecond, 2*time.Microsecond, 300*time.Microsecond, 60
	}
	for _, e := range scenarios.Builtin() {
		sc := e.Scenario.AsElector()
		if Refuses(sc) != nil || len(sc.Faults) == 0 || !slices.ContainsFunc(sc.Expect, func(x model.Expectation) bool { return x.Max == "predicted" }) {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			for metric, w := range phaseSearch(t, sc, step, fine, near, time.Millisecond, steps) {
				t.Logf("%s %s worst %v bound %v ratio %.3f (first fault at %v)", e.Name, metric, w.measured.Round(time.Millisecond), w.bound.Round(time.Millisecond), w.ratio, w.at)
				if w.violated {
					t.Errorf("bound violated: %s", w.violation)
				}
			}
		})
	}
}
