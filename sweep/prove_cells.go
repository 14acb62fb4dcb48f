package sweep

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/leaselab/leaselab/model"
)

// The polytope prover: a box of up to four axes (the fault's start and
// length and two followers' phases).
//
// Its model is the box prover's (prove_box.go), one dimension up: a cell
// is the set of the box's integer points whose runs take one path, the
// integer points of a convex polytope, one half-space per comparison.
// A cell is found from a point and its neighbours in the same cell (the
// unit steps, then the diagonal ones), as many independent as the box has
// axes. When fewer exist (a tie of two events: the cell is flat), the cell
// is held to the affine hull of the points found, written as equalities
// (pairs of opposite half-spaces), so that every cell, whatever its
// dimension, is one polytope of the box's space: its vertices give each
// metric's supremum and its integer points are counted exactly
// (polytope.go). A flat cell's gradients are known only along its hull:
// they are solved on a few of the axes (a minor of the found directions)
// and kept as integers over one denominator per cell.
//
// Coverage and disjointness are certified as in two dimensions: the
// cells' counts add up to the box's, and every pair of cells that could
// share a schedule shares none (a half-space of one leaves every vertex
// of the other strictly outside, or their common polytope holds no integer
// point).

// maxAxes is the most axes a box proof takes.
const maxAxes = 4

// vec is a point of the box (coordinates past its axes are 0).
type vec [maxAxes]int64

// polyCell is one cell of a box of up to four axes.
type polyCell struct {
	key   string
	pts   []vec
	paths []*path
	// dirs are independent differences of found points from the first;
	// rank is how many.
	dirs []vec
	rank int
	// builtRank is the rank it was last built with: a cell of full rank
	// is final, a flat one is built again as it grows.
	builtRank int
	// grad are the comparisons' differences' slopes, wgrad the windows'.
	grad  []slope
	wgrad [][]slope
	poly  *polytope
	count *big.Int
	// lo..hi bound its integer points; blo..bhi are the buckets it is
	// filed under.
	lo, hi     vec
	blo, bhi   [2]int
	indexed    bool
	cornersRun bool
}

func (c *polyCell) o() vec { return c.pts[0] }

// polyProver is one proof over a box of up to four axes.
type polyProver struct {
	*prover
	n       int
	lo, hi  vec
	cells   []*polyCell
	byKey   map[string]*polyCell
	ran     map[vec]bool
	queue   []vec
	pending map[vec]*path
	// next are the points of pending, taken before the queue: a whole
	// path waits there (thousands of comparisons), so not for long.
	next    []vec
	recent  []*polyCell
	buckets [][]*polyCell
	steps   []vec // neighbour steps, shortest first
	proofs  []Proof
	at      [][]time.Duration // per metric, its worst schedule (for the maps)
}

func (b *polyProver) dur(x vec) []time.Duration {
	out := make([]time.Duration, b.n)
	for i := range out {
		out[i] = time.Duration(x[i])
	}
	return out
}

func (b *polyProver) text(x vec) string { return b.pointText(b.dur(x)...) }

func (b *polyProver) inBox(x vec) bool {
	for i := range b.n {
		if x[i] < b.lo[i] || x[i] > b.hi[i] {
			return false
		}
	}
	return true
}

func (b *polyProver) boxCount() *big.Int {
	n := big.NewInt(1)
	for i := range b.n {
		n.Mul(n, big.NewInt(b.hi[i]-b.lo[i]+1))
	}
	return n
}

// neighbourSteps are the nonzero steps in {−1, 0, 1}ⁿ, fewest nonzero
// coordinates first.
func neighbourSteps(n int) []vec {
	var out []vec
	total := 1
	for range n {
		total *= 3
	}
	for m := range total {
		var d vec
		k := m
		for i := range n {
			d[i] = int64(k%3) - 1
			k /= 3
		}
		if d != (vec{}) {
			out = append(out, d)
		}
	}
	nz := func(d vec) int {
		k := 0
		for _, v := range d {
			if v != 0 {
				k++
			}
		}
		return k
	}
	slices.SortStableFunc(out, func(a, b vec) int { return nz(a) - nz(b) })
	return out
}

func (c *polyCell) contains(x vec, n int) bool {
	for i := range n {
		if x[i] < c.lo[i] || x[i] > c.hi[i] {
			return false
		}
	}
	for _, h := range c.poly.hs {
		if !h.holds(x[:n]) {
			return false
		}
	}
	return true
}

// The cells are filed in a grid over the box's first two axes.
const gridColumns, gridRows = 256, 64

// square is the grid square of x's first two coordinates.
func (b *polyProver) square(x vec) [2]int {
	w0 := (b.hi[0]-b.lo[0])/gridColumns + 1
	w1 := (b.hi[1]-b.lo[1])/gridRows + 1
	return [2]int{int((x[0] - b.lo[0]) / w0), int((x[1] - b.lo[1]) / w1)}
}

// bucket is the cells filed under x's square.
func (b *polyProver) bucket(x vec) []*polyCell {
	if b.buckets == nil {
		return nil
	}
	q := b.square(x)
	return b.buckets[q[0]*(gridRows+1)+q[1]]
}

func (b *polyProver) covered(x vec) *polyCell {
	for _, c := range b.recent {
		if c.contains(x, b.n) {
			return c
		}
	}
	if !b.inBox(x) {
		return nil
	}
	for _, c := range b.bucket(x) {
		if c.contains(x, b.n) {
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

func (b *polyProver) push(x vec) {
	if b.inBox(x) && !b.ran[x] {
		b.queue = append(b.queue, x)
	}
}

func (b *polyProver) record(x vec) (*path, error) {
	b.ran[x] = true
	return b.recordAt(b.dur(x)...)
}

func (b *polyProver) run(ctx context.Context) error {
	var mid vec
	for i := range b.n {
		mid[i] = (b.lo[i] + b.hi[i]) / 2
	}
	b.push(mid)
	for m := range 1 << b.n {
		var x vec
		for i := range b.n {
			x[i] = b.lo[i]
			if m>>i&1 == 1 {
				x[i] = b.hi[i]
			}
		}
		b.push(x)
	}
	want := b.boxCount()
	for {
		for len(b.queue) > 0 || len(b.next) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if len(b.cells) >= b.s.MaxSegments {
				return errSegmentLimit
			}
			var x vec
			if k := len(b.next); k > 0 {
				x, b.next = b.next[k-1], b.next[:k-1]
			} else {
				x, b.queue = b.queue[0], b.queue[1:]
			}
			if c := b.covered(x); c != nil {
				if pa := b.pending[x]; pa != nil && cellKey(pa) != c.key {
					return fmt.Errorf("%w: %s runs another path than the cell of %s that holds it", ErrPathMismatch, b.text(x), b.text(c.o()))
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
			return b.disjoint(ctx)
		case 1:
			return fmt.Errorf("%w: the cells hold %v points, the box %v: two cells overlap", ErrPathMismatch, total, want)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		xs := b.uncovered()
		if len(xs) == 0 {
			return fmt.Errorf("%w: the cells hold %v of the box's %v points and no scan finds one outside them", errCoverage, total, want)
		}
		for _, x := range xs {
			if b.ran[x] {
				return fmt.Errorf("%w: %s was run and lies in no cell found", ErrPathMismatch, b.text(x))
			}
			b.push(x)
		}
	}
}

// add puts the run at x into its cell, then queues the points around it.
func (b *polyProver) add(x vec, pa *path) error {
	key := cellKey(pa)
	c := b.byKey[key]
	if c == nil {
		c = &polyCell{key: key}
		b.byKey[key] = c
		b.cells = append(b.cells, c)
	}
	c.pts = append(c.pts, x)
	c.paths = append(c.paths, pa)
	c.addDir(x)
	for _, d := range b.steps {
		if c.rank == b.n {
			break
		}
		var y vec
		for i := range b.n {
			y[i] = x[i] + d[i]
		}
		// A point another cell holds is not this one's (cells are
		// disjoint, what disjoint certifies): no run there.
		if !b.inBox(y) || b.ran[y] || !c.adds(y) || b.covered(y) != nil {
			continue
		}
		q, err := b.record(y)
		if err != nil {
			return err
		}
		if cellKey(q) == key {
			c.pts = append(c.pts, y)
			c.paths = append(c.paths, q)
			c.addDir(y)
		} else {
			b.pending[y] = q
			b.next = append(b.next, y)
		}
	}
	rebuilt := false
	if c.builtRank < b.n || c.count == nil {
		if err := b.restore(c); err != nil {
			return err
		}
		if err := b.build(c); err != nil {
			return err
		}
		rebuilt = true
	}
	for _, p := range c.pts {
		if !c.contains(p, b.n) {
			return fmt.Errorf("%w: %s ran the path of the cell of %s but lies outside the cell its comparisons make", ErrPathMismatch, b.text(p), b.text(c.o()))
		}
	}
	b.index(c)
	if rebuilt {
		if err := b.check(c); err != nil {
			return err
		}
	}
	for k, pa := range c.paths {
		c.paths[k] = pa.trimmed()
	}
	c.grad = nil
	b.probe(c)
	// What a vertex lies on served the clipping and the probes; a box of
	// four axes holds tens of thousands of cells.
	for k := range c.poly.verts {
		c.poly.verts[k].tight = nil
	}
	return nil
}

// adds reports whether y adds a direction to the cell's points.
func (c *polyCell) adds(y vec) bool {
	e := sub(y, c.o())
	if e == (vec{}) {
		return false
	}
	return rank(dirRows(append(slices.Clone(c.dirs), e))) > c.rank
}

// addDir keeps x's direction from the origin if it is a new one.
func (c *polyCell) addDir(x vec) {
	if len(c.pts) > 1 && c.adds(x) {
		c.dirs = append(c.dirs, sub(x, c.o()))
		c.rank++
	}
}

func sub(a, b vec) vec {
	var d vec
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

func dirRows(ds []vec) [][]int64 {
	out := make([][]int64, len(ds))
	for i, d := range ds {
		out[i] = d[:]
	}
	return out
}

// index files the cell under the grid squares its bounding box spans
// (those not filed before: a flat cell grows as its points are found).
func (b *polyProver) index(c *polyCell) {
	if b.buckets == nil {
		b.buckets = make([][]*polyCell, (gridColumns+1)*(gridRows+1))
	}
	var in, out vec
	for i := range 2 {
		in[i], out[i] = max(c.lo[i], b.lo[i]), min(c.hi[i], b.hi[i])
	}
	lo, hi := b.square(in), b.square(out)
	if c.indexed && (lo[0] > c.blo[0] || lo[1] > c.blo[1] || hi[0] < c.bhi[0] || hi[1] < c.bhi[1]) {
		// Not grown from the squares it was filed under: file it anew.
		for k0 := c.blo[0]; k0 <= c.bhi[0]; k0++ {
			for k1 := c.blo[1]; k1 <= c.bhi[1]; k1++ {
				k := k0*(gridRows+1) + k1
				b.buckets[k] = slices.DeleteFunc(b.buckets[k], func(d *polyCell) bool { return d == c })
			}
		}
		c.indexed = false
	}
	for k0 := lo[0]; k0 <= hi[0]; k0++ {
		for k1 := lo[1]; k1 <= hi[1]; k1++ {
			if c.indexed && k0 >= c.blo[0] && k0 <= c.bhi[0] && k1 >= c.blo[1] && k1 <= c.bhi[1] {
				continue
			}
			b.buckets[k0*(gridRows+1)+k1] = append(b.buckets[k0*(gridRows+1)+k1], c)
		}
	}
	c.blo, c.bhi, c.indexed = lo, hi, true
}

func (b *polyProver) restore(c *polyCell) error {
	for k, pa := range c.paths {
		if len(pa.a) > 0 || len(pa.pops) > 0 {
			continue
		}
		q, err := b.recordAt(b.dur(c.pts[k])...)
		if err != nil {
			return err
		}
		if cellKey(q) != c.key {
			return fmt.Errorf("%w: %s ran another path the second time", ErrPathMismatch, b.text(c.pts[k]))
		}
		c.paths[k] = q
	}
	return nil
}

// basis picks, of the cell's points, those nearest its origin that span
// its directions, and their paths.
func (c *polyCell) basis() ([]vec, []*path) {
	o := c.o()
	idx := make([]int, 0, len(c.pts)-1)
	for k := 1; k < len(c.pts); k++ {
		idx = append(idx, k)
	}
	far := func(k int) int64 {
		var m int64
		for _, v := range sub(c.pts[k], o) {
			m = max(m, abs64(v))
		}
		return m
	}
	slices.SortStableFunc(idx, func(a, b int) int { return sign(far(a) - far(b)) })
	var us []vec
	var ps []*path
	for _, k := range idx {
		e := sub(c.pts[k], o)
		if e == (vec{}) || rank(dirRows(append(slices.Clone(us), e))) == len(us) {
			continue
		}
		us, ps = append(us, e), append(ps, c.paths[k])
		if len(us) == c.rank {
			break
		}
	}
	return us, ps
}

// gradientSolver solves g·u_k = Δ_k for the cell's directions u_k: on the
// axes of a nonzero minor of the directions, g = adj(Mᵀ)·Δ / det M.
type gradientSolver struct {
	axes []int
	adj  [][]*big.Int // adj(Mᵀ)
	det  *big.Int     // > 0 (adj negated with it)
}

func newGradientSolver(us []vec, n int) (*gradientSolver, bool) {
	r := len(us)
	var best *gradientSolver
	pick := make([]int, r)
	var walk func(at, from int)
	walk = func(at, from int) {
		if at == r {
			// Mᵀ[k][i] = u_k[axes_i].
			mt := make([][]*big.Int, r)
			for k := range r {
				mt[k] = make([]*big.Int, r)
				for i, a := range pick {
					mt[k][i] = big.NewInt(us[k][a])
				}
			}
			d := detBig(mt)
			if d.Sign() == 0 {
				return
			}
			if best != nil && new(big.Int).Abs(d).Cmp(best.det) >= 0 {
				return
			}
			adj := adjugate(mt)
			if d.Sign() < 0 {
				d.Neg(d)
				for _, row := range adj {
					for _, v := range row {
						v.Neg(v)
					}
				}
			}
			best = &gradientSolver{axes: slices.Clone(pick), adj: adj, det: d}
			return
		}
		for a := from; a < n; a++ {
			pick[at] = a
			walk(at+1, a+1)
		}
	}
	walk(0, 0)
	return best, best != nil
}

// solve is the numerator of g (over det) for the changes Δ along the
// directions (false when it does not fit an int64).
func (s *gradientSolver) solve(delta []int64) (vec, bool) {
	var g vec
	for i, a := range s.axes {
		v := new(big.Int)
		for k, d := range delta {
			v.Add(v, new(big.Int).Mul(s.adj[i][k], big.NewInt(d)))
		}
		if !v.IsInt64() {
			return vec{}, false
		}
		g[a] = v.Int64()
	}
	return g, true
}

func detBig(m [][]*big.Int) *big.Int {
	n := len(m)
	switch n {
	case 0:
		return big.NewInt(1)
	case 1:
		return new(big.Int).Set(m[0][0])
	}
	d := new(big.Int)
	for j := range n {
		if m[0][j].Sign() == 0 {
			continue
		}
		t := new(big.Int).Mul(m[0][j], detBig(minorBig(m, 0, j)))
		if j%2 == 1 {
			t.Neg(t)
		}
		d.Add(d, t)
	}
	return d
}

func minorBig(m [][]*big.Int, r, c int) [][]*big.Int {
	var out [][]*big.Int
	for i, row := range m {
		if i == r {
			continue
		}
		out = append(out, append(slices.Clone(row[:c]), row[c+1:]...))
	}
	return out
}

// adjugate is the transpose of the cofactor matrix: m·adj = det·I.
func adjugate(m [][]*big.Int) [][]*big.Int {
	n := len(m)
	adj := make([][]*big.Int, n)
	for i := range adj {
		adj[i] = make([]*big.Int, n)
	}
	if n == 1 {
		adj[0][0] = big.NewInt(1)
		return adj
	}
	for i := range n {
		for j := range n {
			c := detBig(minorBig(m, i, j))
			if (i+j)%2 == 1 {
				c.Neg(c)
			}
			adj[j][i] = c
		}
	}
	return adj
}

// complement is an integer basis of the directions orthogonal to us, in n
// dimensions (rational elimination, each vector scaled to integers).
func complement(us []vec, n int) [][]int64 {
	// The free columns of the directions' reduced rows give the null
	// space of the matrix whose rows are us.
	m, pivots := rowReduce(dirRows(us), n)
	var out [][]int64
	for free := range n {
		if slices.Contains(pivots, free) {
			continue
		}
		v := make([]*big.Rat, n)
		for j := range n {
			v[j] = new(big.Rat)
		}
		v[free].SetInt64(1)
		for r, pc := range pivots {
			v[pc].Neg(m[r][free])
		}
		// Scale to integers, divide by their gcd.
		l := big.NewInt(1)
		for _, x := range v {
			d := x.Denom()
			g := new(big.Int).GCD(nil, nil, l, d)
			l.Mul(l, new(big.Int).Quo(d, g))
		}
		w := make([]int64, n)
		var g int64
		for j, x := range v {
			y := new(big.Int).Mul(x.Num(), new(big.Int).Quo(l, x.Denom()))
			w[j] = y.Int64()
			g = gcd(g, abs64(w[j]))
		}
		for j := range w {
			w[j] /= g
		}
		out = append(out, w)
	}
	return out
}

func dot(g vec, x vec) int64 {
	var s int64
	for i := range g {
		s += g[i] * x[i]
	}
	return s
}

// build derives the cell's gradients, polytope and count from its points.
func (b *polyProver) build(c *polyCell) error {
	o, po := c.o(), c.paths[0]
	if err := b.sameWindowsAt(c.paths, func(k int) string { return b.text(c.pts[k]) }); err != nil {
		return err
	}
	us, ps := c.basis()
	c.builtRank = c.rank
	nc := len(po.a)
	c.grad = make([]slope, nc)
	c.wgrad = make([][]slope, len(po.wins))
	for i := range po.wins {
		c.wgrad[i] = make([]slope, len(po.wins[i]))
		for j := range c.wgrad[i] {
			c.wgrad[i][j].den = 1
		}
	}
	for k := range c.grad {
		c.grad[k].den = 1
	}
	var hs []halfSpace
	if len(us) > 0 {
		s, ok := newGradientSolver(us, b.n)
		if !ok {
			return fmt.Errorf("%w: the directions of the cell of %s are dependent", ErrPathMismatch, b.text(o))
		}
		if !s.det.IsInt64() {
			return fmt.Errorf("%w: the points found in the cell of %s lie too far apart to solve its gradients", ErrPathMismatch, b.text(o))
		}
		delta := make([]int64, len(us))
		grad := func(val func(pa *path) int64) (slope, bool) {
			v0 := val(po)
			for k, q := range ps {
				delta[k] = val(q) - v0
			}
			g, ok := s.solve(delta)
			if !ok {
				return slope{}, false
			}
			sl := slope{g, s.det.Int64()}.reduced()
			// Full rank: every gradient is an integer (each value moves by an
			// integer per unit step along each axis).
			return sl, len(us) < b.n || sl.den == 1
		}
		for k := range nc {
			g, ok := grad(func(pa *path) int64 { return pa.a[k] - pa.b[k] })
			if !ok {
				return fmt.Errorf("%w: comparison %d is not affine in the cell of %s", ErrPathMismatch, k, b.text(o))
			}
			c.grad[k] = g
		}
		for i := range po.wins {
			for j := range po.wins[i] {
				g, ok := grad(func(pa *path) int64 { return pa.wins[i][j] })
				if !ok {
					return fmt.Errorf("%w: a window of %s is not affine in the cell of %s", ErrPathMismatch, b.s.Metrics[i], b.text(o))
				}
				c.wgrad[i][j] = g
			}
		}
	}
	for k := range nc {
		g, den := c.grad[k].g, c.grad[k].den
		d0 := po.a[k] - po.b[k]
		if g == (vec{}) {
			continue
		}
		// d(x) = d0 + g·(x−o)/den: d ≤ −1 is g·x − g·o + den·(d0+1) ≤ 0,
		// d ≥ 1 is −g·x + g·o − den·(d0−1) ≤ 0. In big integers: an
		// operand may be a time that never comes (the largest duration).
		var cst *big.Int
		switch sign(d0) {
		case -1:
			cst = new(big.Int).Mul(big.NewInt(den), big.NewInt(d0))
			cst.Add(cst, big.NewInt(den)).Sub(cst, dotBig(g, o))
		case 1:
			cst = new(big.Int).Mul(big.NewInt(den), big.NewInt(-d0))
			cst.Add(cst, big.NewInt(den)).Add(cst, dotBig(g, o))
			g = neg(g)
		default:
			return fmt.Errorf("%w: a tie (comparison %d) moves along the cell of %s", ErrPathMismatch, k, b.text(o))
		}
		most, least := b.reach(g, cst)
		switch {
		case most.Sign() <= 0:
			// Holds all over the box: it cuts nothing.
			continue
		case least.Sign() > 0:
			return fmt.Errorf("%w: comparison %d of the cell of %s holds nowhere in the box", ErrPathMismatch, k, b.text(o))
		case !cst.IsInt64() || cst.CmpAbs(big.NewInt(1<<61)) > 0:
			return fmt.Errorf("%w: comparison %d of the cell of %s cuts the box at a constant past 2⁶¹", ErrPathMismatch, k, b.text(o))
		}
		hs = append(hs, halfSpace{slices.Clone(g[:b.n]), cst.Int64()})
	}
	// A flat cell keeps to its hull.
	for _, nv := range complement(us, b.n) {
		var g vec
		copy(g[:], nv)
		ng := neg(g)
		hs = append(hs, halfSpace{slices.Clone(g[:b.n]), -dot(g, o)}, halfSpace{slices.Clone(ng[:b.n]), dot(g, o)})
	}
	c.poly = newPolytope(b.lo[:b.n], b.hi[:b.n], normalizeSpaces(hs))
	if c.poly == nil {
		return fmt.Errorf("%w: the cell of %s is empty", ErrPathMismatch, b.text(o))
	}
	var err error
	if c.count, err = c.poly.latticePoints(); err != nil {
		return fmt.Errorf("counting the cell of %s: %w", b.text(o), err)
	}
	for i := range b.n {
		lo, hi := c.poly.bounds(i)
		c.lo[i], c.hi[i] = ceilRat(lo), floorRat(hi)
	}
	return nil
}

func neg(g vec) vec {
	for i := range g {
		g[i] = -g[i]
	}
	return g
}

// normalizeSpaces tightens each half-space (its gradient divided by their
// gcd, its constant rounded to keep the same integer points) and keeps, of
// those with one gradient, the strongest.
func normalizeSpaces(hs []halfSpace) []halfSpace {
	type key [maxAxes]int64
	best := map[key]int{}
	var out []halfSpace
	for _, h := range hs {
		var d int64
		for _, g := range h.g {
			d = gcd(d, abs64(g))
		}
		if d == 0 {
			continue
		}
		g := slices.Clone(h.g)
		for i := range g {
			g[i] /= d
		}
		c := -floorDiv(-h.c, d)
		var k key
		copy(k[:], g)
		if i, ok := best[k]; ok {
			out[i].c = max(out[i].c, c)
			continue
		}
		best[k] = len(out)
		out = append(out, halfSpace{g, c})
	}
	return out
}

// reach is the greatest and least of g·x + cst over the box (at its
// corners), exact.
func (b *polyProver) reach(g vec, cst *big.Int) (most, least *big.Int) {
	most, least = new(big.Int).Set(cst), new(big.Int).Set(cst)
	for i := range b.n {
		lo := new(big.Int).Mul(big.NewInt(g[i]), big.NewInt(b.lo[i]))
		hi := new(big.Int).Mul(big.NewInt(g[i]), big.NewInt(b.hi[i]))
		if lo.Cmp(hi) > 0 {
			lo, hi = hi, lo
		}
		most.Add(most, hi)
		least.Add(least, lo)
	}
	return most, least
}

// slope is a value's gradient along a cell, g/den (den > 0): at x the
// value is its value at the origin o plus g·(x−o)/den. A flat cell's
// gradient is known only along its hull, solved on a few axes, so it may
// be a fraction there; a full cell's is an integer.
type slope struct {
	g   vec
	den int64
}

// reduced divides g and den by their gcd.
func (s slope) reduced() slope {
	d := s.den
	for _, v := range s.g {
		d = gcd(d, abs64(v))
	}
	if d > 1 {
		for i := range s.g {
			s.g[i] /= d
		}
		s.den /= d
	}
	return s
}

// predict is a value at x from its value v0 at the origin and its slope
// (false when it is not an integer there: x is off the cell).
func (c *polyCell) predict(v0 int64, s slope, x vec) (int64, bool) {
	num, rem := new(big.Int).QuoRem(dotBig(s.g, sub(x, c.o())), big.NewInt(s.den), new(big.Int))
	if rem.Sign() != 0 || !num.IsInt64() {
		return 0, false
	}
	return v0 + num.Int64(), true
}

func dotBig(g, x vec) *big.Int {
	s := new(big.Int)
	for i := range g {
		if g[i] != 0 {
			s.Add(s, new(big.Int).Mul(big.NewInt(g[i]), big.NewInt(x[i])))
		}
	}
	return s
}

// lineRange is the range of the last axis the half-spaces allow with the
// other axes at x (ok false when none).
func lineRange(hs []halfSpace, x vec, n int) (lo, hi int64, ok bool) {
	lo, hi = minInt64, maxInt64
	for _, h := range hs {
		rest := -h.c
		for i := range n - 1 {
			rest -= h.g[i] * x[i]
		}
		switch g := h.g[n-1]; {
		case g == 0:
			if rest < 0 {
				return 0, 0, false
			}
		case g > 0:
			hi = min(hi, floorDiv(rest, g))
		default:
			lo = max(lo, ceilDiv(rest, g))
		}
	}
	return lo, hi, lo <= hi
}

// sample is a random integer point of the cell: on a random line along the
// last axis through its bounding box (a found point when none of a few
// meets it).
func (b *polyProver) sample(c *polyCell) vec {
	if c.rank < b.n {
		return b.sampleFlat(c)
	}
	for range 64 {
		var x vec
		for i := range b.n - 1 {
			x[i] = c.lo[i] + b.rng.Int64N(c.hi[i]-c.lo[i]+1)
		}
		if lo, hi, ok := lineRange(c.poly.hs, x, b.n); ok {
			x[b.n-1] = lo + b.rng.Int64N(hi-lo+1)
			return x
		}
	}
	return c.pts[b.rng.IntN(len(c.pts))]
}

// sampleFlat is a random point of a flat cell, inside its hull: from a
// found point along a random combination of its found directions, as far
// as the half-spaces allow either way (its lines through the box miss a
// hull that ties axes other than the last).
func (b *polyProver) sampleFlat(c *polyCell) vec {
	p := c.pts[b.rng.IntN(len(c.pts))]
	var u vec
	for u == (vec{}) {
		for _, d := range c.dirs {
			k := b.rng.Int64N(3) - 1
			for i := range u {
				u[i] += k * d[i]
			}
		}
	}
	var g int64
	for _, v := range u {
		g = gcd(g, abs64(v))
	}
	for i := range u {
		u[i] /= g
	}
	// g·(p + t·u) + c ≤ 0 for every half-space: a·t ≤ rest.
	lo, hi := int64(minInt64/4), int64(maxInt64/4)
	for _, h := range c.poly.hs {
		a, rest := new(big.Int), big.NewInt(-h.c)
		for i := range b.n {
			a.Add(a, new(big.Int).Mul(big.NewInt(h.g[i]), big.NewInt(u[i])))
			rest.Sub(rest, new(big.Int).Mul(big.NewInt(h.g[i]), big.NewInt(p[i])))
		}
		// (Div is Euclidean: a floor for a positive divisor.)
		switch a.Sign() {
		case 1: // t ≤ ⌊rest/a⌋
			if q := new(big.Int).Div(rest, a); q.IsInt64() {
				hi = min(hi, q.Int64())
			}
		case -1: // t ≥ ⌈rest/a⌉ = −⌊rest/(−a)⌋
			if q := new(big.Int).Div(rest, new(big.Int).Neg(a)); q.IsInt64() {
				lo = max(lo, -q.Int64())
			}
		}
	}
	if lo > hi {
		return p
	}
	t := lo + b.rng.Int64N(hi-lo+1)
	var x vec
	for i := range b.n {
		x[i] = p[i] + t*u[i]
	}
	return x
}

// check runs random points of the cell (Interior, default 1) and verifies
// that each takes the cell's path with every comparison and window where
// the gradients put them.
func (b *polyProver) check(c *polyCell) error {
	n := b.o.Interior
	if n == 0 {
		n = 1
	}
	if c.count.Cmp(big.NewInt(1)) == 0 {
		return nil
	}
	po := c.paths[0]
	for range n {
		x := b.sample(c)
		pa, err := b.recordAt(b.dur(x)...)
		if err != nil {
			return err
		}
		if cellKey(pa) != c.key {
			return fmt.Errorf("%w: %s, inside the cell of %s, took another path (%d comparisons and %d events against %d and %d)",
				ErrPathMismatch, b.text(x), b.text(c.o()), len(pa.a), len(pa.pops), len(po.a), len(po.pops))
		}
		for k := range po.a {
			want, ok := c.predict(po.a[k]-po.b[k], c.grad[k], x)
			if !ok || pa.a[k]-pa.b[k] != want {
				return fmt.Errorf("%w: %s: comparison %d of the cell of %s differs by %v where its gradient puts %v",
					ErrPathMismatch, b.text(x), k, b.text(c.o()), time.Duration(pa.a[k]-pa.b[k]), time.Duration(want))
			}
		}
		for i := range po.wins {
			if len(pa.wins[i]) != len(po.wins[i]) {
				return fmt.Errorf("%w: %s, inside the cell of %s, has %d %s windows, not %d",
					ErrPathMismatch, b.text(x), b.text(c.o()), len(pa.wins[i]), b.s.Metrics[i], len(po.wins[i]))
			}
			for j := range po.wins[i] {
				want, ok := c.predict(po.wins[i][j], c.wgrad[i][j], x)
				if !ok || pa.wins[i][j] != want {
					return fmt.Errorf("%w: %s: a %s window of the cell of %s is %v where its gradient puts %v",
						ErrPathMismatch, b.text(x), b.s.Metrics[i], b.text(c.o()), time.Duration(pa.wins[i][j]), time.Duration(want))
				}
			}
		}
		c.pts, c.paths = append(c.pts, x), append(c.paths, pa.trimmed())
	}
	return nil
}

// around are the integer points near a rational point: the corners of the
// unit cube holding it and a step beyond the cube along every axis.
func (b *polyProver) around(x ratVec, visit func(vec)) {
	var f vec
	for i := range b.n {
		f[i] = floorRat(x[i])
	}
	for m := range 1 << b.n {
		var y vec
		for i := range b.n {
			y[i] = f[i] + int64(m>>i&1)
		}
		visit(y)
	}
	for i := range b.n {
		below, beyond := f, f
		below[i]--
		beyond[i] += 2
		visit(below)
		visit(beyond)
	}
}

// probe queues the points just outside the cell: around its vertices and
// the middles of its facets.
func (b *polyProver) probe(c *polyCell) {
	visit := func(p vec) {
		if b.inBox(p) && !b.ran[p] && !c.contains(p, b.n) {
			b.push(p)
		}
	}
	for _, v := range c.poly.verts {
		b.around(v.x, visit)
	}
	for k := range c.poly.hs {
		var on []ratVec
		for _, v := range c.poly.verts {
			if slices.Contains(v.tight, k) {
				on = append(on, v.x)
			}
		}
		if len(on) < 2 {
			continue
		}
		mid := make(ratVec, b.n)
		for i := range b.n {
			s := new(big.Rat)
			for _, v := range on {
				s.Add(s, v[i])
			}
			mid[i] = s.Quo(s, new(big.Rat).SetInt64(int64(len(on))))
		}
		b.around(mid, visit)
	}
}

// uncovered finds points of the box no cell holds, scanning lines along the
// last axis: through each cell's vertices (and a step beside them), and at
// random. At most 64.
func (b *polyProver) uncovered() []vec {
	var lines []vec
	for _, c := range b.cells {
		for _, v := range c.poly.verts {
			for _, d := range []int64{-1, 0, 1, 2} {
				var x vec
				for i := range b.n - 1 {
					x[i] = floorRat(v.x[i]) + d
				}
				lines = append(lines, x)
			}
		}
	}
	b.rng.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	lines = lines[:min(len(lines), 8192)]
	for range 512 {
		var x vec
		for i := range b.n - 1 {
			x[i] = b.lo[i] + b.rng.Int64N(b.hi[i]-b.lo[i]+1)
		}
		lines = append(lines, x)
	}
	var out []vec
	seen := map[vec]bool{}
	for _, x := range lines {
		inside := true
		for i := range b.n - 1 {
			inside = inside && x[i] >= b.lo[i] && x[i] <= b.hi[i]
		}
		if !inside || seen[x] {
			continue
		}
		seen[x] = true
		type iv struct{ lo, hi int64 }
		var ivs []iv
		for _, c := range b.lineCells(x) {
			in := true
			for i := range b.n - 1 {
				in = in && x[i] >= c.lo[i] && x[i] <= c.hi[i]
			}
			if !in {
				continue
			}
			if lo, hi, ok := lineRange(c.poly.hs, x, b.n); ok {
				ivs = append(ivs, iv{lo, hi})
			}
		}
		slices.SortFunc(ivs, func(a, b iv) int { return sign(a.lo - b.lo) })
		next := b.lo[b.n-1]
		for _, v := range ivs {
			if v.lo > next {
				break
			}
			next = max(next, v.hi+1)
		}
		if next <= b.hi[b.n-1] {
			y := x
			y[b.n-1] = next
			out = append(out, y)
			if len(out) == 64 {
				break
			}
		}
	}
	return out
}

// lineCells are the cells filed under the squares a line along the last
// axis through x crosses: one square over three axes or more, a column of
// them over two.
func (b *polyProver) lineCells(x vec) []*polyCell {
	if b.n > 2 {
		return b.bucket(x)
	}
	seen := map[*polyCell]bool{}
	var out []*polyCell
	k0 := b.square(x)[0]
	for k1 := range gridRows + 1 {
		for _, c := range b.buckets[k0*(gridRows+1)+k1] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// disjoint reports an error naming two cells that share a schedule.
func (b *polyProver) disjoint(ctx context.Context) error {
	for k, bucket := range b.buckets {
		if err := ctx.Err(); err != nil {
			return err
		}
		sq := [2]int{k / (gridRows + 1), k % (gridRows + 1)}
		for i, c := range bucket {
			for _, d := range bucket[i+1:] {
				// Each pair once: in the first square both are filed under.
				first := [2]int{max(c.blo[0], d.blo[0]), max(c.blo[1], d.blo[1])}
				if first != sq || !boxesMeet(c, d, b.n) {
					continue
				}
				if separatesPoly(c.poly, d.poly) || separatesPoly(d.poly, c.poly) {
					continue
				}
				n, err := newPolytope(b.lo[:b.n], b.hi[:b.n], slices.Concat(c.poly.hs, d.poly.hs)).latticePoints()
				if err != nil {
					return err
				}
				if n.Sign() > 0 {
					return fmt.Errorf("%w: the cells of %s and of %s have schedules in common (%v; two paths claim them)", ErrPathMismatch, b.text(c.o()), b.text(d.o()), n)
				}
			}
		}
	}
	return nil
}

func boxesMeet(c, d *polyCell, n int) bool {
	for i := range n {
		if c.lo[i] > d.hi[i] || d.lo[i] > c.hi[i] {
			return false
		}
	}
	return true
}

// separatesPoly reports whether a half-space of p has every vertex of q
// strictly outside it.
func separatesPoly(p, q *polytope) bool {
	for _, h := range p.hs {
		out := true
		for _, v := range q.verts {
			if h.value(v.x).Sign() <= 0 {
				out = false
				break
			}
		}
		if out {
			return true
		}
	}
	return false
}

// metricAt is metric i at x by the cell's window gradients.
func (c *polyCell) metricAt(i int, x vec) int64 {
	po := c.paths[0]
	var v int64
	for j := range po.wins[i] {
		if l, ok := c.predict(po.wins[i][j], c.wgrad[i][j], x); ok && l >= po.least[i][j] {
			v = max(v, l)
		}
	}
	return v
}

// supremum is metric i's largest value over the cell's real polytope (at
// a vertex) and the vertices where it is.
func (c *polyCell) supremum(i int, n int) (*big.Rat, []ratVec) {
	po := c.paths[0]
	o := c.o()
	var best *big.Rat
	var at []ratVec
	for _, v := range c.poly.verts {
		m := new(big.Rat)
		for j := range po.wins[i] {
			g, den := c.wgrad[i][j].g, new(big.Rat).SetInt64(c.wgrad[i][j].den)
			s := new(big.Rat)
			for a := range n {
				s.Add(s, new(big.Rat).Mul(new(big.Rat).SetInt64(g[a]), new(big.Rat).Sub(v.x[a], new(big.Rat).SetInt64(o[a]))))
			}
			w := s.Quo(s, den)
			w.Add(w, new(big.Rat).SetInt64(po.wins[i][j]))
			if w.Cmp(m) > 0 && w.Cmp(new(big.Rat).SetInt64(po.least[i][j])) >= 0 {
				m = w
			}
		}
		switch {
		case best == nil || m.Cmp(best) > 0:
			best, at = m, []ratVec{v.x}
		case m.Cmp(best) == 0:
			at = append(at, v.x)
		}
	}
	return best, at
}

// candidates are the cell's integer points where a metric may be largest:
// those run and those near vs, the vertices where it is (a metric constant
// along an edge is largest at both its ends: the smallest schedule is near
// one of them).
func (b *polyProver) candidates(c *polyCell, vs []ratVec) []vec {
	out := slices.Clone(c.pts)
	for _, v := range vs {
		b.around(v, func(p vec) {
			if c.contains(p, b.n) {
				out = append(out, p)
			}
		})
	}
	return out
}

func less(a, b vec) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// finish takes each metric's worst, supremum and closest approach to its
// bound over the cells, and the verdicts.
func (b *polyProver) finish() error {
	b.segments = len(b.cells)
	b.proofs, b.at = nil, nil
	for i, m := range b.s.Metrics {
		pr := Proof{Metric: m, Verdict: VerdictNone}
		var (
			found, seen bool
			worstAt     vec
			excessAt    vec
			supExcess   *big.Rat
		)
		for _, c := range b.cells {
			w := c.paths[0].ws[i]
			pr.countUnknown(w)
			pr.notMeasured(w, b.text(c.o()))
			if !w.Found {
				continue
			}
			bound, varies, err := b.cellBound(c, i)
			if err != nil {
				return err
			}
			pr.BoundVaries = pr.BoundVaries || varies
			sup, vertex := c.supremum(i, b.n)
			for _, x := range b.candidates(c, vertex) {
				v := time.Duration(c.metricAt(i, x))
				if !found || v > pr.Worst || v == pr.Worst && less(x, worstAt) {
					pr.Worst, worstAt = v, x
					pr.Bound, pr.Formula = bound, w.Formula
				}
				found = true
				if bound != model.Unbounded && (!seen || v-bound > pr.Excess) {
					seen = true
					pr.Excess, excessAt = v-bound, x
				}
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
		if err := b.settle(&pr, i, found, seen, b.dur(worstAt), b.dur(excessAt), supExcess, "polytope"); err != nil {
			return err
		}
		b.proofs = append(b.proofs, pr)
		b.at = append(b.at, b.dur(worstAt))
	}
	return nil
}

// cellBound is the least bound of metric i over the cell: over its runs,
// and where those differ, over runs near its vertices too.
func (b *polyProver) cellBound(c *polyCell, i int) (time.Duration, bool, error) {
	bound, varies := c.paths[0].ws[i].Predicted, false
	for _, pa := range c.paths[1:] {
		if pa.ws[i].Predicted != bound {
			varies = true
			bound = min(bound, pa.ws[i].Predicted)
		}
	}
	if !varies || c.cornersRun {
		return bound, varies, nil
	}
	c.cornersRun = true
	for _, v := range c.poly.verts {
		var pick *vec
		b.around(v.x, func(p vec) {
			if pick == nil && c.contains(p, b.n) && !slices.Contains(c.pts, p) {
				pick = &p
			}
		})
		if pick == nil {
			continue
		}
		pa, err := b.recordAt(b.dur(*pick)...)
		if err != nil {
			return 0, false, err
		}
		if cellKey(pa) != c.key {
			return 0, false, fmt.Errorf("%w: %s, a corner of the cell of %s, took another path", ErrPathMismatch, b.text(*pick), b.text(c.o()))
		}
		c.pts, c.paths = append(c.pts, *pick), append(c.paths, pa.trimmed())
	}
	bound = c.paths[0].ws[i].Predicted
	for _, pa := range c.paths[1:] {
		bound = min(bound, pa.ws[i].Predicted)
	}
	return bound, true, nil
}

// provePolyResult is Prove over a box of up to four axes.
func provePolyResult(ctx context.Context, s ProveSpace, o ProveOptions, lat lattice) (*ProveResult, error) {
	n := len(s.Vary)
	var lo, hi vec
	axes := make([]string, n)
	for i, r := range s.Vary {
		a, _ := time.ParseDuration(r.Lo)
		z, _ := time.ParseDuration(r.Hi)
		lo[i], hi[i], axes[i] = int64(a), int64(z), r.Param
	}
	start := time.Now()
	p := &prover{s: s, o: o, lat: lat, axis: axes[0], axes: axes,
		lo: time.Duration(lo[0]), hi: time.Duration(hi[0]), rng: rand.New(rand.NewPCG(uint64(s.Seed), 0x9e0f))}
	res := newBoxResult(s)
	b := &polyProver{prover: p, n: n, lo: lo, hi: hi, byKey: map[string]*polyCell{}, ran: map[vec]bool{}, pending: map[vec]*path{}, steps: neighbourSteps(n)}
	err := b.run(ctx)
	if err == nil {
		err = b.finish()
	}
	res.Segments, res.Runs = len(b.cells), p.runs
	if err != nil {
		if !errors.Is(err, errSegmentLimit) && !errors.Is(err, errCoverage) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		// A cell stopped half built has no polytope to take a worst from.
		b.cells = slices.DeleteFunc(b.cells, func(c *polyCell) bool { return c.poly == nil || c.count == nil })
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
	}
	res.Proofs = b.proofs
	res.Maps = b.maps()
	res.Elapsed = time.Since(start)
	return res, nil
}

// maps samples each metric over the plane of the box's first two axes
// through its worst schedule (the box's middle when none was found).
func (b *polyProver) maps() []ProveMap {
	xs, ys := mapGrid(b.lo[0], b.hi[0], mapColumns), mapGrid(b.lo[1], b.hi[1], mapRows)
	out := make([]ProveMap, len(b.s.Metrics))
	for i, m := range b.s.Metrics {
		var at vec
		for a := range b.n {
			at[a] = (b.lo[a] + b.hi[a]) / 2
		}
		if i < len(b.proofs) && b.proofs[i].found {
			for a, v := range b.at[i] {
				at[a] = int64(v)
			}
		}
		mp := ProveMap{Metric: m, X: xs, Y: ys, Through: b.dur(at)[2:]}
		for _, y := range ys {
			v, known, here := make([]time.Duration, len(xs)), make([]bool, len(xs)), make([]bool, len(xs))
			for k, x := range xs {
				p := at
				p[0], p[1] = int64(x), int64(y)
				here[k] = true
				if c := b.covered(p); c != nil && c.paths[0].ws[i].Found {
					v[k], known[k] = time.Duration(c.metricAt(i, p)), true
				}
			}
			mp.V, mp.Known, mp.here = append(mp.V, v), append(mp.Known, known), append(mp.here, here)
		}
		out[i] = mp
	}
	return out
}
