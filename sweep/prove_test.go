package sweep

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

// proveBuiltins are single-fault elector built-ins the trust tests walk:
// the cheapest few of each kind, and a drifting clock (CI runs them under
// -race).
var proveBuiltins = []string{"partition-blackhole", "partition-reset", "redis-restart", "suspend", "clock-drift"}

// TestProveInteriorPoints: random interior points of every segment take
// the segment's recorded path, with every comparison's operands where the
// coefficients derived at its start put them (Prove fails with
// ErrPathMismatch otherwise), and no metric rises above both ends.
func TestProveInteriorPoints(t *testing.T) {
	for _, name := range proveBuiltins {
		res, err := Prove(context.Background(), ProveSpace{Base: builtinScenario(t, name)}, ProveOptions{Interior: 4})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.Complete || res.Segments < 10 {
			t.Errorf("%s: %d segments, complete %v (%s): want a complete walk of many", name, res.Segments, res.Complete, res.Incomplete)
		}
	}
}

// TestProveNeverBelowSearch: on the same range (the fault's start over
// explore's window, the followers' starts fixed, one seed), neither a
// dense scan nor chaos explore's search finds a worse schedule than the
// proven worst, and every witness replays to its value.
func TestProveNeverBelowSearch(t *testing.T) {
	for _, name := range proveBuiltins {
		sc := builtinScenario(t, name)
		res, err := Prove(context.Background(), ProveSpace{Base: sc}, ProveOptions{Interior: -1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		scanNeverAbove(t, name, res, 150)
		ex, err := Explore(context.Background(), Space{Base: sc, Metrics: res.Space.Metrics, Seeds: 1, FirstSeed: res.Space.Seed, Budget: 300, FixedStarts: true}, ExploreOptions{Workers: 1})
		if err != nil {
			t.Fatalf("%s: explore: %v", name, err)
		}
		for i, w := range ex.Worst {
			if w.Found && w.Measured > res.Proofs[i].Worst {
				t.Errorf("%s: explore finds %s %v at %v, above the proven worst %v", name, w.Metric, w.Measured, w.Schedule.At, res.Proofs[i].Worst)
			}
			t.Logf("%s %s: proven %v (%s, %d segments), explore %v", name, w.Metric, res.Proofs[i].Worst, res.Proofs[i].Verdict, res.Segments, w.Measured)
		}
		for _, pr := range res.Proofs {
			if pr.Verdict != VerdictNone && pr.Replayed != pr.Worst {
				t.Errorf("%s %s: replayed %v, proven %v", name, pr.Metric, pr.Replayed, pr.Worst)
			}
		}
	}
}

// TestProveTightStale: stale leadership depends only on the leader's own
// timing, and docs/bounds.md has its bound tight at any phase: the proven
// worst reaches it, less the seed's jitter (≤ 5 ms) and backoff draws, and
// never exceeds it.
func TestProveTightStale(t *testing.T) {
	for _, c := range []struct {
		name string
		min  float64
	}{{"partition-blackhole", 0.995}, {"suspend", 0.999}} {
		res, err := Prove(context.Background(), ProveSpace{Base: builtinScenario(t, c.name), Metrics: []string{"stale_leadership"}}, ProveOptions{Interior: -1})
		if err != nil {
			t.Fatal(err)
		}
		pr := res.Proofs[0]
		if pr.Verdict != VerdictProven || float64(pr.Worst) < c.min*float64(pr.Bound) {
			t.Errorf("%s: stale %v of %v (%s): want proven, at least %.3f of the bound", c.name, pr.Worst, pr.Bound, pr.Verdict, c.min)
		}
	}
}

// TestProveRefuses: what Prove does not prove is refused, naming why.
func TestProveRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*ProveSpace)
		want string
	}{
		{"clock-drift", func(s *ProveSpace) { s.Base.Faults[0].Rate = 0.99 }, "clock rate faults[0] (clock) 0.99 = 99/100"},
		{"flapping-network", func(s *ProveSpace) { s.Vary = []Range{{Param: "at5", Lo: "1s", Hi: "2s"}} }, "5 faults (faults[0] to faults[4])"},
		{"script-flush", func(s *ProveSpace) { s.Vary = []Range{{Param: "for1", Lo: "1s", Hi: "2s"}} }, "faults[1] (script-flush) is instant"},
		{"flapping-network", func(s *ProveSpace) {
			s.Vary = []Range{{Param: "at", Lo: "1s", Hi: "2s"}, {Param: "at0", Lo: "3s", Hi: "4s"}}
		}, "both move faults[0]'s at"},
		{"leader-crash", nil, "runner mode"},
		{"partition-blackhole", func(s *ProveSpace) { s.Metrics = []string{"heal_to_stable"} }, "max_overlap, max_gap, stale_leadership, failover"},
		{"partition-blackhole", func(s *ProveSpace) { s.Vary = []Range{{Param: "latency", Lo: "1s", Hi: "2s"}} }, "vary latency"},
		{"partition-blackhole", func(s *ProveSpace) { s.Vary = []Range{{Param: "start3", Lo: "0s", Hi: "2s"}} }, "3 instances"},
		{"partition-blackhole", func(s *ProveSpace) {
			s.Vary = []Range{{Param: "at", Lo: "1s", Hi: "2s"}, {Param: "at", Lo: "3s", Hi: "4s"}}
		}, "twice"},
		{"partition-blackhole", func(s *ProveSpace) {
			s.Vary = []Range{{Param: "at", Lo: "1s", Hi: "2s"}, {Param: "for", Lo: "3s", Hi: "4s"}, {Param: "start1", Lo: "0s", Hi: "1s"}, {Param: "start2", Lo: "0s", Hi: "1s"}, {Param: "start0", Lo: "0s", Hi: "1s"}}
		}, "5 axes: prove walks one axis or a box of up to 4"},
		{"partition-blackhole", func(s *ProveSpace) {
			s.Vary = []Range{{Param: "at", Lo: "1s", Hi: "2s"}, {Param: "start1", Lo: "3s", Hi: "4s"}, {Param: "start1", Lo: "0s", Hi: "1s"}}
		}, "vary start1 twice"},
		{"clock-drift", func(s *ProveSpace) {
			s.Vary = []Range{{Param: "at", Lo: "1s", Hi: "2s"}, {Param: "for", Lo: "3s", Hi: "4s"}, {Param: "start1", Lo: "0s", Hi: "1s"}}
		}, "3 axes with a drifting clock"},
		{"redis-restart", func(s *ProveSpace) {
			s.Vary = []Range{{Param: "at", Lo: "1s", Hi: "2s"}, {Param: "for", Lo: "3s", Hi: "4s"}}
		}, "instant"},
	} {
		s := ProveSpace{Base: builtinScenario(t, c.name)}
		if c.edit != nil {
			c.edit(&s)
		}
		_, err := Prove(context.Background(), s, ProveOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal naming %q", c.name, err, c.want)
		}
	}
	for _, bad := range []string{"pause=1s..2s", "atx=1s..2s", "at1234=1s..2s", "start=1s..2s", "start01=1s..2s", "at00=1s..2s"} {
		if _, err := ParseProveRange(bad); err == nil {
			t.Errorf("ParseProveRange accepts %s", bad)
		}
	}
	for _, good := range []string{"at=1s..2s", "at3=1s..2s", "for12=1s..2s", "start2=1s..2s"} {
		if _, err := ParseProveRange(good); err != nil {
			t.Errorf("ParseProveRange(%s): %v", good, err)
		}
	}
	if r, err := ParseProveRange("for=1s..14s"); err != nil || r.Lo != "1s" || r.Hi != "14s" {
		t.Errorf("ParseProveRange(for=1s..14s) = %+v, %v", r, err)
	}
}

// TestProveSegmentLimit: a walk stopped by its limit says how far it got
// and gives no verdict it has not earned.
func TestProveSegmentLimit(t *testing.T) {
	res, err := Prove(context.Background(), ProveSpace{Base: builtinScenario(t, "partition-blackhole"), MaxSegments: 5}, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || !strings.Contains(res.Incomplete, "after 5 segments") || res.Reached >= res.Hi {
		t.Fatalf("complete %v, %q, reached %v: want incomplete after 5 segments", res.Complete, res.Incomplete, res.Reached)
	}
	for _, pr := range res.Proofs {
		if pr.Verdict == VerdictProven {
			t.Errorf("%s: proven by an incomplete walk", pr.Metric)
		}
	}
	if errors.Is(err, ErrPathMismatch) {
		t.Fatal(err)
	}
}

// TestProveFindsWeakenedBounds: bounds as they were before a fix (explore's
// classes of TestExploreFindsWeakenedBounds that one fault along one axis
// can show) get a counterexample, exceeding the old bound, whose witness
// file replays it.
func TestProveFindsWeakenedBounds(t *testing.T) {
	old := weakened(model.ModePartitionBlackhole, func(p model.Params, _ model.FaultSize, pr *bounds.Prediction) {
		pr.MaxGap, pr.GapFormula = oldBlackholeGap(p), "pre-fix: max(0, TTL/2 + Wait - Cmin)"
	})
	for _, c := range []struct {
		builtin string
		mutate  func(*model.Scenario)
		vary    []Range
	}{
		{builtin: "partition-blackhole-tuned"},
		{builtin: "partition-blackhole", mutate: func(sc *model.Scenario) { sc.Params.Client.MaxRetries = -1 },
			vary: []Range{{Param: ParamFor, Lo: "500ms", Hi: "2s"}}},
	} {
		base := builtinScenario(t, c.builtin)
		if c.mutate != nil {
			c.mutate(&base)
		}
		res, err := Prove(context.Background(), ProveSpace{Base: base, Metrics: []string{exGap}, Vary: c.vary}, ProveOptions{Predict: old})
		if err != nil {
			t.Fatalf("%s: %v", c.builtin, err)
		}
		pr := res.Proofs[0]
		if pr.Verdict != VerdictCounterexample || pr.Excess <= 0 {
			t.Fatalf("%s: %+v: want a counterexample to the old gap bound", c.builtin, pr)
		}
		sc := res.WitnessScenario(pr)
		r, err := virtual.Run(sc, virtual.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := judge(Space{Metrics: []string{exGap}}, Schedule{}, r)[0].Measured; got != pr.Bound+pr.Excess {
			t.Errorf("%s: the witness measures gap %v, want %v", c.builtin, got, pr.Bound+pr.Excess)
		}
		t.Logf("%s: gap %v over %s=%v..%v exceeds the old bound %v by %v at %v (%d segments)", c.builtin, pr.Worst, res.Axis, res.Lo, res.Hi, pr.Bound, pr.Excess, pr.ExcessAt, res.Segments)
	}
}

// TestProveFollowerPhase: along a follower's start, where its attempts
// fall against the key's expiry, partition-blackhole's overlap comes
// within the seed's jitter and backoff draws of its bound (the overlap
// needs a follower attempt at the instant the key expires: the file's
// phase gives 6.548 s), proven, and a scan of the range never beats it.
func TestProveFollowerPhase(t *testing.T) {
	s := ProveSpace{Base: builtinScenario(t, "partition-blackhole"), Metrics: []string{exOverlap},
		Vary: []Range{{Param: "start1", Lo: "3.9s", Hi: "4.1s"}}}
	res, err := Prove(context.Background(), s, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pr := res.Proofs[0]
	if pr.Verdict != VerdictProven || float64(pr.Worst) < 0.995*float64(pr.Bound) {
		t.Fatalf("overlap %v of %v (%s) over start1: want proven, within 0.5%% of the bound", pr.Worst, pr.Bound, pr.Verdict)
	}
	p := &prover{s: res.Space, axis: res.Axis}
	for k := 0; k <= 40; k++ {
		x := res.Lo + (res.Hi-res.Lo)*time.Duration(k)/40
		r, err := virtual.Run(p.scenario(x), virtual.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if w := judge(Space{Metrics: res.Space.Metrics}, Schedule{}, r)[0]; w.Measured > pr.Worst {
			t.Errorf("start1=%v: overlap %v above the proven %v", x, w.Measured, pr.Worst)
		}
	}
	t.Logf("overlap %v at start1=%v of %v, %d segments", pr.Worst, pr.At, pr.Bound, res.Segments)
}

// TestProveSafeMode: the safe-mode built-ins, whose guard's comparisons
// the shell records (the validity left at a reply, renewIn's max, the
// call's deadline against the op timeout), are proven: no overlap, no
// stale leadership, the gap within its bound; interior points take their
// segment's path; the full order proves the same worst values; and a
// scan of the range never beats them.
func TestProveSafeMode(t *testing.T) {
	for _, name := range []string{"partition-blackhole-safe-elector", "slow-redis-safe-elector"} {
		s := ProveSpace{Base: builtinScenario(t, name)}
		res, err := Prove(context.Background(), s, ProveOptions{Interior: 3})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		full, err := Prove(context.Background(), s, ProveOptions{FullOrder: true, Interior: -1})
		if err != nil {
			t.Fatalf("%s, the full order: %v", name, err)
		}
		t.Logf("%s: %d segments (full order %d)", name, res.Segments, full.Segments)
		for i, pr := range res.Proofs {
			t.Logf("%s %s: %v at %v, bound %v, %s", name, pr.Metric, pr.Worst, pr.At, pr.Bound, pr.Verdict)
			if pr.Verdict != VerdictProven {
				t.Errorf("%s %s: %s, want proven", name, pr.Metric, pr.Verdict)
			}
			if pr.Metric != exGap && pr.Worst != 0 {
				t.Errorf("%s %s: worst %v, want 0 in safe mode", name, pr.Metric, pr.Worst)
			}
			if f := full.Proofs[i]; f.Worst != pr.Worst || f.At != pr.At {
				t.Errorf("%s %s: full order %v at %v, partial %v at %v", name, pr.Metric, f.Worst, f.At, pr.Worst, pr.At)
			}
		}
		scanNeverAbove(t, name, res, 40)
	}
}

// TestProveBoundAlongTheAxis: a bound with the axis as a term (a pause's
// length) is affine along a segment, which stays whole, and its verdict is
// the excess at the segment's ends; a bound that steps every millisecond
// of the axis is bisected step by step, each split counting toward the
// segment limit, so the walk stops incomplete instead of running on.
func TestProveBoundAlongTheAxis(t *testing.T) {
	base := builtinScenario(t, "pause")
	vary := []Range{{Param: ParamFor, Lo: "6s", Hi: "7s"}}
	affine := weakened(model.ModePause, func(_ model.Params, fs model.FaultSize, pr *bounds.Prediction) {
		pr.MaxOverlap = fs.Pause + 100*time.Millisecond
	})
	res, err := Prove(context.Background(), ProveSpace{Base: base, Metrics: []string{exOverlap}, Vary: vary}, ProveOptions{Predict: affine})
	if err != nil {
		t.Fatal(err)
	}
	pr := res.Proofs[0]
	t.Logf("affine bound: %d segments, %d kept whole with the bound moving, %d splits; worst %v at %v, bound %v, %s", res.Segments, res.BoundAffine, res.BoundSplits, pr.Worst, pr.At, pr.Bound, pr.Verdict)
	if !res.Complete || res.BoundAffine == 0 || res.BoundSplits != 0 {
		t.Errorf("complete %v, %d affine segments, %d splits: want a complete walk with the bound kept affine, no bisection", res.Complete, res.BoundAffine, res.BoundSplits)
	}
	if pr.Verdict != VerdictProven || pr.Worst <= 0 {
		t.Errorf("overlap %v against pause + 100ms: %s, want an overlap, proven", pr.Worst, pr.Verdict)
	}
	tight := weakened(model.ModePause, func(_ model.Params, fs model.FaultSize, pr *bounds.Prediction) {
		pr.MaxOverlap = fs.Pause - 5800*time.Millisecond
	})
	res, err = Prove(context.Background(), ProveSpace{Base: base, Metrics: []string{exOverlap}, Vary: vary}, ProveOptions{Predict: tight})
	if err != nil {
		t.Fatal(err)
	}
	pr = res.Proofs[0]
	t.Logf("pause - 5.8s: worst %v at %v, %s, %v over the bound at %v", pr.Worst, pr.At, pr.Verdict, pr.Excess, pr.ExcessAt)
	if pr.Verdict != VerdictCounterexample || pr.Excess <= 0 {
		t.Fatalf("overlap %v against pause - 5.8s: %s (excess %v at %v), want a counterexample", pr.Worst, pr.Verdict, pr.Excess, pr.ExcessAt)
	}
	r, err := virtual.Run((&prover{s: res.Space, axis: res.Axis}).scenario(pr.ExcessAt), virtual.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := judge(Space{Metrics: []string{exOverlap}}, Schedule{}, r)[0].Measured; got-(pr.ExcessAt-5800*time.Millisecond) != pr.Excess {
		t.Errorf("at for=%v the overlap is %v: %v over pause - 5.8s, the proof says %v", pr.ExcessAt, got, got-(pr.ExcessAt-5800*time.Millisecond), pr.Excess)
	}
	// A bound with a kink inside a segment: a valley at K, 2 ns a ns either
	// side, 1 ms below the overlap at K. Followed piece by piece (the line
	// through a piece's first two points, bisected to its last point on it),
	// the pieces meet at K, where the excess is largest: a counterexample
	// there, in a few pieces (stepping through the slope a nanosecond at a
	// time, the walk before this never finished).
	const K = 6500 * time.Millisecond
	r, err = virtual.Run((&prover{s: res.Space, axis: res.Axis}).scenario(K), virtual.Options{})
	if err != nil {
		t.Fatal(err)
	}
	atK := judge(Space{Metrics: []string{exOverlap}}, Schedule{}, r)[0].Measured
	valley := weakened(model.ModePause, func(_ model.Params, fs model.FaultSize, pr *bounds.Prediction) {
		d := fs.Pause - K
		pr.MaxOverlap = atK - time.Millisecond + 2*max(d, -d)
	})
	res, err = Prove(context.Background(), ProveSpace{Base: base, Metrics: []string{exOverlap}, Vary: vary, MaxSegments: 200}, ProveOptions{Predict: valley})
	if err != nil {
		t.Fatal(err)
	}
	pr = res.Proofs[0]
	t.Logf("valley at %v: %d segments, %d splits, %d affine; %s, %v over at %v", K, res.Segments, res.BoundSplits, res.BoundAffine, pr.Verdict, pr.Excess, pr.ExcessAt)
	if !res.Complete || res.BoundSplits > 4 || pr.Verdict != VerdictCounterexample || pr.ExcessAt != K || pr.Excess != time.Millisecond {
		t.Errorf("valley at %v: complete %v (%s), %d splits, %s %v over at %v; want complete in at most 4 splits, a counterexample 1ms over at %v",
			K, res.Complete, res.Incomplete, res.BoundSplits, pr.Verdict, pr.Excess, pr.ExcessAt, K)
	}
	// The same valley centred in a stretch of one segment, so that the
	// bound is equal at the stretch's ends: followed from its first two
	// points, not taken as constant.
	const x0, e0 = 6500 * time.Millisecond, 6520 * time.Millisecond
	const mid = (x0 + e0) / 2
	r, err = virtual.Run((&prover{s: res.Space, axis: res.Axis}).scenario(mid), virtual.Options{})
	if err != nil {
		t.Fatal(err)
	}
	atMid := judge(Space{Metrics: []string{exOverlap}}, Schedule{}, r)[0].Measured
	centred := weakened(model.ModePause, func(_ model.Params, fs model.FaultSize, pr *bounds.Prediction) {
		d := 2*fs.Pause - (x0 + e0)
		pr.MaxOverlap = atMid - time.Millisecond + 2*max(d, -d)
	})
	p := bareProver(t, base, vary, centred)
	a, a1, b := p.mustRecord(t, x0), p.mustRecord(t, x0+1), p.mustRecord(t, e0)
	if !samePath(a, b) || a.ws[0].Predicted != b.ws[0].Predicted {
		t.Fatalf("%v..%v: want one path and equal bounds at the ends (%v, %v)", x0, e0, a.ws[0].Predicted, b.ws[0].Predicted)
	}
	if err := p.boundSplits(context.Background(), x0, e0, a, a1, b); err != nil {
		t.Fatal(err)
	}
	if !p.excessSeen[0] || p.excessAt[0] != mid || p.excess[0] != time.Millisecond {
		t.Errorf("a valley at %v between equal ends: excess %v at %v (seen %v), want 1ms at the valley", mid, p.excess[0], p.excessAt[0], p.excessSeen[0])
	}
	// Three points whose bound moves with the axis: nothing lies between
	// them to bisect for.
	p = bareProver(t, base, vary, affine)
	for _, e := range []time.Duration{x0 + 2, x0 + 3, x0 + 10} {
		a, a1, b := p.mustRecord(t, x0), p.mustRecord(t, x0+1), p.mustRecord(t, e)
		if err := p.boundSplits(context.Background(), x0, e, a, a1, b); err != nil {
			t.Errorf("the segment %v..%v (%d ns) of an affine bound: %v", x0, e, e-x0, err)
		}
	}
	// A bound off the line only at x+1, 1 ms below the overlap there (the
	// ends and the thirds on it): x+1 is taken, in a segment of three
	// points as in a longer one.
	atNext := judge(Space{Metrics: []string{exOverlap}}, Schedule{}, mustRun(t, p.scenario(x0+1)))[0].Measured
	spike := weakened(model.ModePause, func(_ model.Params, fs model.FaultSize, pr *bounds.Prediction) {
		pr.MaxOverlap = 10 * time.Second
		if fs.Pause == x0+1 {
			pr.MaxOverlap = atNext - time.Millisecond
		}
	})
	for _, e := range []time.Duration{x0 + 2, e0} {
		p = bareProver(t, base, vary, spike)
		a, a1, b := p.mustRecord(t, x0), p.mustRecord(t, x0+1), p.mustRecord(t, e)
		if err := p.boundSplits(context.Background(), x0, e, a, a1, b); err != nil {
			t.Fatal(err)
		}
		if p.excess[0] != time.Millisecond || p.excessAt[0] != x0+1 {
			t.Errorf("a spike of the bound at x+1 in %v..%v: excess %v at %v, want 1ms at %v", x0, e, p.excess[0], p.excessAt[0], x0+1)
		}
	}

	steps := weakened(model.ModePause, func(_ model.Params, fs model.FaultSize, pr *bounds.Prediction) {
		pr.MaxOverlap = fs.Pause.Truncate(time.Millisecond) + 100*time.Millisecond
	})
	res, err = Prove(context.Background(), ProveSpace{Base: base, Metrics: []string{exOverlap}, Vary: vary, MaxSegments: 40}, ProveOptions{Predict: steps})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stepped bound: %d segments, %d splits, complete %v (%s)", res.Segments, res.BoundSplits, res.Complete, res.Incomplete)
	if res.Complete || res.Segments+res.BoundSplits > 40 || res.Proofs[0].Verdict == VerdictProven {
		t.Errorf("a bound stepping every millisecond: complete %v after %d segments and %d splits (limit 40), %s; want incomplete at the limit", res.Complete, res.Segments, res.BoundSplits, res.Proofs[0].Verdict)
	}
}

// scanNeverAbove runs n+1 evenly spaced schedules of a walk's range and
// fails where a metric measures above the proven worst.
func scanNeverAbove(t *testing.T, name string, res *ProveResult, n int64) {
	t.Helper()
	p := &prover{s: res.Space, axis: res.Axis}
	for k := int64(0); k <= n; k++ {
		x := res.Lo + time.Duration(int64(res.Hi-res.Lo)*k/n)
		r, err := virtual.Run(p.scenario(x), virtual.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range judge(Space{Metrics: res.Space.Metrics}, Schedule{}, r) {
			if w.Found && w.Measured > res.Proofs[i].Worst {
				t.Errorf("%s: the scan measures %s %v at %s=%v, above the proven worst %v", name, w.Metric, w.Measured, res.Axis, x, res.Proofs[i].Worst)
			}
		}
	}
}

// TestProveSeveralFaults: in a scenario of several faults one fault's start
// is walked (or two faults' starts make a box) while the others stay where
// the file has them. The second of two partitions of the leader crosses the
// first (overlapping it, then following it): random interior points keep
// their segments' paths, a dense scan never finds worse, the witness keeps
// the other fault, and the partial order agrees with the full one.
func TestProveSeveralFaults(t *testing.T) {
	sc, err := scenarios.Open("testdata/two-partitions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := ProveSpace{Base: sc, Vary: []Range{{Param: "at1", Lo: "3s", Hi: "12s"}}}
	res, err := Prove(context.Background(), s, ProveOptions{Interior: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Segments < 20 {
		t.Fatalf("%d segments, complete %v (%s): want a complete walk of many", res.Segments, res.Complete, res.Incomplete)
	}
	scanNeverAbove(t, "two-partitions at1", res, 300)
	for _, pr := range res.Proofs {
		if pr.Verdict != VerdictProven || pr.Replayed != pr.Worst {
			t.Errorf("%s: %s, worst %v replayed %v: want proven and replayed", pr.Metric, pr.Verdict, pr.Worst, pr.Replayed)
		}
		w := res.WitnessScenario(pr)
		if w.Faults[0].At != sc.Faults[0].At || w.Faults[1].At != pr.At {
			t.Errorf("%s: the witness's faults start at %v and %v, want the file's %v and the worst's %v", pr.Metric, w.Faults[0].At, w.Faults[1].At, sc.Faults[0].At, pr.At)
		}
	}
	full, err := Prove(context.Background(), s, ProveOptions{FullOrder: true, Interior: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range full.Proofs {
		if p := res.Proofs[i]; p.Worst != f.Worst || p.At != f.At {
			t.Errorf("%s: partial order %v at %v, full order %v at %v", f.Metric, p.Worst, p.At, f.Worst, f.At)
		}
	}
	// An instant fault walked past the file's end: the fault phase holds
	// it (a fault must start before the phase ends).
	flush := ProveSpace{Base: builtinScenario(t, "script-flush"), Vary: []Range{{Param: "at1", Lo: "10s", Hi: "20s"}}}
	if fres, err := Prove(context.Background(), flush, ProveOptions{}); err != nil || !fres.Complete {
		t.Errorf("script-flush's second flush over 10s..20s (the file's phase ends at 15s): %v", err)
	}

	// A box of both faults' starts holds the walk's worst on its line.
	box := ProveSpace{Base: sc, Vary: []Range{{Param: "at0", Lo: "3.9s", Hi: "4.1s"}, {Param: "at1", Lo: "6.9s", Hi: "7.1s"}}}
	bres, err := Prove(context.Background(), box, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bres.Complete {
		t.Fatalf("the box: incomplete (%s)", bres.Incomplete)
	}
	for i, pr := range bres.Proofs {
		if pr.Worst < res.Proofs[i].Worst && res.Proofs[i].At >= 6900*time.Millisecond && res.Proofs[i].At <= 7100*time.Millisecond {
			t.Errorf("%s: the box's worst %v is below the walk's %v at at1=%v, inside the box", pr.Metric, pr.Worst, res.Proofs[i].Worst, res.Proofs[i].At)
		}
		t.Logf("%s: walk %v at at1=%v; box %v at %s (%d cells)", pr.Metric, res.Proofs[i].Worst, res.Proofs[i].At, pr.Worst, bres.PointText(pr.At, pr.At2), bres.Segments)
	}
}

// bareProver is a walk of the space not yet started, to call its parts.
func bareProver(t *testing.T, base model.Scenario, vary []Range, predict func(model.Params, model.FaultSize) []bounds.Prediction) *prover {
	t.Helper()
	s := ProveSpace{Base: base, Metrics: []string{exOverlap}, Vary: vary}.withDefaults()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	n := len(s.Metrics)
	p := &prover{s: s, o: ProveOptions{Predict: predict}, axis: vary[0].Param, best: make([]Proof, n)}
	p.found, p.boundVaries, p.excessSeen = make([]bool, n), make([]bool, n), make([]bool, n)
	p.excess, p.excessAt = make([]time.Duration, n), make([]time.Duration, n)
	return p
}

func (p *prover) mustRecord(t *testing.T, x time.Duration) *path {
	t.Helper()
	pa, err := p.record(x)
	if err != nil {
		t.Fatal(err)
	}
	return pa
}

func mustRun(t *testing.T, sc model.Scenario) *verdict.Result {
	t.Helper()
	r, err := virtual.Run(sc, virtual.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestProveFailover: failover, whose stability rule (the first sole leader
// to lead alone for a TTL) and reach are comparisons of the analysis, not
// of the run, is proven with those comparisons in the path: random interior
// points of every segment keep each fault's failover affine (Prove fails
// otherwise), the witness replays, and neither a dense scan nor explore
// finds it higher; over a box of the fault's start and a phase as well.
// redis-pause and slow-redis-safe-elector have schedules whose runs end
// before a stable leader: proven with a longer recovery, incomplete with
// the file's.
func TestProveFailover(t *testing.T) {
	for _, c := range []struct {
		name     string
		vary     []Range
		recovery time.Duration
	}{
		{"partition-blackhole", nil, 0},
		{"partition-blackhole", []Range{{Param: "for", Lo: "1s", Hi: "14s"}}, 0},
		{"redis-pause", nil, 30 * time.Second},
		{"slow-redis-safe-elector", nil, 30 * time.Second},
		{"flapping-network", []Range{{Param: "at2", Lo: "11s", Hi: "15s"}}, 0},
	} {
		sc := builtinScenario(t, c.name)
		if c.recovery > 0 {
			sc.Recovery = c.recovery
		}
		res, err := Prove(context.Background(), ProveSpace{Base: sc, Metrics: []string{"failover"}, Vary: c.vary}, ProveOptions{Interior: 4})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pr := res.Proofs[0]
		if !res.Complete || pr.Verdict != VerdictProven || pr.Replayed != pr.Worst || pr.Worst <= 0 || pr.NotMeasured > 0 {
			t.Fatalf("%s %v: %s (%s), worst %v replayed %v, complete %v: want a proven, replayed failover", c.name, c.vary, pr.Verdict, pr.Why, pr.Worst, pr.Replayed, res.Complete)
		}
		scanNeverAbove(t, c.name+" failover", res, 300)
		if c.vary == nil {
			ex, err := Explore(context.Background(), Space{Base: sc, Metrics: []string{"failover"}, Seeds: 1, FirstSeed: res.Space.Seed, Budget: 300, FixedStarts: true}, ExploreOptions{Workers: 1})
			if err != nil {
				t.Fatalf("%s: explore: %v", c.name, err)
			}
			if w := ex.Worst[0]; w.Found && w.Measured > pr.Worst {
				t.Errorf("%s: explore finds failover %v at %v, above the proven worst %v", c.name, w.Measured, w.Schedule.At, pr.Worst)
			}
		}
		t.Logf("%s %v: failover proven %v of %v, %d segments", c.name, c.vary, pr.Worst, pr.Bound, res.Segments)
	}
	// With the file's recovery some runs end before a stable leader: the
	// worst is not known there, so the proof is incomplete, naming one.
	res, err := Prove(context.Background(), ProveSpace{Base: builtinScenario(t, "slow-redis-safe-elector"), Metrics: []string{"failover"}}, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pr := res.Proofs[0]; pr.Verdict != VerdictIncomplete || pr.NotMeasured == 0 || !strings.Contains(pr.Why, "no stable leader before the run ended") {
		t.Errorf("slow-redis-safe-elector, the file's recovery: %s, %d not measured (%s): want incomplete, naming the schedules without a failover", pr.Verdict, pr.NotMeasured, pr.Why)
	}
	// The same where no schedule measures it, and over a box.
	for _, vary := range [][]Range{
		{{Param: "at", Lo: "6.9049s", Hi: "6.95s"}},
		{{Param: "at", Lo: "6.5s", Hi: "7.2s"}, {Param: "for", Lo: "13.9s", Hi: "14.1s"}},
	} {
		res, err := Prove(context.Background(), ProveSpace{Base: builtinScenario(t, "slow-redis-safe-elector"), Metrics: []string{"failover"}, Vary: vary}, ProveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if pr := res.Proofs[0]; pr.Verdict != VerdictIncomplete || pr.NotMeasured == 0 {
			t.Errorf("slow-redis-safe-elector %v: %s, %d not measured (%s): want incomplete", vary, pr.Verdict, pr.NotMeasured, pr.Why)
		}
	}
	// A box: the cells' windows include each fault's failover.
	walk, err := Prove(context.Background(), ProveSpace{Base: builtinScenario(t, "partition-blackhole"), Metrics: []string{"failover"},
		Vary: []Range{{Param: "at", Lo: "2.4s", Hi: "2.7s"}}}, ProveOptions{Interior: 2})
	if err != nil {
		t.Fatal(err)
	}
	box, err := Prove(context.Background(), ProveSpace{Base: builtinScenario(t, "partition-blackhole"), Metrics: []string{"failover"},
		Vary: []Range{{Param: "at", Lo: "2.4s", Hi: "2.7s"}, {Param: "start1", Lo: "0s", Hi: "100ms"}}}, ProveOptions{Interior: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The box holds the walk's schedules (the file starts every instance at 0).
	if pr := box.Proofs[0]; !box.Complete || pr.Verdict != VerdictProven || pr.Replayed != pr.Worst || pr.Worst < walk.Proofs[0].Worst {
		t.Errorf("box: %s, worst %v replayed %v, complete %v; the walk at the file's phase %v: want a proven box no lower than the walk", pr.Verdict, pr.Worst, pr.Replayed, box.Complete, walk.Proofs[0].Worst)
	}
}

// TestProveFailoverStability: the stability rule turns inside one order of
// events (testdata/failover-stability.yaml: the failover jumps from 8 s to
// 21 s where a new leader's stretch falls below the TTL). With the
// analysis's comparisons in the path the walk and a box are proven, the
// jump a breakpoint; without them, the segment or cell across the line
// holds a failover window off its gradient, which Prove reports as a
// mismatch rather than answer.
func TestProveFailoverStability(t *testing.T) {
	sc, err := scenarios.Open("testdata/failover-stability.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, vary := range [][]Range{
		{{Param: "start1", Lo: "0s", Hi: "6s"}},
		{{Param: "start1", Lo: "4.5s", Hi: "5.5s"}, {Param: "at1", Lo: "15.5s", Hi: "16.5s"}},
	} {
		s := ProveSpace{Base: sc, Metrics: []string{"failover"}, Vary: vary}
		res, err := Prove(context.Background(), s, ProveOptions{Interior: 4})
		if err != nil {
			t.Fatalf("%v: %v", vary, err)
		}
		if pr := res.Proofs[0]; pr.Verdict != VerdictProven || pr.Worst < 21*time.Second || pr.Replayed != pr.Worst {
			t.Errorf("%v: %s, worst %v (replayed %v): want proven at the second follower's 21 s", vary, pr.Verdict, pr.Worst, pr.Replayed)
		}
		if len(vary) == 1 {
			scanNeverAbove(t, "failover-stability", res, 600)
		}
		_, err = Prove(context.Background(), s, ProveOptions{Interior: 4, withoutOutcomeCmps: true})
		if !errors.Is(err, ErrPathMismatch) || !strings.Contains(err.Error(), "failover window") {
			t.Errorf("%v without the analysis's comparisons: %v, want a failover window off its gradient", vary, err)
		}
	}
}

// TestProveReport: a proof's report holds each metric's exact worst, bound
// and verdict; a walk's curves hold every schedule it took, each metric's
// worst among them and none above it, in axis order (a drifting clock's
// classes interleaved), with a plot per metric; a box has no curve.
func TestProveReport(t *testing.T) {
	for _, c := range []struct {
		name string
		vary []Range
	}{
		{"partition-blackhole", []Range{{Param: ParamAt, Lo: "2.4s", Hi: "2.7s"}}},
		{"clock-drift", []Range{{Param: ParamAt, Lo: "4.4s", Hi: "4.6s"}}},
		{"partition-blackhole", []Range{{Param: ParamAt, Lo: "2.5s", Hi: "2.55s"}, {Param: ParamFor, Lo: "9.9s", Hi: "10.1s"}}},
		{"clock-drift", []Range{{Param: ParamAt, Lo: "4.522893s", Hi: "4.522907s"}, {Param: ParamFor, Lo: "13.999999994s", Hi: "14.000000006s"}}},
	} {
		res, err := Prove(context.Background(), ProveSpace{Base: builtinScenario(t, c.name), Vary: c.vary}, ProveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		// An earlier proof's files in the same directory are gone.
		stale := []string{"curve-overlap.png", "map-gap.svg", "curves.csv", "witness-failover.yaml"}
		for _, f := range stale {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		files, err := WriteProve(dir, res)
		if err != nil {
			t.Fatal(err)
		}
		read := func(name string) string {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("%s %v: %v (written: %v)", c.name, c.vary, err, files)
			}
			return string(b)
		}
		md, page := read("prove.md"), read("index.html")
		for _, f := range stale {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil && !slices.Contains(files, f) {
				t.Errorf("%s %v: an earlier proof's %s left beside %v", c.name, c.vary, f, files)
			}
		}
		for _, pr := range res.Proofs {
			worst, bound := model.DurationsApart(pr.Worst, pr.Bound)
			row := fmt.Sprintf("| %s | %s | %s | %s | proven, ", pr.Metric, worst, res.PointText(pr.At, pr.At2), bound)
			cell := fmt.Sprintf("<td>%s</td><td class=\"l\">%s</td><td>%s</td><td class=\"l\">proven, ", worst, res.PointText(pr.At, pr.At2), bound)
			if pr.Verdict != VerdictProven || !strings.Contains(md, row) || !strings.Contains(md, pr.Formula) || !strings.Contains(page, cell) {
				t.Errorf("%s %v: %s %s: prove.md lacks %q or its formula, or the page %q", c.name, c.vary, pr.Metric, pr.Verdict, row, cell)
			}
		}
		if !strings.Contains(md, res.proveCommand()) || !strings.Contains(res.proveCommand(), "--vary "+c.vary[0].Param+"=") {
			t.Errorf("%s %v: the command %q, in prove.md: %v", c.name, c.vary, res.proveCommand(), strings.Contains(md, res.proveCommand()))
		}
		if len(c.vary) == 2 {
			if slices.Contains(files, "curves.csv") || len(res.Curves) > 0 {
				t.Errorf("%s: a box with curves: %v", c.name, files)
			}
			for _, pr := range res.Proofs {
				note := fmt.Sprintf("%s: the supremum over the cells' real polygons is %s", pr.Metric, model.DurationText(pr.Sup))
				if (pr.Sup != pr.Worst) != strings.Contains(md, note) {
					t.Errorf("%s %s: supremum %v, worst %v; prove.md's note: %v", c.name, pr.Metric, pr.Sup, pr.Worst, strings.Contains(md, note))
				}
			}
			// Every schedule of the map is known (the box is covered), and
			// its value is what a run of it measures.
			p := res.prover()
			for i, mp := range res.Maps {
				if !slices.Contains(files, "map-"+shortMetric(mp.Metric)+".png") {
					t.Errorf("%s %s: no map in %v", c.name, mp.Metric, files)
				}
				for j, y := range mp.Y {
					for k, x := range mp.X {
						if !mp.Known[j][k] || mp.V[j][k] > res.Proofs[i].Worst {
							t.Fatalf("%s %s at %v, %v: known %v, %v above the worst %v", c.name, mp.Metric, x, y, mp.Known[j][k], mp.V[j][k], res.Proofs[i].Worst)
						}
						if (j*len(mp.X)+k)%97 != 0 {
							continue
						}
						r, err := virtual.Run(p.scenarioAt(x, y), virtual.Options{})
						if err != nil {
							t.Fatal(err)
						}
						if w := judge(Space{Metrics: res.Space.Metrics}, Schedule{}, r)[i]; w.Measured != mp.V[j][k] {
							t.Errorf("%s %s at %v, %v: the map %v, a run %v", c.name, mp.Metric, x, y, mp.V[j][k], w.Measured)
						}
					}
				}
			}
			if len(res.Maps) != len(res.Proofs) || !strings.Contains(page, "Over the box") {
				t.Errorf("%s: %d maps, or none on the page", c.name, len(res.Maps))
			}
			continue
		}
		rows := strings.Split(strings.TrimSpace(read("curves.csv")), "\n")[1:]
		n := 0
		pv := res.prover()
		for i, cu := range res.Curves {
			pr := res.Proofs[i]
			top, at := time.Duration(-1), time.Duration(0)
			for k, pt := range cu.Points {
				if k%23 == 0 {
					// The value is what a run of that schedule measures.
					r, err := virtual.Run(pv.scenario(pt.At), virtual.Options{})
					if err != nil {
						t.Fatal(err)
					}
					if w := judge(Space{Metrics: res.Space.Metrics}, Schedule{}, r)[i]; w.Found != pt.Found || w.Found && (w.Measured != pt.Value || w.Predicted != pt.Bound) {
						t.Errorf("%s %s at %v: the curve %v (bound %v), a run %v (bound %v)", c.name, cu.Metric, pt.At, pt.Value, pt.Bound, w.Measured, w.Predicted)
					}
				}
				if k > 0 && pt.At < cu.Points[k-1].At {
					t.Errorf("%s %s: %v after %v: not in axis order", c.name, cu.Metric, pt.At, cu.Points[k-1].At)
				}
				if pt.Found && pt.Value > top {
					top, at = pt.Value, pt.At
				}
				n++
			}
			if top != pr.Worst || at != pr.At {
				t.Errorf("%s %s: the curve's largest %v at %v, the proof's %v at %v", c.name, cu.Metric, top, at, pr.Worst, pr.At)
			}
			if !slices.Contains(files, curveFile(cu.Metric)+".png") {
				t.Errorf("%s %s: no plot in %v", c.name, cu.Metric, files)
			}
		}
		if len(rows) != n || n < res.Segments*len(res.Proofs) {
			t.Errorf("%s: curves.csv has %d rows, the curves %d points, for %d segments of %d metrics", c.name, len(rows), n, res.Segments, len(res.Proofs))
		}
		if !strings.Contains(page, "data:image/png;base64,") || (res.Lattice > 1) != strings.Contains(page, "residue classes") {
			t.Errorf("%s: the page's plots or its classes' note", c.name)
		}
	}
}

// TestDecimate: a plot's points keep, per column, its first, least,
// greatest and last, in order; few points are kept whole.
func TestDecimate(t *testing.T) {
	var pts plotter.XYs
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 100000 {
		pts = append(pts, plotter.XY{X: float64(i), Y: rng.Float64()})
	}
	pts[54321].Y = 7
	out := decimate(pts, 1000)
	if len(out) > 4000 || len(out) < 2000 || out[0] != pts[0] || out[len(out)-1] != pts[len(pts)-1] {
		t.Fatalf("%d points kept, first %v last %v", len(out), out[0], out[len(out)-1])
	}
	if !slices.ContainsFunc(out, func(p plotter.XY) bool { return p.Y == 7 }) || !slices.IsSortedFunc(out, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) }) {
		t.Errorf("the greatest point lost, or the order")
	}
	if few := pts[:3000]; len(decimate(few, 1000)) != len(few) {
		t.Errorf("3000 points of 1000 columns decimated")
	}
}
