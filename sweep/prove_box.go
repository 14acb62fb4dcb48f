package sweep

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/leaselab/leaselab/model"
)

// The box prover: two axes at once (the fault's start × its length, two
// followers' phases, a phase × the fault's start).
//
// A cell is the set of the box's integer points whose runs take the same
// path (the same events popped, every comparison's operands in the same
// order). With each clock at its fixed rate (a drifting one: on one
// residue class of the box, prove_lattice.go), every operand is affine in
// the point, so a cell is the integer points of a convex polygon: one half-plane
// g1·x1 + g2·x2 + c ≤ 0 per comparison (a strict order between integers
// is ≤ −1). The prover finds a cell from a point: the runs at the point and
// at two independent neighbours in the same cell give every operand's
// gradient (a cell whose points all lie on one line, a tie of two events, is
// a line cell: one neighbour; a single point is a point cell). Each cell is
// checked as a segment is: a run at a random point inside it must take its
// path with every operand, and every window, where the gradients put them.
//
// Coverage is certified, not assumed: two cells with different paths are
// disjoint, because a schedule runs one path and every schedule of a
// cell's polygon runs the cell's path (what the recorder guarantees: the
// recorded comparisons decide the run, in the partial order as in the full
// one, and what the interior checks test), and every pair of cells that
// could share a schedule is checked to share none (prove_box_disjoint.go),
// so when the cells' integer points, counted exactly, add up to the box's,
// every schedule of the box is in exactly one cell found. Until they do,
// the prover runs the schedules just outside each cell's edges and
// corners, then scans columns for a point no cell holds.
//
// In a cell each metric is the maximum of its windows (overlaps, gaps,
// stale leaderships), each window's length affine: the metric is convex and
// its supremum over the cell's polygon is at a vertex. That supremum (Sup)
// bounds every schedule of the cell, so a proof compares it with the bound;
// the worst schedule (Worst) is the best integer point found near those
// vertices, run again by the ordinary virtual run.

// boxCell is one cell of the box.
type boxCell struct {
	key string
	// pts are the cell's points run so far, paths their paths; o is the
	// first, the origin of the gradients.
	pts   [][2]int64
	paths []*path
	kind  int // 0 a point, 1 a line, 2 a polygon
	// dir is a line cell's direction (primitive), tlo..thi its points
	// o + t·dir.
	dir      [2]int64
	tlo, thi int64
	// grad are the comparisons' differences' gradients, wgrad the windows'
	// (per metric, per window); a line cell's along dir in [0].
	grad  [][2]int64
	wgrad [][][2]int64
	hs    []halfPlane // a polygon cell's, the box's sides among them
	poly  polygon
	count *big.Int
	// xlo..xhi are the columns the cell spans (for the coverage scan),
	// blo..bhi the buckets it is filed under.
	xlo, xhi int64
	blo, bhi int
	indexed  bool
	// cornersRun: the schedules at its corners were run (cellBound).
	cornersRun bool
}

// boxProver is one box proof.
type boxProver struct {
	*prover
	lo, hi [2]int64
	cells  []*boxCell
	byKey  map[string]*boxCell
	ran    map[[2]int64]bool
	queue  [][2]int64
	// pending are runs made while building a cell that fell into another,
	// kept until their turn in the queue.
	pending map[[2]int64]*path
	recent  []*boxCell // covered's cache
	// buckets index the cells by the columns they span: bucket k holds
	// every cell with a column in its slice of the box.
	buckets [][]*boxCell
	// proofs are the metrics' results, filled by finish.
	proofs []Proof
}

// cellKey is the identity of a path: a digest of its events and the sign
// of each comparison (kept per cell, so short).
func cellKey(pa *path) string {
	b := make([]byte, 0, 13*len(pa.pops)+len(pa.a)+8)
	for _, e := range pa.pops {
		b = append(b, e.Kind)
		b = binary.LittleEndian.AppendUint32(b, uint32(e.A))
		b = binary.LittleEndian.AppendUint32(b, uint32(e.B))
		b = binary.LittleEndian.AppendUint32(b, e.Gen)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(pa.a)))
	for k := range pa.a {
		b = append(b, byte('1'+sign(pa.a[k]-pa.b[k])))
	}
	sum := sha256.Sum256(b)
	return string(sum[:])
}

func (c *boxCell) o() [2]int64 { return c.pts[0] }

// contains reports whether the integer point x is in the cell.
func (c *boxCell) contains(x [2]int64) bool {
	o := c.o()
	switch c.kind {
	case 0:
		return x == o
	case 1:
		// x = o + t·dir, without products that could pass int64.
		d := [2]int64{x[0] - o[0], x[1] - o[1]}
		i := 0
		if c.dir[0] == 0 {
			i = 1
		}
		if d[i]%c.dir[i] != 0 {
			return false
		}
		t := d[i] / c.dir[i]
		// In range first: there o + t·dir lies in the box.
		return t >= c.tlo && t <= c.thi && d[1-i] == t*c.dir[1-i]
	}
	if x[0] < c.xlo || x[0] > c.xhi {
		return false
	}
	for _, h := range c.hs {
		if !h.holds(x) {
			return false
		}
	}
	return true
}

// column is the cell's range of x2 at column x1.
func (c *boxCell) column(x1 int64) (lo, hi int64, ok bool) {
	o := c.o()
	switch c.kind {
	case 0:
		return o[1], o[1], x1 == o[0]
	case 1:
		if c.dir[0] == 0 {
			if x1 != o[0] {
				return 0, 0, false
			}
			a, b := o[1]+c.tlo*c.dir[1], o[1]+c.thi*c.dir[1]
			return min(a, b), max(a, b), true
		}
		dx := x1 - o[0]
		if dx%c.dir[0] != 0 {
			return 0, 0, false
		}
		t := dx / c.dir[0]
		if t < c.tlo || t > c.thi {
			return 0, 0, false
		}
		return o[1] + t*c.dir[1], o[1] + t*c.dir[1], true
	}
	if x1 < c.xlo || x1 > c.xhi {
		return 0, 0, false
	}
	return columnRange(c.hs, x1)
}

func (b *boxProver) inBox(x [2]int64) bool {
	return x[0] >= b.lo[0] && x[0] <= b.hi[0] && x[1] >= b.lo[1] && x[1] <= b.hi[1]
}

// covered reports whether a cell found holds x: the cells that held the
// last points asked about first (a probe lands beside the cell that sent
// it), then all.
func (b *boxProver) covered(x [2]int64) *boxCell {
	for _, c := range b.recent {
		if c.contains(x) {
			return c
		}
	}
	if b.buckets == nil {
		return nil
	}
	for _, c := range b.buckets[b.bucket(x[0])] {
		if c.contains(x) {
			if len(b.recent) < 32 {
				b.recent = append(b.recent, c)
			} else {
				b.recent[b.rng.IntN(len(b.recent))] = c
			}
			return c
		}
	}
	return nil
}

func (b *boxProver) push(x [2]int64) {
	if b.inBox(x) && !b.ran[x] {
		b.queue = append(b.queue, x)
	}
}

func (b *boxProver) record(x [2]int64) (*path, error) {
	b.ran[x] = true
	return b.recordAt(time.Duration(x[0]), time.Duration(x[1]))
}

func (b *boxProver) boxCount() *big.Int {
	n := big.NewInt(b.hi[0] - b.lo[0] + 1)
	return n.Mul(n, big.NewInt(b.hi[1]-b.lo[1]+1))
}

func (b *boxProver) run(ctx context.Context) error {
	mid := [2]int64{(b.lo[0] + b.hi[0]) / 2, (b.lo[1] + b.hi[1]) / 2}
	b.push(mid)
	for _, x := range [][2]int64{b.lo, b.hi, {b.lo[0], b.hi[1]}, {b.hi[0], b.lo[1]}} {
		b.push(x)
	}
	want := b.boxCount()
	for {
		for len(b.queue) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if len(b.cells) >= b.s.MaxSegments {
				return errSegmentLimit
			}
			x := b.queue[0]
			b.queue = b.queue[1:]
			if c := b.covered(x); c != nil {
				// A run of another path inside a cell found: the cells
				// would overlap, and their count prove nothing.
				if pa := b.pending[x]; pa != nil && cellKey(pa) != c.key {
					return fmt.Errorf("%w: %s runs another path than the cell of %s that holds it", ErrPathMismatch, b.pointText(pointDur(x)...), b.pointText(pointDur(c.o())...))
				}
				delete(b.pending, x)
				continue
			}
			pa := b.pending[x]
			delete(b.pending, x)
			if pa == nil {
				if b.ran[x] {
					continue
				}
				var err error
				if pa, err = b.record(x); err != nil {
					return err
				}
			}
			if err := b.add(x, pa); err != nil {
				return err
			}
		}
		total := new(big.Int)
		for _, c := range b.cells {
			total.Add(total, c.count)
		}
		b.segments = len(b.cells)
		if p := b.o.Progress; p != nil {
			f, _ := new(big.Rat).SetFrac(total, want).Float64()
			p(f)
		}
		switch total.Cmp(want) {
		case 0:
			// The count certifies coverage only if no schedule is counted
			// twice.
			return b.disjoint(ctx)
		case 1:
			return fmt.Errorf("%w: the cells hold %v points, the box %v: two cells overlap", ErrPathMismatch, total, want)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		x, ok := b.uncovered()
		if ok && b.ran[x] {
			return fmt.Errorf("%w: %s was run and lies in no cell found", ErrPathMismatch, b.pointText(pointDur(x)...))
		}
		if !ok {
			return fmt.Errorf("%w: the cells hold %v of the box's %v points and no scan finds one outside them", errCoverage, total, want)
		}
		b.push(x)
	}
}

var errCoverage = errors.New("coverage not certified")

// add puts the run at x into its cell (a new one, or one whose other
// points were run before), then queues the points around the cell.
func (b *boxProver) add(x [2]int64, pa *path) error {
	key := cellKey(pa)
	c := b.byKey[key]
	if c == nil {
		c = &boxCell{key: key}
		b.byKey[key] = c
		b.cells = append(b.cells, c)
	}
	c.pts = append(c.pts, x)
	c.paths = append(c.paths, pa)
	// Neighbours in the same cell, until two independent directions.
	for _, d := range [][2]int64{{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, -1}, {1, -1}, {-1, 1}} {
		if c.rank() == 2 {
			break
		}
		y := [2]int64{x[0] + d[0], x[1] + d[1]}
		if !b.inBox(y) || b.ran[y] {
			continue
		}
		if !independent(c, y) {
			continue
		}
		q, err := b.record(y)
		if err != nil {
			return err
		}
		if cellKey(q) == key {
			c.pts = append(c.pts, y)
			c.paths = append(c.paths, q)
		} else {
			b.pending[y] = q
			b.queue = append(b.queue, y)
		}
	}
	rebuilt := false
	if c.kind != 2 || c.count == nil {
		// A polygon's gradients are final: a later point changes nothing.
		if err := b.restore(c); err != nil {
			return err
		}
		if err := b.build(c); err != nil {
			return err
		}
		rebuilt = true
	}
	for _, p := range c.pts {
		if !c.contains(p) {
			return fmt.Errorf("%w: %s ran the path of the cell of %s but lies outside the cell its comparisons make", ErrPathMismatch, b.pointText(pointDur(p)...), b.pointText(pointDur(c.o())...))
		}
	}
	b.index(c)
	if rebuilt {
		if err := b.check(c); err != nil {
			return err
		}
	}
	c.trim()
	b.probe(c)
	return nil
}

const boxBuckets = 1024

func (b *boxProver) bucket(x1 int64) int {
	w := (b.hi[0]-b.lo[0])/boxBuckets + 1
	return int((x1 - b.lo[0]) / w)
}

// index files the cell under the buckets of its columns (those not filed
// before: a cell grows as its points are found).
func (b *boxProver) index(c *boxCell) {
	if b.buckets == nil {
		b.buckets = make([][]*boxCell, boxBuckets+1)
	}
	lo, hi := b.bucket(max(c.xlo, b.lo[0])), b.bucket(min(c.xhi, b.hi[0]))
	for k := lo; k <= hi; k++ {
		if c.indexed && k >= c.blo && k <= c.bhi {
			continue
		}
		b.buckets[k] = append(b.buckets[k], c)
	}
	if !c.indexed {
		c.blo, c.bhi, c.indexed = lo, hi, true
	}
	c.blo, c.bhi = min(c.blo, lo), max(c.bhi, hi)
}

// trim keeps of the cell's runs only what is read once it is built and
// checked: their windows and checks. A box holds tens of thousands of
// cells, and a run's comparisons are thousands.
func (c *boxCell) trim() {
	for k, pa := range c.paths {
		c.paths[k] = pa.trimmed()
	}
	c.grad = nil
}

func (pa *path) trimmed() *path { return &path{ws: pa.ws, wins: pa.wins, least: pa.least} }

// restore runs again the cell's points whose comparisons were trimmed, to
// build it anew (a point or line cell that found a new direction).
func (b *boxProver) restore(c *boxCell) error {
	for k, pa := range c.paths {
		if len(pa.a) > 0 {
			continue
		}
		q, err := b.recordAt(pointDur(c.pts[k])...)
		if err != nil {
			return err
		}
		if cellKey(q) != c.key {
			return fmt.Errorf("%w: %s ran another path the second time", ErrPathMismatch, b.pointText(pointDur(c.pts[k])...))
		}
		c.paths[k] = q
	}
	return nil
}

// rank is the dimension the cell's points span so far.
func (c *boxCell) rank() int {
	if len(c.pts) < 2 {
		return 0
	}
	o := c.pts[0]
	var d [2]int64
	for _, p := range c.pts[1:] {
		e := [2]int64{p[0] - o[0], p[1] - o[1]}
		if d == ([2]int64{}) {
			d = e
			continue
		}
		if d[0]*e[1]-d[1]*e[0] != 0 {
			return 2
		}
	}
	return 1
}

// independent reports whether y adds a direction to the cell's points.
func independent(c *boxCell, y [2]int64) bool {
	o := c.pts[0]
	e := [2]int64{y[0] - o[0], y[1] - o[1]}
	if e == ([2]int64{}) {
		return false
	}
	if c.rank() == 0 {
		return true
	}
	for _, p := range c.pts[1:] {
		d := [2]int64{p[0] - o[0], p[1] - o[1]}
		if d != ([2]int64{}) {
			return d[0]*e[1]-d[1]*e[0] != 0
		}
	}
	return true
}

// build derives the cell's gradients, shape and point count from its
// points.
func (b *boxProver) build(c *boxCell) error {
	o, po := c.pts[0], c.paths[0]
	n := len(po.a)
	if err := b.sameWindows(c); err != nil {
		return err
	}
	switch c.rank() {
	case 0:
		c.kind, c.count = 0, big.NewInt(1)
		c.xlo, c.xhi = o[0], o[0]
		c.grad, c.wgrad = make([][2]int64, n), windowGrads(po, po, nil)
		return nil
	case 1:
		// One direction: the line through the cell's points.
		var e [2]int64
		var q *path
		for i, p := range c.pts[1:] {
			if p != o && len(c.paths[i+1].a) > 0 { // a trimmed run has no comparisons left
				e, q = [2]int64{p[0] - o[0], p[1] - o[1]}, c.paths[i+1]
				break
			}
		}
		g := gcd(abs64(e[0]), abs64(e[1]))
		c.kind, c.dir = 1, [2]int64{e[0] / g, e[1] / g}
		c.grad = make([][2]int64, n)
		c.tlo, c.thi = minInt64/4, maxInt64/4
		clampT := func(lo, hi int64) {
			c.tlo, c.thi = max(c.tlo, lo), min(c.thi, hi)
		}
		for k := range n {
			d0 := po.a[k] - po.b[k]
			dd := (q.a[k] - q.b[k]) - d0
			if dd%g != 0 {
				return fmt.Errorf("%w: comparison %d is not affine along %s in the cell of %s", ErrPathMismatch, k, b.stepText(c.dir), b.pointText(pointDur(o)...))
			}
			s := dd / g
			c.grad[k] = [2]int64{s, 0}
			tRange(d0, s, clampT)
		}
		for i := range 2 {
			if c.dir[i] > 0 {
				clampT(ceilDiv(b.lo[i]-o[i], c.dir[i]), floorDiv(b.hi[i]-o[i], c.dir[i]))
			} else if c.dir[i] < 0 {
				clampT(ceilDiv(o[i]-b.hi[i], -c.dir[i]), floorDiv(o[i]-b.lo[i], -c.dir[i]))
			}
		}
		if c.tlo > 0 || c.thi < 0 {
			return fmt.Errorf("%w: the line cell of %s does not hold its own point", ErrPathMismatch, b.pointText(pointDur(o)...))
		}
		c.wgrad = windowGrads(po, q, func(dd int64) ([2]int64, bool) { return [2]int64{dd / g, 0}, dd%g == 0 })
		if c.wgrad == nil {
			return fmt.Errorf("%w: a window is not affine along %s in the cell of %s", ErrPathMismatch, b.stepText(c.dir), b.pointText(pointDur(o)...))
		}
		c.count = big.NewInt(c.thi - c.tlo + 1)
		a, z := o[0]+c.tlo*c.dir[0], o[0]+c.thi*c.dir[0]
		c.xlo, c.xhi = min(a, z), max(a, z)
		return nil
	}
	// Two independent directions: solve for each gradient.
	var u, w [2]int64
	var pu, pw *path
	for i, p := range c.pts[1:] {
		if len(c.paths[i+1].a) == 0 {
			continue // trimmed: its comparisons were not kept
		}
		e := [2]int64{p[0] - o[0], p[1] - o[1]}
		if pu == nil && e != ([2]int64{}) {
			u, pu = e, c.paths[i+1]
		} else if pu != nil && u[0]*e[1]-u[1]*e[0] != 0 {
			w, pw = e, c.paths[i+1]
			break
		}
	}
	solve := func(du, dw int64) ([2]int64, bool) {
		// In big integers: a cell grown from distant points has far
		// neighbours, whose products overflow int64.
		bi := big.NewInt
		g1 := new(big.Int).Sub(new(big.Int).Mul(bi(du), bi(w[1])), new(big.Int).Mul(bi(dw), bi(u[1])))
		g2 := new(big.Int).Sub(new(big.Int).Mul(bi(u[0]), bi(dw)), new(big.Int).Mul(bi(w[0]), bi(du)))
		d := bi(0).Sub(new(big.Int).Mul(bi(u[0]), bi(w[1])), new(big.Int).Mul(bi(u[1]), bi(w[0])))
		q1, r1 := new(big.Int).QuoRem(g1, d, new(big.Int))
		q2, r2 := new(big.Int).QuoRem(g2, d, new(big.Int))
		if r1.Sign() != 0 || r2.Sign() != 0 || !q1.IsInt64() || !q2.IsInt64() {
			return [2]int64{}, false
		}
		return [2]int64{q1.Int64(), q2.Int64()}, true
	}
	c.kind = 2
	c.grad = make([][2]int64, n)
	var hs []halfPlane
	for k := range n {
		d0 := po.a[k] - po.b[k]
		g, ok := solve((pu.a[k]-pu.b[k])-d0, (pw.a[k]-pw.b[k])-d0)
		if !ok {
			return fmt.Errorf("%w: comparison %d is not affine in the cell of %s", ErrPathMismatch, k, b.pointText(pointDur(o)...))
		}
		c.grad[k] = g
		if g == ([2]int64{}) {
			continue
		}
		// d(x) = d0 + g·(x − o) = g·x + (d0 − g·o)
		cst := d0 - g[0]*o[0] - g[1]*o[1]
		switch sign(d0) {
		case -1: // d ≤ −1
			hs = append(hs, halfPlane{g[0], g[1], cst + 1})
		case 1: // d ≥ 1
			hs = append(hs, halfPlane{-g[0], -g[1], -cst + 1})
		default:
			return fmt.Errorf("%w: a tie (comparison %d) in a cell with two directions at %s", ErrPathMismatch, k, b.pointText(pointDur(o)...))
		}
	}
	c.wgrad = windowGrads(po, pu, nil)
	if c.wgrad == nil {
		return fmt.Errorf("%w: the windows differ within the cell of %s", ErrPathMismatch, b.pointText(pointDur(o)...))
	}
	for i := range c.wgrad {
		for j := range c.wgrad[i] {
			g, ok := solve(pu.wins[i][j]-po.wins[i][j], pw.wins[i][j]-po.wins[i][j])
			if !ok {
				return fmt.Errorf("%w: a window of %s is not affine in the cell of %s", ErrPathMismatch, b.s.Metrics[i], b.pointText(pointDur(o)...))
			}
			c.wgrad[i][j] = g
		}
	}
	c.hs = normalizePlanes(append(hs, boxPlanes(b.lo, b.hi)...))
	c.poly = cellPolygon(b.lo, b.hi, c.hs)
	if len(c.poly) == 0 {
		return fmt.Errorf("%w: the cell of %s is empty", ErrPathMismatch, b.pointText(pointDur(o)...))
	}
	c.count = latticeCount(b.lo, b.hi, c.hs)
	c.xlo, c.xhi = maxInt64, minInt64
	for _, v := range c.poly {
		c.xlo, c.xhi = min(c.xlo, ceilRat(v.x)), max(c.xhi, floorRat(v.x))
	}
	return nil
}

// stepText is a step d between two of the box's points, in the axes'
// times (a residue class's coordinates step by its lattice).
func (b *boxProver) stepText(d [2]int64) string {
	u := max(b.lat.unit, 1)
	return fmt.Sprintf("(%v, %v)", time.Duration(d[0]*u), time.Duration(d[1]*u))
}

// tRange narrows t so that d0 + s·t keeps d0's sign (a strict one stays
// at least 1 from 0; a tie stays a tie only if s is 0).
func tRange(d0, s int64, clamp func(lo, hi int64)) {
	switch {
	case s == 0:
	case d0 == 0:
		clamp(0, 0)
	case d0 < 0 && s > 0: // d0 + s·t ≤ −1
		clamp(minInt64/4, floorDiv(-1-d0, s))
	case d0 < 0 && s < 0:
		clamp(ceilDiv(-1-d0, s), maxInt64/4)
	case d0 > 0 && s < 0: // d0 + s·t ≥ 1
		clamp(minInt64/4, floorDiv(1-d0, s))
	case d0 > 0 && s > 0:
		clamp(ceilDiv(1-d0, s), maxInt64/4)
	}
}

// windowGrads shapes the windows' gradients like po's windows (nil when
// two runs of the cell have different windows); along a line, each
// difference to q divided by the steps (f).
func windowGrads(po, q *path, f func(dd int64) ([2]int64, bool)) [][][2]int64 {
	out := make([][][2]int64, len(po.wins))
	for i := range po.wins {
		if len(q.wins[i]) != len(po.wins[i]) {
			return nil
		}
		out[i] = make([][2]int64, len(po.wins[i]))
		if f == nil {
			continue
		}
		for j := range po.wins[i] {
			g, ok := f(q.wins[i][j] - po.wins[i][j])
			if !ok {
				return nil
			}
			out[i][j] = g
		}
	}
	return out
}

// sameWindows checks that every run of the cell has the same windows, and
// that each metric is the maximum of them.
func (b *boxProver) sameWindows(c *boxCell) error {
	return b.sameWindowsAt(c.paths, func(k int) string { return b.pointText(pointDur(c.pts[k])...) })
}

// sameWindowsAt checks that the runs of one cell (the k-th at at(k)) have
// the same windows, and that each metric is the maximum of them.
func (p *prover) sameWindowsAt(paths []*path, at func(k int) string) error {
	for k, pa := range paths {
		for i, ws := range pa.wins {
			if len(ws) != len(paths[0].wins[i]) {
				return fmt.Errorf("%w: %s has %d windows at %s, %d at %s in the same cell", ErrPathMismatch, p.s.Metrics[i], len(ws), at(k), len(paths[0].wins[i]), at(0))
			}
			w := pa.ws[i]
			var most int64
			for j, l := range ws {
				if l >= pa.least[i][j] {
					most = max(most, l)
				}
			}
			if w.Found && time.Duration(most) != w.Measured {
				return fmt.Errorf("%w: %s at %s is %v, not the maximum of its windows %v", ErrPathMismatch, w.Metric, at(k), w.Measured, ws)
			}
		}
	}
	return nil
}

func pointDur(x [2]int64) []time.Duration {
	return []time.Duration{time.Duration(x[0]), time.Duration(x[1])}
}

// predict is a value at x by its value v0 at the origin and its gradient
// g (along dir for a line cell).
func (c *boxCell) predict(v0 int64, g [2]int64, x [2]int64) int64 {
	o := c.o()
	if c.kind == 1 {
		t := c.tOf(x)
		return v0 + g[0]*t
	}
	return v0 + g[0]*(x[0]-o[0]) + g[1]*(x[1]-o[1])
}

func (c *boxCell) tOf(x [2]int64) int64 {
	o := c.o()
	if c.dir[0] != 0 {
		return (x[0] - o[0]) / c.dir[0]
	}
	return (x[1] - o[1]) / c.dir[1]
}

// check runs random points of the cell (Interior, default 1) and
// verifies that each takes the cell's path with every comparison and
// window where the gradients put them.
func (b *boxProver) check(c *boxCell) error {
	n := b.o.Interior
	if n == 0 {
		n = 1
	}
	if c.kind == 0 {
		return nil
	}
	for range n {
		var x [2]int64
		if c.kind == 1 {
			t := c.tlo + b.rng.Int64N(c.thi-c.tlo+1)
			x = [2]int64{c.o()[0] + t*c.dir[0], c.o()[1] + t*c.dir[1]}
		} else {
			// A thin slanted cell has points in few columns: try several.
			var ok bool
			for try := 0; try < 64 && !ok; try++ {
				col := c.xlo + b.rng.Int64N(c.xhi-c.xlo+1)
				var lo, hi int64
				if lo, hi, ok = c.column(col); ok {
					x = [2]int64{col, lo + b.rng.Int64N(hi-lo+1)}
				}
			}
			if !ok {
				x = c.pts[b.rng.IntN(len(c.pts))]
			}
		}
		pa, err := b.recordAt(pointDur(x)...)
		if err != nil {
			return err
		}
		if cellKey(pa) != c.key {
			return fmt.Errorf("%w: %s, inside the cell of %s, took another path (%d comparisons and %d events against %d and %d)",
				ErrPathMismatch, b.pointText(pointDur(x)...), b.pointText(pointDur(c.o())...), len(pa.a), len(pa.pops), len(c.paths[0].a), len(c.paths[0].pops))
		}
		po := c.paths[0]
		for i := range po.wins {
			if len(pa.wins[i]) != len(po.wins[i]) {
				return fmt.Errorf("%w: %s, inside the cell of %s, has %d %s windows, not %d (%v against %v)",
					ErrPathMismatch, b.pointText(pointDur(x)...), b.pointText(pointDur(c.o())...), len(pa.wins[i]), b.s.Metrics[i], len(po.wins[i]), pa.wins[i], po.wins[i])
			}
		}
		for k := range po.a {
			if want := c.predict(po.a[k]-po.b[k], c.grad[k], x); pa.a[k]-pa.b[k] != want {
				return fmt.Errorf("%w: %s: comparison %d of the cell of %s differs by %v where its gradient puts %v",
					ErrPathMismatch, b.pointText(pointDur(x)...), k, b.pointText(pointDur(c.o())...), time.Duration(pa.a[k]-pa.b[k]), time.Duration(want))
			}
		}
		for i := range po.wins {
			for j := range po.wins[i] {
				if want := c.predict(po.wins[i][j], c.wgrad[i][j], x); pa.wins[i][j] != want {
					return fmt.Errorf("%w: %s: a %s window of the cell of %s is %v where its gradient puts %v",
						ErrPathMismatch, b.pointText(pointDur(x)...), b.s.Metrics[i], b.pointText(pointDur(c.o())...), time.Duration(pa.wins[i][j]), time.Duration(want))
				}
			}
		}
		c.pts, c.paths = append(c.pts, x), append(c.paths, pa.trimmed())
	}
	return nil
}

// probe queues the points just outside the cell: around its corners and
// the middles of its edges, and a step or two beyond each edge.
func (b *boxProver) probe(c *boxCell) {
	around := func(x, y *big.Rat, r int64) {
		fx, fy := floorRat(x), floorRat(y)
		for dx := -r; dx <= r+1; dx++ {
			for dy := -r; dy <= r+1; dy++ {
				p := [2]int64{fx + dx, fy + dy}
				if b.inBox(p) && !b.ran[p] && !c.contains(p) {
					b.push(p)
				}
			}
		}
	}
	o := c.o()
	switch c.kind {
	case 0:
		around(new(big.Rat).SetInt64(o[0]), new(big.Rat).SetInt64(o[1]), 1)
	case 1:
		for _, t := range []int64{c.tlo, c.thi, (c.tlo + c.thi) / 2} {
			around(new(big.Rat).SetInt64(o[0]+t*c.dir[0]), new(big.Rat).SetInt64(o[1]+t*c.dir[1]), 1)
		}
	default:
		n := len(c.poly)
		half := big.NewRat(1, 2)
		for i, v := range c.poly {
			around(v.x, v.y, 1)
			w := c.poly[(i+1)%n]
			mx := new(big.Rat).Mul(new(big.Rat).Add(v.x, w.x), half)
			my := new(big.Rat).Mul(new(big.Rat).Add(v.y, w.y), half)
			around(mx, my, 1)
		}
	}
}

// uncovered finds a point of the box no cell holds: the columns at and
// around every cell's ends, then random columns.
func (b *boxProver) uncovered() ([2]int64, bool) {
	var cols []int64
	for _, c := range b.cells {
		for _, x := range []int64{c.xlo - 1, c.xlo, c.xhi, c.xhi + 1} {
			if x >= b.lo[0] && x <= b.hi[0] {
				cols = append(cols, x)
			}
		}
	}
	for range 256 {
		cols = append(cols, b.lo[0]+b.rng.Int64N(b.hi[0]-b.lo[0]+1))
	}
	slices.Sort(cols)
	cols = slices.Compact(cols)
	for _, col := range cols {
		type iv struct{ lo, hi int64 }
		var ivs []iv
		for _, c := range b.cells {
			if col < c.xlo || col > c.xhi {
				continue
			}
			if lo, hi, ok := c.column(col); ok {
				ivs = append(ivs, iv{lo, hi})
			}
		}
		slices.SortFunc(ivs, func(a, b iv) int { return int(sign(a.lo - b.lo)) })
		next := b.lo[1]
		for _, v := range ivs {
			if v.lo > next {
				break
			}
			next = max(next, v.hi+1)
		}
		if next <= b.hi[1] {
			return [2]int64{col, next}, true
		}
	}
	return [2]int64{}, false
}

// metricAt is metric i at x by the cell's window gradients (0 when it has
// no window).
func (c *boxCell) metricAt(i int, x [2]int64) int64 {
	po := c.paths[0]
	var v int64
	for j := range po.wins[i] {
		if l := c.predict(po.wins[i][j], c.wgrad[i][j], x); l >= po.least[i][j] {
			v = max(v, l)
		}
	}
	return v
}

// supremum is metric i's largest value over the cell's real polygon (at a
// vertex: a maximum of affine functions), and the vertex.
func (c *boxCell) supremum(i int) (*big.Rat, ratPoint) {
	po := c.paths[0]
	o := c.o()
	var best *big.Rat
	var at ratPoint
	for _, v := range c.poly {
		m := new(big.Rat)
		for j := range po.wins[i] {
			g := c.wgrad[i][j]
			w := new(big.Rat).SetInt64(po.wins[i][j])
			w.Add(w, new(big.Rat).Mul(new(big.Rat).SetInt64(g[0]), new(big.Rat).Sub(v.x, new(big.Rat).SetInt64(o[0]))))
			w.Add(w, new(big.Rat).Mul(new(big.Rat).SetInt64(g[1]), new(big.Rat).Sub(v.y, new(big.Rat).SetInt64(o[1]))))
			// A window too short to count at this vertex counts nowhere
			// in the cell where the vertex is its longest.
			if w.Cmp(m) > 0 && w.Cmp(new(big.Rat).SetInt64(po.least[i][j])) >= 0 {
				m = w
			}
		}
		if best == nil || m.Cmp(best) > 0 {
			best, at = m, v
		}
	}
	return best, at
}

// candidates are the cell's integer points where a metric may be largest:
// those run, a line's two ends, and the points of the cell around v, its
// polygon's best vertex for the metric.
func (c *boxCell) candidates(v ratPoint) [][2]int64 {
	out := slices.Clone(c.pts)
	o := c.o()
	switch c.kind {
	case 1:
		for _, t := range []int64{c.tlo, c.thi} {
			out = append(out, [2]int64{o[0] + t*c.dir[0], o[1] + t*c.dir[1]})
		}
	case 2:
		fx, fy := floorRat(v.x), floorRat(v.y)
		for dx := int64(-2); dx <= 3; dx++ {
			for dy := int64(-2); dy <= 3; dy++ {
				if p := [2]int64{fx + dx, fy + dy}; c.contains(p) {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// finish takes each metric's worst, supremum and closest approach to its
// bound over the cells, and the verdicts.
func (b *boxProver) finish() error {
	b.segments = len(b.cells)
	for i, m := range b.s.Metrics {
		pr := Proof{Metric: m, Verdict: VerdictNone}
		var (
			found, seen bool
			worstAt     [2]int64
			excessAt    [2]int64
			supExcess   *big.Rat
		)
		for _, c := range b.cells {
			w := c.paths[0].ws[i]
			pr.countUnknown(w)
			pr.notMeasured(w, b.pointText(pointDur(c.o())...))
			if !w.Found {
				continue
			}
			bound, varies, err := b.cellBound(c, i)
			if err != nil {
				return err
			}
			pr.BoundVaries = pr.BoundVaries || varies
			// A polygon's supremum is at a vertex; a line's or a point's is
			// at a schedule among the candidates (its ends).
			var sup *big.Rat
			var vertex ratPoint
			if c.kind == 2 {
				sup, vertex = c.supremum(i)
			}
			var most int64
			for _, x := range c.candidates(vertex) {
				v := time.Duration(c.metricAt(i, x))
				most = max(most, int64(v))
				// Of equal values, the smallest point, as the walk's.
				if !found || v > pr.Worst || v == pr.Worst && (x[0] < worstAt[0] || x[0] == worstAt[0] && x[1] < worstAt[1]) {
					pr.Worst, worstAt = v, x
					pr.Bound, pr.Formula = bound, w.Formula
				}
				found = true
				if bound != model.Unbounded && (!seen || v-bound > pr.Excess) {
					seen = true
					pr.Excess, excessAt = v-bound, x
				}
			}
			if sup == nil {
				sup = new(big.Rat).SetInt64(most)
			}
			if s := ceilRat(sup); time.Duration(s) > pr.Sup {
				pr.Sup = time.Duration(s)
			}
			if bound != model.Unbounded {
				e := new(big.Rat).Sub(sup, new(big.Rat).SetInt64(int64(bound)))
				if supExcess == nil || e.Cmp(supExcess) > 0 {
					supExcess = e
				}
			}
		}
		if err := b.settle(&pr, i, found, seen, pointDur(worstAt), pointDur(excessAt), supExcess, "polygon"); err != nil {
			return err
		}
		b.proofs = append(b.proofs, pr)
	}
	return nil
}

// settle finishes a box proof's metric i once its cells are taken: the
// worst schedule replayed by the ordinary run (which must measure the
// same), the counterexample confirmed against its schedule's own bound,
// and the verdict, which compares the cells' supremum over their real
// shapes (polygons, polytopes) with the bound.
func (p *prover) settle(pr *Proof, i int, found, seen bool, worstAt, excessAt []time.Duration, supExcess *big.Rat, shape string) error {
	pr.found, pr.seen = found, seen
	if found {
		pr.setAt(worstAt)
		rep, err := p.replayAt(i, worstAt...)
		if err != nil {
			return err
		}
		if rep.Measured != pr.Worst {
			return fmt.Errorf("%w: the ordinary run of %s measures %s %v, the cell's gradients %v", ErrPathMismatch, p.pointText(worstAt...), pr.Metric, rep.Measured, pr.Worst)
		}
		pr.Replayed = rep.Measured
	}
	if seen {
		pr.setExcessAt(excessAt)
	}
	switch {
	case pr.NotMeasured > 0 && (!found || !seen || pr.Excess <= 0):
		// Short of a counterexample, a worst not known everywhere.
		pr.Verdict, pr.Why = VerdictIncomplete, pr.notMeasuredWhy()
	case !found || !seen:
		pr.Why = pr.UnknownWhy
		if found {
			pr.Why = "no bound applies"
		}
	case pr.Excess > 0:
		// Confirm on the ordinary run, against that schedule's own bound.
		rep, err := p.replayAt(i, excessAt...)
		if err != nil {
			return err
		}
		if e := rep.Measured - rep.Predicted; e > 0 {
			pr.Verdict, pr.Excess = VerdictCounterexample, e
		} else {
			pr.Verdict = VerdictIncomplete
			pr.Why = fmt.Sprintf("the bound varies inside a cell: %s is %v there, within its own bound %v but above the cell's lowest", p.pointText(excessAt...), rep.Measured, rep.Predicted)
		}
	case supExcess != nil && supExcess.Sign() > 0:
		pr.Verdict = VerdictIncomplete
		pr.Why = fmt.Sprintf("no schedule found exceeds the bound, but a cell's supremum over its real %s does, by %v", shape, time.Duration(ceilRat(supExcess)))
	default:
		pr.Verdict = VerdictProven
		if supExcess != nil {
			// The margin a proof has is the supremum's, not the worst found.
			pr.Excess = time.Duration(ceilRat(supExcess))
		}
	}
	return nil
}

// cellBound is the least bound of metric i over the cell: over its runs,
// and, where those differ (the bound reads the run's analysis, not its
// path: a partition's length moves it), over runs at the schedules
// nearest its polygon's corners too, where a bound monotone in the axes
// is least.
func (b *boxProver) cellBound(c *boxCell, i int) (time.Duration, bool, error) {
	bound, varies := c.paths[0].ws[i].Predicted, false
	for _, pa := range c.paths[1:] {
		if pa.ws[i].Predicted != bound {
			varies = true
			bound = min(bound, pa.ws[i].Predicted)
		}
	}
	if !varies || c.kind != 2 || c.cornersRun {
		return bound, varies, nil
	}
	c.cornersRun = true
	for _, v := range c.poly {
		fx, fy := floorRat(v.x), floorRat(v.y)
	near:
		for _, d := range [][2]int64{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {-1, 0}, {0, -1}, {2, 0}, {0, 2}, {-1, -1}, {2, 2}} {
			p := [2]int64{fx + d[0], fy + d[1]}
			if !c.contains(p) || slices.Contains(c.pts, p) {
				continue
			}
			pa, err := b.recordAt(pointDur(p)...)
			if err != nil {
				return 0, false, err
			}
			if cellKey(pa) != c.key {
				return 0, false, fmt.Errorf("%w: %s, a corner of the cell of %s, took another path", ErrPathMismatch, b.pointText(pointDur(p)...), b.pointText(pointDur(c.o())...))
			}
			c.pts, c.paths = append(c.pts, p), append(c.paths, pa.trimmed())
			break near
		}
	}
	bound = c.paths[0].ws[i].Predicted
	for _, pa := range c.paths[1:] {
		bound = min(bound, pa.ws[i].Predicted)
	}
	return bound, true, nil
}

// proveBoxResult is Prove over a box of two axes, on the points of one
// residue class.
func proveBoxResult(ctx context.Context, s ProveSpace, o ProveOptions, lat lattice) (*ProveResult, error) {
	var lo, hi, tlo, thi [2]int64
	for i, r := range s.Vary {
		a, _ := time.ParseDuration(r.Lo)
		z, _ := time.ParseDuration(r.Hi)
		tlo[i], thi[i] = int64(a), int64(z)
		ulo, uhi := lat.coords(i, a, z)
		lo[i], hi[i] = int64(ulo), int64(uhi)
	}
	start := time.Now()
	p := &prover{s: s, o: o, lat: lat, axis: s.Vary[0].Param, axes: []string{s.Vary[0].Param, s.Vary[1].Param},
		lo: time.Duration(lo[0]), hi: time.Duration(hi[0]), rng: rand.New(rand.NewPCG(uint64(s.Seed), 0x9e0f))}
	res := newBoxResult(s)
	b := &boxProver{prover: p, lo: lo, hi: hi, byKey: map[string]*boxCell{}, ran: map[[2]int64]bool{}, pending: map[[2]int64]*path{}}
	err := b.run(ctx)
	if err == nil {
		err = b.finish()
	}
	res.Segments, res.Runs = len(b.cells), p.runs
	if err != nil {
		if errors.Is(err, errSegmentLimit) || errors.Is(err, errCoverage) || ctx.Err() != nil {
			res.Complete = false
			res.Incomplete = fmt.Sprintf("stopped after %d cells: %v", len(b.cells), err)
			if err := b.finish(); err != nil {
				return nil, err
			}
			for i := range b.proofs {
				if b.proofs[i].Verdict == VerdictProven {
					b.proofs[i].Verdict, b.proofs[i].Why = VerdictIncomplete, "the cells found do not cover the box"
				}
			}
		} else {
			return nil, err
		}
	}
	for i := range b.proofs {
		pr := &b.proofs[i]
		pr.At, pr.At2 = lat.at(0, pr.At), lat.at(1, pr.At2)
		pr.ExcessAt, pr.ExcessAt2 = lat.at(0, pr.ExcessAt), lat.at(1, pr.ExcessAt2)
	}
	res.Proofs = b.proofs
	res.Maps = b.maps(tlo, thi)
	res.Elapsed = time.Since(start)
	return res, nil
}

// newBoxResult is the result of a box proof of the space, before it is
// proven.
func newBoxResult(s ProveSpace) *ProveResult {
	res := &ProveResult{Format: FormatVersion, Space: s, Complete: true}
	for i, r := range s.Vary {
		a, _ := time.ParseDuration(r.Lo)
		z, _ := time.ParseDuration(r.Hi)
		switch i {
		case 0:
			res.Axis, res.Lo, res.Hi = r.Param, a, z
		case 1:
			res.Axis2, res.Lo2, res.Hi2 = r.Param, a, z
		default:
			res.More = append(res.More, ProveAxis{r.Param, a, z})
		}
	}
	return res
}

// ProveMap is one metric over a grid of a box's schedules, for its
// report: V[j][i] is its exact value at the schedule (X[i], Y[j]), from
// the windows of the cell holding it; Known[j][i] is false where no cell
// found holds it or its cell's runs measure no value. A box of more than
// two axes is mapped on the plane of its first two through the metric's
// worst schedule: Through are that schedule's other coordinates.
type ProveMap struct {
	Metric  string
	X, Y    []time.Duration
	Through []time.Duration
	V       [][]time.Duration
	Known   [][]bool
	// here marks the schedules of the residue class that drew the map.
	here [][]bool
}

// Map grid sizes.
const mapColumns, mapRows = 160, 100

// maps samples each metric over the box from lo to hi (times, not the
// class's coordinates): a schedule of another residue class is left for
// that class's map.
func (b *boxProver) maps(lo, hi [2]int64) []ProveMap {
	if len(b.s.Metrics) == 0 {
		return nil
	}
	xs, ys := mapGrid(lo[0], hi[0], mapColumns), mapGrid(lo[1], hi[1], mapRows)
	out := make([]ProveMap, len(b.s.Metrics))
	for i, m := range b.s.Metrics {
		out[i] = ProveMap{Metric: m, X: xs, Y: ys}
	}
	for _, y := range ys {
		for i := range out {
			mp := &out[i]
			mp.V, mp.Known, mp.here = append(mp.V, make([]time.Duration, len(xs))), append(mp.Known, make([]bool, len(xs))), append(mp.here, make([]bool, len(xs)))
		}
		j := len(out[0].V) - 1
		for k, x := range xs {
			u, ok := b.lat.point(int64(x), int64(y))
			if !ok {
				continue
			}
			c := b.holds(u)
			for i := range out {
				out[i].here[j][k] = true
				if c != nil && c.paths[0].ws[i].Found {
					out[i].V[j][k], out[i].Known[j][k] = time.Duration(c.metricAt(i, u)), true
				}
			}
		}
	}
	return out
}

// mapGrid is n times from lo to hi, both edges among them (fewer when the
// range holds fewer).
func mapGrid(lo, hi int64, n int) []time.Duration {
	n = int(min(int64(n), hi-lo+1))
	xs := make([]time.Duration, n)
	for k := range n {
		xs[k] = time.Duration(lo)
		if n > 1 {
			// The box's span is far below 2⁶³/n.
			xs[k] += time.Duration((hi - lo) * int64(k) / int64(n-1))
		}
	}
	return xs
}

// holds is the cell found that holds x, if any (covered, without its
// cache).
func (b *boxProver) holds(x [2]int64) *boxCell {
	if b.buckets == nil || !b.inBox(x) {
		return nil
	}
	for _, c := range b.buckets[b.bucket(x[0])] {
		if c.contains(x) {
			return c
		}
	}
	return nil
}
