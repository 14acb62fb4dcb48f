package sweep

import (
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/sim/virtual"
)

// boxOf proves partition-blackhole over a small box of the fault's start
// × its length and returns the prover, its cells found.
func boxOf(t *testing.T, lo, hi [2]time.Duration) (*boxProver, *ProveResult) {
	t.Helper()
	return boxOver(t, [2]string{ParamAt, ParamFor}, lo, hi, ProveOptions{})
}

// boxOver proves partition-blackhole over the box of two axes.
func boxOver(t *testing.T, axes [2]string, lo, hi [2]time.Duration, o ProveOptions) (*boxProver, *ProveResult) {
	t.Helper()
	sc := builtinScenario(t, "partition-blackhole")
	s := ProveSpace{Base: sc, Vary: []Range{
		{Param: axes[0], Lo: lo[0].String(), Hi: hi[0].String()},
		{Param: axes[1], Lo: lo[1].String(), Hi: hi[1].String()},
	}}.withDefaults()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	p := &prover{s: s, o: o, axis: axes[0], axes: axes[:], rng: rand.New(rand.NewPCG(1, 2))}
	b := &boxProver{prover: p, lo: [2]int64{int64(lo[0]), int64(lo[1])}, hi: [2]int64{int64(hi[0]), int64(hi[1])},
		byKey: map[string]*boxCell{}, ran: map[[2]int64]bool{}, pending: map[[2]int64]*path{}}
	if err := b.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := b.finish(); err != nil {
		t.Fatal(err)
	}
	return b, &ProveResult{Space: s, Axis: axes[0], Axis2: axes[1], Proofs: b.proofs}
}

// TestProveBoxCells: the cells a box proof finds partition the box. Random
// schedules of the box (and a grid) each lie in exactly one cell, run the
// path that cell recorded, and measure no metric above the proof's worst;
// the cells' counts add up to the box's. Over the fault's start × length,
// and over both followers' phases, where the partial order leaves their
// attempts unordered.
func TestProveBoxCells(t *testing.T) {
	t.Run("at×for", func(t *testing.T) {
		testBoxCells(t, [2]string{ParamAt, ParamFor}, [2]time.Duration{2400 * time.Millisecond, 9 * time.Second}, [2]time.Duration{2700 * time.Millisecond, 11 * time.Second}, 100)
	})
	t.Run("start1×start2", func(t *testing.T) {
		testBoxCells(t, [2]string{"start1", "start2"}, [2]time.Duration{3950 * time.Millisecond, 3950 * time.Millisecond}, [2]time.Duration{4050 * time.Millisecond, 4050 * time.Millisecond}, 20)
	})
}

func testBoxCells(t *testing.T, axes [2]string, lo, hi [2]time.Duration, least int) {
	b, res := boxOver(t, axes, lo, hi, ProveOptions{})
	if len(b.cells) < least {
		t.Fatalf("%d cells: want the box cut finely (at least %d)", len(b.cells), least)
	}
	total := new(big.Int)
	kinds := map[int]int{}
	for _, c := range b.cells {
		total.Add(total, c.count)
		kinds[c.kind]++
	}
	if total.Cmp(b.boxCount()) != 0 {
		t.Fatalf("the cells hold %v points, the box %v", total, b.boxCount())
	}
	t.Logf("%d cells (%d polygons, %d lines, %d points), %d runs", len(b.cells), kinds[2], kinds[1], kinds[0], b.runs)
	rng := rand.New(rand.NewPCG(7, 8))
	var pts [][2]int64
	for range 300 {
		pts = append(pts, [2]int64{b.lo[0] + rng.Int64N(b.hi[0]-b.lo[0]+1), b.lo[1] + rng.Int64N(b.hi[1]-b.lo[1]+1)})
	}
	// Where the worst schedules sit: a few nanoseconds around them.
	for _, pr := range res.Proofs {
		for dx := int64(-2); dx <= 2; dx++ {
			for dy := int64(-2); dy <= 2; dy++ {
				pts = append(pts, [2]int64{int64(pr.At) + dx, int64(pr.At2) + dy})
			}
		}
	}
	for _, x := range pts {
		if !b.inBox(x) {
			continue
		}
		var in []*boxCell
		for _, c := range b.cells {
			if c.contains(x) {
				in = append(in, c)
			}
		}
		if len(in) != 1 {
			t.Fatalf("%v lies in %d cells, want 1", x, len(in))
		}
		pa, err := b.recordAt(pointDur(x)...)
		if err != nil {
			t.Fatal(err)
		}
		if cellKey(pa) != in[0].key {
			t.Fatalf("%v runs another path than its cell's (of %v)", x, in[0].o())
		}
		for i, w := range pa.ws {
			if w.Found && w.Measured > res.Proofs[i].Worst {
				t.Errorf("%s at %v is %v, above the proof's worst %v", w.Metric, x, w.Measured, res.Proofs[i].Worst)
			}
			if w.Found && int64(w.Measured) != in[0].metricAt(i, x) {
				t.Errorf("%s at %v is %v, its cell's gradients put %v", w.Metric, x, w.Measured, time.Duration(in[0].metricAt(i, x)))
			}
		}
	}
	// No two cells share a schedule; one grown into its neighbours does.
	start := time.Now()
	if err := b.disjoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Logf("disjoint: %d cells checked in %v", len(b.cells), time.Since(start))
	growCellIntoNeighbours(t, b)

	// A cell taken away leaves points the coverage scan finds.
	c := b.cells[len(b.cells)/2]
	b.cells = append(b.cells[:len(b.cells)/2:len(b.cells)/2], b.cells[len(b.cells)/2+1:]...)
	b.buckets, b.recent = nil, nil
	for _, d := range b.cells {
		d.indexed = false
		b.index(d)
	}
	x, ok := b.uncovered()
	if !ok {
		t.Fatalf("a cell of %v points removed, the scan finds none uncovered", c.count)
	}
	if !c.contains(x) {
		t.Errorf("the scan finds %v uncovered, outside the removed cell", x)
	}
}

// growCellIntoNeighbours moves every side of the box's largest polygon
// cell (but the box's own) 1 µs out, and of its longest line cell one
// point further each way, and wants each caught by the disjointness check
// (then puts them back).
func growCellIntoNeighbours(t *testing.T, b *boxProver) {
	t.Helper()
	var poly, line *boxCell
	for _, c := range b.cells {
		if c.kind == 2 && (poly == nil || c.count.Cmp(poly.count) > 0) {
			poly = c
		}
		// A line whose next point either way is in the box (else it
		// would leave the box, not enter a cell).
		grows := c.kind == 1 && (b.inBox(c.lineEnd(c.tlo-1)) || b.inBox(c.lineEnd(c.thi+1)))
		if grows && (line == nil || c.thi-c.tlo > line.thi-line.tlo) {
			line = c
		}
	}
	sides := boxPlanes(b.lo, b.hi)
	hs, pg, xlo, xhi := poly.hs, poly.poly, poly.xlo, poly.xhi
	grown := make([]halfPlane, 0, len(hs))
	for _, h := range hs {
		if !slices.Contains(sides, h) {
			h.c -= 1000
		}
		grown = append(grown, h)
	}
	poly.hs = grown
	poly.poly = cellPolygon(b.lo, b.hi, grown)
	for _, v := range poly.poly {
		poly.xlo, poly.xhi = min(poly.xlo, ceilRat(v.x)), max(poly.xhi, floorRat(v.x))
	}
	b.index(poly)
	if err := b.disjoint(context.Background()); !errors.Is(err, ErrPathMismatch) || !strings.Contains(err.Error(), "in common") {
		t.Errorf("a polygon cell of %v grown 1µs past its sides: %v, want two cells with schedules in common", poly.count, err)
	} else {
		t.Logf("grown polygon: %v", err)
	}
	poly.hs, poly.poly, poly.xlo, poly.xhi = hs, pg, xlo, xhi
	if line == nil {
		t.Fatal("no line cell whose next point is in the box")
	}
	tlo, thi := line.tlo, line.thi
	line.tlo, line.thi = tlo-1, thi+1
	r := line.rect()
	line.xlo, line.xhi = r.xlo, r.xhi
	b.index(line)
	err := b.disjoint(context.Background())
	line.tlo, line.thi = tlo, thi
	r = line.rect()
	line.xlo, line.xhi = r.xlo, r.xhi
	if !errors.Is(err, ErrPathMismatch) {
		t.Errorf("a line cell grown by a point each way: %v, want two cells sharing a schedule", err)
	} else {
		t.Logf("grown line: %v", err)
	}
}

// TestProveBoxAgreesWithTheWalk: a box whose second axis is one value is
// the one-axis walk: its cells the walk's segments, the same worst values
// at the same schedules.
func TestProveBoxAgreesWithTheWalk(t *testing.T) {
	sc := builtinScenario(t, "partition-blackhole")
	length := sc.Faults[0].For
	lo, hi := 2*time.Second, 3500*time.Millisecond
	walk, err := Prove(context.Background(), ProveSpace{Base: sc, Vary: []Range{{Param: ParamAt, Lo: lo.String(), Hi: hi.String()}}}, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	box, err := Prove(context.Background(), ProveSpace{Base: sc, Vary: []Range{
		{Param: ParamAt, Lo: lo.String(), Hi: hi.String()}, {Param: ParamFor, Lo: length.String(), Hi: length.String()},
	}}, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !box.Complete {
		t.Fatalf("box incomplete: %s", box.Incomplete)
	}
	if walk.Segments != box.Segments {
		t.Errorf("walk: %d segments, box: %d cells", walk.Segments, box.Segments)
	}
	for i, w := range walk.Proofs {
		b := box.Proofs[i]
		t.Logf("%s: walk %v at %v, box %v at %v", w.Metric, w.Worst, w.At, b.Worst, b.At)
		if b.Worst != w.Worst || b.At != w.At || b.Verdict != w.Verdict || b.Sup != b.Worst {
			t.Errorf("%s: box worst %v (sup %v, %s) at %v, walk %v (%s) at %v", w.Metric, b.Worst, b.Sup, b.Verdict, b.At, w.Worst, w.Verdict, w.At)
		}
	}
}

// TestProveBoxWitness: the witness scenario of a box proof replays its
// worst on the ordinary virtual run.
func TestProveBoxWitness(t *testing.T) {
	_, res := boxOf(t, [2]time.Duration{2500 * time.Millisecond, 10 * time.Second}, [2]time.Duration{2550 * time.Millisecond, 10100 * time.Millisecond})
	for _, pr := range res.Proofs {
		if pr.Verdict == VerdictNone {
			continue
		}
		sc := res.WitnessScenario(pr)
		r, err := virtual.Run(sc, virtual.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ws := judge(Space{Metrics: []string{pr.Metric}}, Schedule{}, r)
		if ws[0].Measured != pr.Worst {
			t.Errorf("%s: the witness (%s) measures %v, the proof %v", pr.Metric, res.PointText(pr.At, pr.At2), ws[0].Measured, pr.Worst)
		}
	}
}

// TestProvePartialOrderAgrees: the partial order (the default) and the
// full order prove the same worst values at the same schedules, the
// partial order in no more segments or cells: along each trust built-in's
// fault start, partition-blackhole's length and first follower's phase,
// and over a box of both followers' phases.
func TestProvePartialOrderAgrees(t *testing.T) {
	type space struct {
		name string
		vary []Range
	}
	var spaces []space
	for _, name := range proveBuiltins {
		spaces = append(spaces, space{name, nil})
	}
	spaces = append(spaces,
		space{"partition-blackhole", []Range{{Param: ParamFor, Lo: "1s", Hi: "14s"}}},
		space{"partition-blackhole", []Range{{Param: "start1", Lo: "0s", Hi: "6s"}}},
		space{"partition-blackhole", []Range{{Param: "start1", Lo: "3.995s", Hi: "4.01s"}, {Param: "start2", Lo: "3.995s", Hi: "4.01s"}}},
	)
	for _, sp := range spaces {
		s := ProveSpace{Base: builtinScenario(t, sp.name), Vary: sp.vary}
		partial, err := Prove(context.Background(), s, ProveOptions{})
		if err != nil {
			t.Fatalf("%s %v: %v", sp.name, sp.vary, err)
		}
		full, err := Prove(context.Background(), s, ProveOptions{FullOrder: true})
		if err != nil {
			t.Fatalf("%s %v, the full order: %v", sp.name, sp.vary, err)
		}
		t.Logf("%s %v: %d segments or cells (%d runs) in the partial order, %d (%d runs) in the full order", sp.name, sp.vary, partial.Segments, partial.Runs, full.Segments, full.Runs)
		if !partial.Complete || !full.Complete {
			t.Fatalf("%s %v: incomplete (%s; %s)", sp.name, sp.vary, partial.Incomplete, full.Incomplete)
		}
		if partial.Segments > full.Segments {
			t.Errorf("%s %v: %d segments in the partial order, more than the full order's %d", sp.name, sp.vary, partial.Segments, full.Segments)
		}
		for i, f := range full.Proofs {
			p := partial.Proofs[i]
			if p.Worst != f.Worst || p.At != f.At || p.At2 != f.At2 || p.Verdict != f.Verdict || p.Bound != f.Bound {
				t.Errorf("%s %v %s: partial order %v at %s (%s, bound %v), full order %v at %s (%s, bound %v)", sp.name, sp.vary, f.Metric,
					p.Worst, partial.PointText(p.At, p.At2), p.Verdict, p.Bound, f.Worst, full.PointText(f.At, f.At2), f.Verdict, f.Bound)
			}
		}
	}
}

// TestProveBoxNeverBelowSearch: chaos explore over the same box (the
// fault's start over its window × the partition's length, the followers'
// starts fixed, one seed) never finds a worse schedule than the box's
// proven worst, for any metric.
func TestProveBoxNeverBelowSearch(t *testing.T) {
	sc := builtinScenario(t, "partition-blackhole")
	sc.Faults[0].At = 2550 * time.Millisecond
	const window = 300 * time.Millisecond
	lo, hi := sc.Faults[0].At-window/2, sc.Faults[0].At+window/2
	lengths := Range{Param: ParamFor, Lo: "9.5s", Hi: "10.5s"}
	res, err := Prove(context.Background(), ProveSpace{Base: sc, Vary: []Range{{Param: ParamAt, Lo: lo.String(), Hi: hi.String()}, lengths}}, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete {
		t.Fatalf("the box is incomplete: %s", res.Incomplete)
	}
	ex, err := Explore(context.Background(), Space{Base: sc, Metrics: res.Space.Metrics, Vary: []Range{lengths}, Window: window,
		Seeds: 1, FirstSeed: res.Space.Seed, Budget: 400, FixedStarts: true}, ExploreOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range ex.Worst {
		pr := res.Proofs[i]
		t.Logf("%s: proven %v at %s (%s, %d cells), explore %v", w.Metric, pr.Worst, res.PointText(pr.At, pr.At2), pr.Verdict, res.Segments, w.Measured)
		if w.Found && (len(w.Schedule.At) != 1 || w.Schedule.At[0] < lo || w.Schedule.At[0] > hi) {
			t.Errorf("%s: explore's worst starts at %v, outside the box's %v..%v", w.Metric, w.Schedule.At, lo, hi)
		}
		if w.Found && w.Measured > pr.Worst {
			t.Errorf("%s: explore finds %v, above the proven worst %v", w.Metric, w.Measured, pr.Worst)
		}
	}
}

// TestProvePartialOrderTies: a leader whose renewal retries against a
// refused connection sleeps to its context's deadline, due at the very
// instant the follower's winning reply arrives: whether the leader's loss
// or the follower's gain comes first is decided by which was queued
// first, that is by their creators' order (the review's counterexample,
// which made the partial order's walk fail with ErrPathMismatch before
// the creators' order was recorded). The partial and the full order
// prove the range, with the same worst values.
func TestProvePartialOrderTies(t *testing.T) {
	sc := builtinScenario(t, "partition-refuse")
	sc.Instances = 2
	sc.Params.Client.MaxRetries = 40
	sc.Params.OpTimeout = 5728008893 * time.Nanosecond
	sc.Starts = []time.Duration{0, 4732008893 * time.Nanosecond}
	sc.Faults[0].For = 14 * time.Second
	sc.Duration = 24 * time.Second
	spaces := [][]Range{
		{{Param: ParamAt, Lo: "5.021955s", Hi: "5.021995s"}},
		{{Param: ParamAt, Lo: "5.021955s", Hi: "5.021995s"}, {Param: "start1", Lo: "4.732008883s", Hi: "4.732008903s"}},
	}
	for _, vary := range spaces {
		s := ProveSpace{Base: sc, Seed: 1, Vary: vary}
		partial, err := Prove(context.Background(), s, ProveOptions{Interior: 5})
		if err != nil {
			t.Fatalf("%v: %v", vary, err)
		}
		full, err := Prove(context.Background(), s, ProveOptions{FullOrder: true, Interior: 5})
		if err != nil {
			t.Fatalf("%v, the full order: %v", vary, err)
		}
		t.Logf("%v: %d segments or cells (full order %d)", vary, partial.Segments, full.Segments)
		if !partial.Complete || !full.Complete {
			t.Fatalf("%v: incomplete (%s; %s)", vary, partial.Incomplete, full.Incomplete)
		}
		for i, f := range full.Proofs {
			// The same value may be the worst at several schedules (the
			// gap's 10 ns here): the worst must agree, not where.
			if p := partial.Proofs[i]; p.Worst != f.Worst || p.Verdict != f.Verdict {
				t.Errorf("%v %s: partial order %v at %v/%v, full order %v at %v/%v", vary, f.Metric, p.Worst, p.At, p.At2, f.Worst, f.At, f.At2)
			}
		}
	}
}
