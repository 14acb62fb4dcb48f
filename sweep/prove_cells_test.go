package sweep

import (
	"context"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// polyOver proves partition-blackhole over a box of the axes with the
// polytope prover.
func polyOver(t *testing.T, axes []string, lo, hi []time.Duration, o ProveOptions) *polyProver {
	t.Helper()
	sc := builtinScenario(t, "partition-blackhole")
	var vary []Range
	for i, a := range axes {
		vary = append(vary, Range{Param: a, Lo: lo[i].String(), Hi: hi[i].String()})
	}
	s := ProveSpace{Base: sc, Vary: vary}.withDefaults()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	p := &prover{s: s, o: o, axis: axes[0], axes: axes, rng: rand.New(rand.NewPCG(1, 2))}
	b := &polyProver{prover: p, n: len(axes), byKey: map[string]*polyCell{}, ran: map[vec]bool{}, pending: map[vec]*path{}, steps: neighbourSteps(len(axes))}
	for i := range axes {
		b.lo[i], b.hi[i] = int64(lo[i]), int64(hi[i])
	}
	if err := b.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.finish(); err != nil {
		t.Fatal(err)
	}
	return b
}

// On a box of two axes the polytope prover and the box prover are two
// independent provers of one claim: they find the same cells (the same
// paths, each holding as many schedules) and the same worst values, where
// and with what supremum.
func TestPolyProverAgreesWithTheBoxProver(t *testing.T) {
	for _, tc := range []struct {
		axes   [2]string
		lo, hi [2]time.Duration
	}{
		{[2]string{ParamAt, ParamFor}, [2]time.Duration{2400 * time.Millisecond, 9 * time.Second}, [2]time.Duration{2700 * time.Millisecond, 11 * time.Second}},
		{[2]string{"start1", "start2"}, [2]time.Duration{3950 * time.Millisecond, 3950 * time.Millisecond}, [2]time.Duration{4050 * time.Millisecond, 4050 * time.Millisecond}},
	} {
		t.Run(tc.axes[0]+"×"+tc.axes[1], func(t *testing.T) {
			box, res := boxOver(t, tc.axes, tc.lo, tc.hi, ProveOptions{})
			poly := polyOver(t, tc.axes[:], tc.lo[:], tc.hi[:], ProveOptions{})
			defer checkRescan(t, poly)
			t.Logf("box prover: %d cells, %d runs; polytope prover: %d cells, %d runs", len(box.cells), box.runs, len(poly.cells), poly.runs)
			if len(box.cells) != len(poly.cells) {
				t.Fatalf("the box prover found %d cells, the polytope prover %d", len(box.cells), len(poly.cells))
			}
			for _, c := range box.cells {
				d := poly.byKey[c.key]
				if d == nil {
					t.Fatalf("the box prover's cell of %v has no path among the polytope prover's", c.o())
				}
				if c.count.Cmp(d.count) != 0 {
					t.Fatalf("the cell of %v holds %v schedules, %v by the polytope prover", c.o(), c.count, d.count)
				}
			}
			for i, p := range res.Proofs {
				q := poly.proofs[i]
				if p.Worst != q.Worst || p.At != q.At || p.At2 != q.At2 || p.Sup != q.Sup || p.Verdict != q.Verdict || p.Excess != q.Excess {
					t.Errorf("%s: box prover worst %v at (%v, %v) sup %v %s excess %v; polytope prover %v at (%v, %v) sup %v %s excess %v",
						p.Metric, p.Worst, p.At, p.At2, p.Sup, p.Verdict, p.Excess, q.Worst, q.At, q.At2, q.Sup, q.Verdict, q.Excess)
				}
			}
		})
	}
}

// Over three axes (the fault's start and length and a follower's phase):
// random schedules each lie in exactly one cell, run its path and measure
// each metric as its windows predict, never above the proof's worst; the
// cells' counts add up to the box's; a cell taken away is found again by
// the coverage scan, and one moved into its neighbour is caught.
func TestPolyProverThreeAxes(t *testing.T) {
	axes := []string{ParamAt, ParamFor, "start1"}
	lo := []time.Duration{2500 * time.Millisecond, 9900 * time.Millisecond, 3990 * time.Millisecond}
	hi := []time.Duration{2600 * time.Millisecond, 10100 * time.Millisecond, 4010 * time.Millisecond}
	checkPolyBox(t, axes, lo, hi)
}

// The same over four axes: the fault's start and length and both
// followers' phases.
func TestPolyProverFourAxes(t *testing.T) {
	axes := []string{ParamAt, ParamFor, "start1", "start2"}
	lo := []time.Duration{2520 * time.Millisecond, 10000 * time.Millisecond, 3995 * time.Millisecond, 3995 * time.Millisecond}
	hi := []time.Duration{2525 * time.Millisecond, 10030 * time.Millisecond, 4005 * time.Millisecond, 4005 * time.Millisecond}
	checkPolyBox(t, axes, lo, hi)
}

func checkPolyBox(t *testing.T, axes []string, lo, hi []time.Duration) {
	start := time.Now()
	b := polyOver(t, axes, lo, hi, ProveOptions{})
	total := new(big.Int)
	ranks := map[int]int{}
	for _, c := range b.cells {
		total.Add(total, c.count)
		ranks[c.rank]++
	}
	t.Logf("%d cells (by rank %v), %d runs, in %v", len(b.cells), ranks, b.runs, time.Since(start))
	if total.Cmp(b.boxCount()) != 0 {
		t.Fatalf("the cells hold %v points, the box %v", total, b.boxCount())
	}
	for _, p := range b.proofs {
		t.Logf("%s: worst %v at %v sup %v bound %v %s", p.Metric, p.Worst, append([]time.Duration{p.At, p.At2}, p.AtMore...), p.Sup, p.Bound, p.Verdict)
	}
	checkRescan(t, b)
	checkOverlapCaught(t, b)
	// A flat cell's interior check samples inside its hull, not only at
	// the points it was found from.
	flat, fresh := 0, 0
	for _, c := range b.cells {
		if c.rank == b.n || c.count.Cmp(big.NewInt(3)) < 0 {
			continue
		}
		flat++
		x := b.sampleFlat(c)
		if !c.contains(x, b.n) {
			t.Fatalf("a sample of the flat cell of %s, %s, lies outside it", b.text(c.o()), b.text(x))
		}
		if !slices.Contains(c.pts, x) {
			fresh++
		}
	}
	t.Logf("%d flat cells sampled, %d at a schedule not run before", flat, fresh)
	if flat == 0 || fresh*2 < flat {
		t.Fatalf("%d of %d flat cells sampled at a schedule not run before: want most", fresh, flat)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		var x vec
		for i := range b.n {
			x[i] = b.lo[i] + rng.Int64N(b.hi[i]-b.lo[i]+1)
		}
		var in []*polyCell
		for _, c := range b.cells {
			if c.contains(x, b.n) {
				in = append(in, c)
			}
		}
		if len(in) != 1 {
			t.Fatalf("%s lies in %d cells", b.text(x), len(in))
		}
		pa, err := b.recordAt(b.dur(x)...)
		if err != nil {
			t.Fatal(err)
		}
		if cellKey(pa) != in[0].key {
			t.Fatalf("%s runs another path than its cell's", b.text(x))
		}
		for i, p := range b.proofs {
			w := pa.ws[i]
			if !w.Found {
				continue
			}
			if got := time.Duration(in[0].metricAt(i, x)); got != w.Measured {
				t.Fatalf("%s: %s measured %v, its cell's windows give %v", b.text(x), p.Metric, w.Measured, got)
			}
			if w.Measured > p.Worst {
				t.Fatalf("%s: %s %v above the proof's worst %v", b.text(x), p.Metric, w.Measured, p.Worst)
			}
		}
	}
}

// A box of three axes whose third is a single value is the box of two at
// that value: the same paths, each holding as many schedules, and the same
// worst values at the same schedules.
func TestPolyProverFlatThirdAxis(t *testing.T) {
	const phase = 4 * time.Second
	lo := []time.Duration{2400 * time.Millisecond, 9900 * time.Millisecond, phase}
	hi := []time.Duration{2600 * time.Millisecond, 10100 * time.Millisecond, phase}
	poly := polyOver(t, []string{ParamAt, ParamFor, "start1"}, lo, hi, ProveOptions{})

	sc := builtinScenario(t, "partition-blackhole")
	sc.Starts = make([]time.Duration, max(len(sc.Starts), 2))
	copy(sc.Starts, builtinScenario(t, "partition-blackhole").Starts)
	sc.Starts[1] = phase
	s := ProveSpace{Base: sc, Vary: []Range{
		{Param: ParamAt, Lo: lo[0].String(), Hi: hi[0].String()},
		{Param: ParamFor, Lo: lo[1].String(), Hi: hi[1].String()},
	}}
	res, err := Prove(context.Background(), s, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("three axes, the third flat: %d cells, %d runs; two axes: %d cells", len(poly.cells), poly.runs, res.Segments)
	if len(poly.cells) != res.Segments {
		t.Fatalf("%d cells over three axes, %d over two", len(poly.cells), res.Segments)
	}
	for i, p := range res.Proofs {
		q := poly.proofs[i]
		if p.Worst != q.Worst || p.At != q.At || p.At2 != q.At2 || q.AtMore[0] != phase || p.Sup != q.Sup || p.Verdict != q.Verdict {
			t.Errorf("%s: two axes %v at (%v, %v) sup %v %s; three %v at (%v, %v, %v) sup %v %s",
				p.Metric, p.Worst, p.At, p.At2, p.Sup, p.Verdict, q.Worst, q.At, q.At2, q.AtMore, q.Sup, q.Verdict)
		}
	}
}

// checkRescan takes away the largest cell of each rank and shows the
// coverage scan finding a schedule of it.
func checkRescan(t *testing.T, b *polyProver) {
	t.Helper()
	largest := map[int]*polyCell{}
	for _, c := range b.cells {
		if l := largest[c.rank]; l == nil || c.count.Cmp(l.count) > 0 {
			largest[c.rank] = c
		}
	}
	all := b.cells
	defer func() { b.cells = all; b.reindex() }()
	for rank, gone := range largest {
		b.cells = nil
		for _, c := range all {
			if c != gone {
				b.cells = append(b.cells, c)
			}
		}
		b.reindex()
		xs := b.uncovered()
		if len(xs) == 0 || !slices.ContainsFunc(xs, func(x vec) bool { return gone.contains(x, b.n) }) {
			t.Fatalf("the cell of %s (rank %d, %v schedules) taken away: the scan found %d schedules, none of it", b.text(gone.o()), rank, gone.count, len(xs))
		}
	}
}

// reindex files the cells anew.
func (b *polyProver) reindex() {
	b.buckets, b.recent = nil, nil
	for _, c := range b.cells {
		c.indexed = false
		b.index(c)
	}
}

// checkOverlapCaught moves a side of the largest full cell 1 µs out (into
// its neighbour) and wants the disjointness check to name the two.
func checkOverlapCaught(t *testing.T, b *polyProver) {
	t.Helper()
	var c *polyCell
	for _, d := range b.cells {
		if d.rank == b.n && (c == nil || d.count.Cmp(c.count) > 0) {
			c = d
		}
	}
	if c == nil {
		t.Fatal("no full cell")
	}
	poly, lo, hi := c.poly, c.lo, c.hi
	defer func() { c.poly, c.lo, c.hi = poly, lo, hi; b.reindex() }()
	var hs []halfSpace
	for _, h := range poly.hs[2*b.n:] {
		hs = append(hs, halfSpace{h.g, h.c})
	}
	if len(hs) == 0 {
		t.Fatal("the largest full cell has no side inside the box")
	}
	var steep int64
	for _, g := range hs[0].g {
		steep = max(steep, abs64(g))
	}
	hs[0].c -= 1000 * steep
	c.poly = newPolytope(b.lo[:b.n], b.hi[:b.n], hs)
	for i := range b.n {
		lo, hi := c.poly.bounds(i)
		c.lo[i], c.hi[i] = ceilRat(lo), floorRat(hi)
	}
	b.reindex()
	err := b.disjoint(context.Background())
	if err == nil || !strings.Contains(err.Error(), "in common") {
		t.Fatalf("a cell moved into its neighbour: %v, want the two named as sharing schedules", err)
	}
}
