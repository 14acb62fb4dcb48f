package sweep

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

// TestProveClockDrift: with the leader's clock at 0.2× (clock-drift), the
// proof walks the five residue classes of the fault's start modulo 5 ns,
// and over a window of every nanosecond around each metric's worst its
// worst is exactly the largest value a run of every schedule measures.
// Walked as one class (the identity lattice), the same range leaves its
// predicted path: the readings' rounding is not affine at the nanosecond.
func TestProveClockDrift(t *testing.T) {
	sc := builtinScenario(t, "clock-drift")
	res, err := Prove(context.Background(), ProveSpace{Base: sc}, ProveOptions{Interior: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lattice != 5 || !res.Complete {
		t.Fatalf("lattice %d, complete %v (%s): want 5 classes walked whole", res.Lattice, res.Complete, res.Incomplete)
	}
	for _, pr := range res.Proofs {
		if pr.Verdict != VerdictProven || pr.Replayed != pr.Worst {
			t.Errorf("%s: %s, worst %v replayed %v: want proven, replayed", pr.Metric, pr.Verdict, pr.Worst, pr.Replayed)
		}
	}
	for k, pr := range res.Proofs {
		lo, hi := pr.At-40, pr.At+40
		s := ProveSpace{Base: sc, Vary: []Range{{Param: ParamAt, Lo: lo.String(), Hi: hi.String()}}}
		win, err := Prove(context.Background(), s, ProveOptions{Interior: 4})
		if err != nil {
			t.Fatalf("%s window: %v", pr.Metric, err)
		}
		scan := scanEvery(t, win, lo, hi)
		for i, w := range win.Proofs {
			if w.Worst != scan[i] {
				t.Errorf("around %s's worst at %v: %s proven %v, every schedule's largest %v", pr.Metric, pr.At, w.Metric, w.Worst, scan[i])
			}
		}
		if w := win.Proofs[k]; w.Worst != pr.Worst {
			t.Errorf("%s: %v over the window, %v over the range it is the worst of", pr.Metric, w.Worst, pr.Worst)
		}
	}
	s := ProveSpace{Base: sc, Vary: []Range{{Param: ParamFor, Lo: "13.9s", Hi: "14.1s"}}}.withDefaults()
	if r, err := Prove(context.Background(), s, ProveOptions{Interior: 4}); err != nil || !r.Complete || r.Proofs[0].Verdict != VerdictProven {
		t.Errorf("the fault's length: %v (%+v)", err, r)
	}
	_, err = proveWalk(context.Background(), s, ProveOptions{Interior: 4}, lattice{})
	if !errors.Is(err, ErrPathMismatch) {
		t.Errorf("the fault's length as one class at the nanosecond: %v, want %v", err, ErrPathMismatch)
	}
}

// TestProveClockDriftBox: a box of the drifting fault's start × length is
// proven as 25 residue classes, and its worst is the largest value a run
// of every schedule of the box measures.
func TestProveClockDriftBox(t *testing.T) {
	sc := builtinScenario(t, "clock-drift")
	at, of := 4522900*time.Microsecond, 14*time.Second
	s := ProveSpace{Base: sc, Vary: []Range{
		{Param: ParamAt, Lo: (at - 7).String(), Hi: (at + 7).String()},
		{Param: ParamFor, Lo: (of - 6).String(), Hi: (of + 6).String()},
	}}
	res, err := Prove(context.Background(), s, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lattice != 5 || res.Classes != 25 || res.ClassesDone != 25 || !res.Complete || !strings.Contains(captureTable(res), "25 classes") {
		t.Fatalf("lattice %d, complete %v (%s): want 25 classes, whole\n%s", res.Lattice, res.Complete, res.Incomplete, captureTable(res))
	}
	want := make([]time.Duration, len(res.Proofs))
	p := res.prover()
	for x := at - 7; x <= at+7; x++ {
		for y := of - 6; y <= of+6; y++ {
			r, err := virtual.Run(p.scenarioAt(x, y), virtual.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range judge(Space{Metrics: res.Space.Metrics}, Schedule{}, r) {
				if w.Found {
					want[i] = max(want[i], w.Measured)
				}
			}
		}
	}
	for i, pr := range res.Proofs {
		if pr.Worst != want[i] || pr.Verdict != VerdictProven {
			t.Errorf("%s: proven %v (%s), every schedule's largest %v", pr.Metric, pr.Worst, pr.Verdict, want[i])
		}
	}
}

// scanEvery runs every schedule of a walk's range, lo to hi, and returns
// each metric's largest value.
func scanEvery(t *testing.T, res *ProveResult, lo, hi time.Duration) []time.Duration {
	t.Helper()
	most := make([]time.Duration, len(res.Proofs))
	p := res.prover()
	for x := lo; x <= hi; x++ {
		r, err := virtual.Run(p.scenario(x), virtual.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range judge(Space{Metrics: res.Space.Metrics}, Schedule{}, r) {
			if w.Found {
				most[i] = max(most[i], w.Measured)
			}
		}
	}
	return most
}

func captureTable(r *ProveResult) string {
	var b strings.Builder
	r.WriteTable(&b)
	return b.String()
}

// TestMergeProof: two residue classes' proofs of one metric merge into the
// proof over both: the larger worst (the smaller schedule of equal ones),
// the larger excess, the graver verdict, the counts added, and a
// not-measured reason that counts both.
func TestMergeProof(t *testing.T) {
	a := Proof{Metric: exOverlap, Worst: 5, At: 30, Excess: -3, ExcessAt: 30, Verdict: VerdictProven, found: true, seen: true, Unknown: 1, UnknownWhy: "the partition caught no call"}
	b := Proof{Metric: exOverlap, Worst: 5, At: 12, Excess: -2, ExcessAt: 14, Verdict: VerdictProven, found: true, seen: true, Unknown: 2, UnknownWhy: "another reason"}
	m := mergeProof(a, b)
	if m.Worst != 5 || m.At != 12 || m.Excess != -2 || m.ExcessAt != 14 || m.Unknown != 3 || m.UnknownWhy != a.UnknownWhy || m.Verdict != VerdictProven {
		t.Errorf("merged %+v", m)
	}
	c := Proof{Metric: exOverlap, Worst: 7, At: 40, Excess: 1, ExcessAt: 40, Verdict: VerdictCounterexample, Why: "over", found: true, seen: true}
	// The counterexample's verdict and reason win; the unknown schedules'
	// count and reason stay.
	if m := mergeProof(mergeProof(c, a), b); m.Worst != 7 || m.At != 40 || m.Verdict != VerdictCounterexample || m.Why != "over" || m.Excess != 1 || m.Unknown != 3 || m.UnknownWhy != a.UnknownWhy {
		t.Errorf("with a counterexample: %+v", m)
	}
	// A box class's unconfirmed excess (incomplete) is larger than another
	// class's counterexample: the witness stays the counterexample's.
	unconfirmed := Proof{Metric: exOverlap, Worst: 9, At: 50, Excess: 3, ExcessAt: 50, Verdict: VerdictIncomplete, found: true, seen: true}
	for _, m := range []Proof{mergeProof(unconfirmed, c), mergeProof(c, unconfirmed)} {
		if m.Verdict != VerdictCounterexample || m.Excess != 1 || m.ExcessAt != 40 || m.Worst != 9 {
			t.Errorf("a counterexample beside an unconfirmed excess: %+v", m)
		}
	}
	none := Proof{Metric: exOverlap, Verdict: VerdictNone}
	if m := mergeProof(none, a); m.Worst != 5 || m.At != 30 || m.Verdict != VerdictProven || !m.found {
		t.Errorf("a class without the metric, then one with: %+v", m)
	}
	nm := Proof{Metric: exFailover, Worst: 9, At: 3, Verdict: VerdictProven, found: true, seen: true}
	nm.notMeasured(Worst{NotMeasured: true, Why: "failover 0s: not measured: no stable leader"}, "at=7ns")
	nm.Verdict, nm.Why = VerdictIncomplete, nm.notMeasuredWhy()
	nm2 := nm
	nm2.NotMeasuredAt = "at=8ns"
	m = mergeProof(nm, nm2)
	if m.Verdict != VerdictIncomplete || m.NotMeasured != 2 || !strings.Contains(m.Why, "2 of the schedules") || !strings.Contains(m.Why, "at=7ns: no stable leader") {
		t.Errorf("two not-measured classes: %+v", m)
	}
}

// TestProveTwoDrifts: two drifts of one instance, the first's heal walked
// (testdata/two-drifts.yaml): a timer armed in the first fires after its
// heal at a time whose coefficient the first rate divided, which the
// second then reads. The lattice takes a factor per drift (2 × 4 = 8 ns)
// and proves it; the least common multiples' lattice (4 ns) leaves its
// path.
func TestProveTwoDrifts(t *testing.T) {
	sc, err := scenarios.Open("testdata/two-drifts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := ProveSpace{Base: sc, Vary: []Range{{Param: ParamFor, Lo: "2.444s", Hi: "5.444s"}}}.withDefaults()
	res, err := Prove(context.Background(), s, ProveOptions{Interior: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lattice != 8 || !res.Complete {
		t.Fatalf("lattice %d, complete %v: want 8 classes, whole", res.Lattice, res.Complete)
	}
	for _, pr := range res.Proofs {
		if pr.Verdict != VerdictProven {
			t.Errorf("%s: %s", pr.Metric, pr.Verdict)
		}
	}
	if _, err := proveClasses(context.Background(), s, ProveOptions{Interior: 2}, 4); !errors.Is(err, ErrPathMismatch) {
		t.Errorf("a lattice of 4ns: %v, want %v", err, ErrPathMismatch)
	}
}

// TestProveClassesNarrowAndStopped: a range narrower than the lattice
// leaves classes without a schedule, which prove nothing (a one-schedule
// range's worst is that schedule's run); a proof stopped by its segment
// limit says which class it stopped in, how many it walked whole, and how
// far it got, and proves nothing.
func TestProveClassesNarrowAndStopped(t *testing.T) {
	sc := builtinScenario(t, "clock-drift")
	at := 4725919994 * time.Nanosecond
	res, err := Prove(context.Background(), ProveSpace{Base: sc, Metrics: []string{exStale}, Vary: []Range{{Param: ParamAt, Lo: at.String(), Hi: at.String()}}}, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	one := scanEvery(t, res, at, at)
	if pr := res.Proofs[0]; pr.Worst != one[0] || pr.At != at || res.Segments != 1 || res.Runs != 1 {
		t.Errorf("one schedule: worst %v at %v, %d segments, %d runs; its run measures %v", pr.Worst, pr.At, res.Segments, res.Runs, one[0])
	}
	res, err = Prove(context.Background(), ProveSpace{Base: sc, MaxSegments: 300}, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || res.Classes != 5 || res.ClassesDone >= 5 || !strings.Contains(res.Incomplete, "of 5)") || res.Reached < res.Lo || res.Reached > res.Hi {
		t.Errorf("stopped: complete %v, %d of %d classes whole, reached %v: %s", res.Complete, res.ClassesDone, res.Classes, res.Reached, res.Incomplete)
	}
	for _, pr := range res.Proofs {
		if pr.Verdict == VerdictProven {
			t.Errorf("%s proven by a stopped proof", pr.Metric)
		}
	}
	if tb := captureTable(res); !strings.Contains(tb, "walked whole)") || !strings.Contains(tb, "INCOMPLETE") {
		t.Errorf("the stopped proof's table:\n%s", tb)
	}
}

// TestProveClockRates: clock-drift's fault at other rates (lattices of 4,
// 10 and 6 ns) and in safe mode is proven over a window of the fault's
// start holding the overlap's worst, and a run of every schedule within
// two lattice steps of each metric's worst measures no more than it, and
// exactly it there.
func TestProveClockRates(t *testing.T) {
	for _, c := range []struct {
		rate     float64
		safe     bool
		lo, hi   string
		wantUnit int64
	}{
		{rate: 0.25, lo: "4.3s", hi: "4.4s", wantUnit: 4},
		{rate: 0.4, lo: "3.65s", hi: "3.75s", wantUnit: 10},
		{rate: 1.5, lo: "4s", hi: "4.1s", wantUnit: 6},
		{rate: 0.2, safe: true, lo: "4.45s", hi: "4.55s", wantUnit: 5},
	} {
		sc := builtinScenario(t, "clock-drift")
		sc.Faults[0].Rate = c.rate
		sc.Params.Safe = c.safe
		sc.Expect = nil
		s := ProveSpace{Base: sc, Vary: []Range{{Param: ParamAt, Lo: c.lo, Hi: c.hi}}}
		res, err := Prove(context.Background(), s, ProveOptions{Interior: 2})
		if err != nil {
			t.Fatalf("rate %v safe %v: %v", c.rate, c.safe, err)
		}
		if res.Lattice != c.wantUnit || !res.Complete || res.ClassesDone != res.Classes {
			t.Fatalf("rate %v safe %v: lattice %d, %d of %d classes, complete %v: want %d ns, whole", c.rate, c.safe, res.Lattice, res.ClassesDone, res.Classes, res.Complete, c.wantUnit)
		}
		for k, pr := range res.Proofs {
			t.Logf("rate %v safe %v: %s %v at %v (bound %v), %d segments", c.rate, c.safe, pr.Metric, pr.Worst, pr.At, pr.Bound, res.Segments)
			if pr.Verdict != VerdictProven || pr.Replayed != pr.Worst {
				t.Errorf("rate %v safe %v: %s %s, worst %v replayed %v: want proven, replayed", c.rate, c.safe, pr.Metric, pr.Verdict, pr.Worst, pr.Replayed)
			}
			d := 2 * time.Duration(c.wantUnit)
			scan := scanEvery(t, res, max(pr.At-d, res.Lo), min(pr.At+d, res.Hi))
			if scan[k] != pr.Worst {
				t.Errorf("rate %v safe %v: %s proven %v at %v, every schedule within %v of it %v", c.rate, c.safe, pr.Metric, pr.Worst, pr.At, d, scan[k])
			}
		}
	}
}
