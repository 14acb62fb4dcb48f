package sweep

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
)

// The geometry of a box of more than two axes: a cell is the set of integer
// points of a convex polytope {x : g·x + c ≤ 0 for each half-space}, in as
// many dimensions as the box has axes (a flat one, a tie's, held to its
// hull by pairs of opposite half-spaces). Two things are asked of it, both
// exactly:
//
//   - its vertices, where a metric (a maximum of affine windows) is largest;
//   - the number of its integer points, for the coverage certificate.
//
// The vertices come from clipping the box by one half-space at a time
// (the double description: a vertex keeps the half-spaces it lies on, and
// two vertices are joined by an edge when no third lies on every half-space
// they share). The count slices the polytope across one axis (the one
// with the fewest slices to count): between two of its vertices'
// coordinates on that axis the slice keeps its shape,
// so its count is a quasi-polynomial in the slice's position, of degree one
// below the dimension, whose period divides the least common multiple of
// the slice's vertices' denominators (the determinants of the half-spaces'
// minors). Each residue class of that period is summed in closed form from
// as many slices as the degree needs, plus one that checks them; slices at
// the vertices themselves are counted one by one, and so are the stretches
// of a polytope whose period is too large to pay for.

// halfSpace is g·x + c ≤ 0.
type halfSpace struct {
	g []int64
	c int64
}

// ratVec is a point with rational coordinates.
type ratVec []*big.Rat

// polyVertex is a vertex and the indexes of the half-spaces it lies on.
type polyVertex struct {
	x     ratVec
	tight []int // sorted
}

// polytope is the convex polytope of a box and half-spaces: its vertices,
// and the half-spaces that cut it (the box's 2·dim sides first, then those
// of the half-spaces given that are not redundant).
type polytope struct {
	dim   int
	hs    []halfSpace
	verts []polyVertex
}

// boxSides are the half-spaces of lo ≤ x ≤ hi.
func boxSides(lo, hi []int64) []halfSpace {
	n := len(lo)
	out := make([]halfSpace, 0, 2*n)
	for i := range n {
		lower, upper := make([]int64, n), make([]int64, n)
		lower[i], upper[i] = -1, 1
		out = append(out, halfSpace{lower, lo[i]}, halfSpace{upper, -hi[i]})
	}
	return out
}

// value is g·x + c at a rational point.
func (h halfSpace) value(x ratVec) *big.Rat {
	v := new(big.Rat).SetInt64(h.c)
	t := new(big.Rat)
	for i, g := range h.g {
		if g != 0 {
			v.Add(v, t.Mul(x[i], t.SetInt64(g)))
		}
	}
	return v
}

// holds reports whether the integer point x satisfies h (exact: the
// products are big, a coordinate times a gradient can pass int64).
func (h halfSpace) holds(x []int64) bool {
	// In int64 when no product or sum can pass 2⁶²: a box's times are
	// below 2³⁸ ns (4.5 minutes) and its gradients small.
	small := h.c > -1<<60 && h.c < 1<<60
	for i, g := range h.g {
		small = small && g > -1<<20 && g < 1<<20 && x[i] > -1<<38 && x[i] < 1<<38
	}
	if small {
		v := h.c
		for i, g := range h.g {
			v += g * x[i]
		}
		return v <= 0
	}
	v := big.NewInt(h.c)
	t := new(big.Int)
	for i, g := range h.g {
		v.Add(v, t.Mul(big.NewInt(g), big.NewInt(x[i])))
	}
	return v.Sign() <= 0
}

// newPolytope is the polytope of the box lo..hi cut by hs (nil when
// empty).
func newPolytope(lo, hi []int64, hs []halfSpace) *polytope {
	n := len(lo)
	p := &polytope{dim: n, hs: boxSides(lo, hi)}
	// The box's corners: side 2i is x_i ≥ lo_i, 2i+1 is x_i ≤ hi_i.
	for m := range 1 << n {
		v := polyVertex{x: make(ratVec, n)}
		for i := range n {
			if m>>i&1 == 0 {
				v.x[i] = new(big.Rat).SetInt64(lo[i])
				v.tight = append(v.tight, 2*i)
			} else {
				v.x[i] = new(big.Rat).SetInt64(hi[i])
				v.tight = append(v.tight, 2*i+1)
			}
			if lo[i] == hi[i] {
				v.tight = append(v.tight, 2*i+1-m>>i&1)
			}
		}
		slices.Sort(v.tight)
		p.verts = append(p.verts, v)
	}
	if hasFlat(lo, hi) {
		p.verts = uniqueVerts(p.verts)
	}
	for _, h := range hs {
		if !p.clip(h) {
			return nil
		}
	}
	return p
}

func hasFlat(lo, hi []int64) bool {
	for i := range lo {
		if lo[i] == hi[i] {
			return true
		}
	}
	return false
}

// uniqueVerts merges vertices at the same point (their tight sets joined).
func uniqueVerts(vs []polyVertex) []polyVertex {
	var out []polyVertex
	for _, v := range vs {
		k := slices.IndexFunc(out, func(w polyVertex) bool { return sameVec(w.x, v.x) })
		if k < 0 {
			out = append(out, v)
			continue
		}
		out[k].tight = union(out[k].tight, v.tight)
	}
	return out
}

func sameVec(a, b ratVec) bool {
	for i := range a {
		if a[i].Cmp(b[i]) != 0 {
			return false
		}
	}
	return true
}

// clip cuts the polytope by h; false when nothing is left.
func (p *polytope) clip(h halfSpace) bool {
	vals := make([]*big.Rat, len(p.verts))
	out := false
	in := false
	for i, v := range p.verts {
		vals[i] = h.value(v.x)
		out = out || vals[i].Sign() > 0
		in = in || vals[i].Sign() <= 0
	}
	if !out {
		// Redundant: it cuts nothing (it may touch a vertex; an edge test
		// without it is the same, as no vertex it could add exists).
		return true
	}
	if !in {
		p.verts = nil
		return false
	}
	k := len(p.hs)
	p.hs = append(p.hs, h)
	var next []polyVertex
	for i, v := range p.verts {
		if vals[i].Sign() <= 0 {
			if vals[i].Sign() == 0 {
				v.tight = union(v.tight, []int{k})
			}
			next = append(next, v)
		}
	}
	for i, u := range p.verts {
		if vals[i].Sign() >= 0 {
			continue
		}
		for j, w := range p.verts {
			if vals[j].Sign() <= 0 || !p.adjacent(i, j) {
				continue
			}
			// u + t·(w − u), t = vu / (vu − vw): on h.
			t := new(big.Rat).Quo(vals[i], new(big.Rat).Sub(vals[i], vals[j]))
			x := make(ratVec, p.dim)
			for d := range p.dim {
				x[d] = new(big.Rat).Sub(w.x[d], u.x[d])
				x[d].Mul(x[d], t).Add(x[d], u.x[d])
			}
			next = append(next, polyVertex{x: x, tight: union(intersect(u.tight, w.tight), []int{k})})
		}
	}
	p.verts = uniqueVerts(next)
	return true
}

// adjacent reports whether vertices i and j are joined by an edge: the
// half-spaces both lie on have rank dim−1, and no third vertex lies on all
// of them.
func (p *polytope) adjacent(i, j int) bool {
	common := intersect(p.verts[i].tight, p.verts[j].tight)
	if len(common) < p.dim-1 {
		return false
	}
	for k, v := range p.verts {
		if k != i && k != j && isSubset(common, v.tight) {
			return false
		}
	}
	rows := make([][]int64, len(common))
	for r, h := range common {
		rows[r] = p.hs[h].g
	}
	return rank(rows) >= p.dim-1
}

// rank is the rank of integer rows (exact, by rational elimination).
func rank(rows [][]int64) int {
	if len(rows) == 0 {
		return 0
	}
	_, pivots := rowReduce(rows, len(rows[0]))
	return len(pivots)
}

// rowReduce is the reduced row echelon form of integer rows of n columns
// (exact) and its pivot columns.
func rowReduce(rows [][]int64, n int) ([][]*big.Rat, []int) {
	m := make([][]*big.Rat, len(rows))
	for i, r := range rows {
		m[i] = make([]*big.Rat, n)
		for j := range n {
			m[i][j] = new(big.Rat).SetInt64(r[j])
		}
	}
	var pivots []int
	rk := 0
	for col := 0; col < n && rk < len(m); col++ {
		piv := -1
		for r := rk; r < len(m); r++ {
			if m[r][col].Sign() != 0 {
				piv = r
				break
			}
		}
		if piv < 0 {
			continue
		}
		m[rk], m[piv] = m[piv], m[rk]
		inv := new(big.Rat).Inv(m[rk][col])
		for c := range n {
			m[rk][c].Mul(m[rk][c], inv)
		}
		for r := range m {
			if r == rk || m[r][col].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Set(m[r][col])
			for c := range n {
				m[r][c].Sub(m[r][c], new(big.Rat).Mul(f, m[rk][c]))
			}
		}
		pivots = append(pivots, col)
		rk++
	}
	return m, pivots
}

func intersect(a, b []int) []int {
	var out []int
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return out
}

func union(a, b []int) []int {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

func isSubset(a, b []int) bool { return len(intersect(a, b)) == len(a) }

// bounds are the least and greatest of coordinate i over the vertices.
func (p *polytope) bounds(i int) (lo, hi *big.Rat) {
	for _, v := range p.verts {
		if lo == nil || v.x[i].Cmp(lo) < 0 {
			lo = v.x[i]
		}
		if hi == nil || v.x[i].Cmp(hi) > 0 {
			hi = v.x[i]
		}
	}
	return lo, hi
}

// errCountCheck is a slice count that the quasi-polynomial of its residue
// class did not predict: the counting argument failed, and no count is
// given.
var errCountCheck = errors.New("lattice count check failed")

// latticePoints is the number of integer points of the polytope.
func (p *polytope) latticePoints() (*big.Int, error) {
	if p == nil || len(p.verts) == 0 {
		return new(big.Int), nil
	}
	if p.dim > 2 {
		if a := p.sliceAxis(); a != 0 {
			return p.swapped(a).latticePoints()
		}
	}
	lo0, hi0 := p.bounds(0)
	first, last := ceilRat(lo0), floorRat(hi0)
	if first > last {
		return new(big.Int), nil
	}
	if p.dim == 1 {
		return big.NewInt(last - first + 1), nil
	}
	if p.dim == 2 {
		// Columns summed by floor sums: no slice one by one.
		a, z := p.bounds(1)
		if ceilRat(a) > floorRat(z) {
			return new(big.Int), nil
		}
		var hs []halfPlane
		for _, h := range p.hs[4:] {
			hs = append(hs, halfPlane{h.g[0], h.g[1], h.c})
		}
		return latticeCount([2]int64{first, ceilRat(a)}, [2]int64{last, floorRat(z)}, hs), nil
	}
	// The slices' box: the polytope's bounding box in the other
	// coordinates, to integers.
	lo, hi := make([]int64, p.dim-1), make([]int64, p.dim-1)
	for i := 1; i < p.dim; i++ {
		a, z := p.bounds(i)
		lo[i-1], hi[i-1] = ceilRat(a), floorRat(z)
		if lo[i-1] > hi[i-1] {
			return new(big.Int), nil
		}
	}
	slice := func(s int64) (*big.Int, error) {
		var hs []halfSpace
		for _, h := range p.hs[2*p.dim:] {
			hs = append(hs, halfSpace{h.g[1:], h.c + h.g[0]*s})
		}
		return newPolytope(lo, hi, hs).latticePoints()
	}
	// The slices at the vertices, one by one; between them, runs of one
	// shape.
	var crit []int64
	for _, v := range p.verts {
		for _, s := range []int64{floorRat(v.x[0]), ceilRat(v.x[0])} {
			if s >= first && s <= last {
				crit = append(crit, s)
			}
		}
	}
	slices.Sort(crit)
	crit = slices.Compact(crit)
	total := new(big.Int)
	for _, s := range crit {
		n, err := slice(s)
		if err != nil {
			return nil, err
		}
		total.Add(total, n)
	}
	period, ok := p.slicePeriod()
	deg := int64(p.dim - 1)
	for k := 0; k+1 < len(crit); k++ {
		a, b := crit[k]+1, crit[k+1]-1
		if a > b {
			continue
		}
		if !ok && b-a+1 > maxSlicePeriod {
			return nil, fmt.Errorf("%w: the slices' period passes %d and a stretch of %d slices lies between two vertices", errCountCheck, maxSlicePeriod, b-a+1)
		}
		if !ok || b-a+1 <= (deg+2)*period {
			for s := a; s <= b; s++ {
				n, err := slice(s)
				if err != nil {
					return nil, err
				}
				total.Add(total, n)
			}
			continue
		}
		for r := range period {
			s0 := a + r
			terms := (b-s0)/period + 1 // ≥ deg+2
			// f(j) = the slice at s0 + j·period, a polynomial of degree
			// ≤ deg in j: its forward differences from deg+1 values, and a
			// value more to check them.
			f := make([]*big.Int, deg+2)
			for j := range f {
				n, err := slice(s0 + int64(j)*period)
				if err != nil {
					return nil, err
				}
				f[j] = n
			}
			diffs := forwardDiffs(f[:deg+1])
			if got := newtonAt(diffs, deg+1); got.Cmp(f[deg+1]) != 0 {
				return nil, fmt.Errorf("%w: the slice at %d has %v points, its residue class's polynomial gives %v", errCountCheck, s0+(deg+1)*period, f[deg+1], got)
			}
			// Σ_{j<terms} f(j) = Σ_i Δ^i f(0) · C(terms, i+1).
			for i, d := range diffs {
				total.Add(total, new(big.Int).Mul(d, new(big.Int).Binomial(terms, int64(i+1))))
			}
		}
	}
	return total, nil
}

// sliceAxis is the axis to slice across: the one with the fewest slices
// to count, each integer position of a thin polytope, or per stretch
// between two vertices as many as the closed-form sum takes.
func (p *polytope) sliceAxis() int {
	best, bestCost := 0, int64(-1)
	for i := range p.dim {
		lo, hi := p.bounds(i)
		span := floorRat(hi) - ceilRat(lo) + 1
		var xs []*big.Rat
		for _, v := range p.verts {
			xs = append(xs, v.x[i])
		}
		slices.SortFunc(xs, func(a, b *big.Rat) int { return a.Cmp(b) })
		xs = slices.CompactFunc(xs, func(a, b *big.Rat) bool { return a.Cmp(b) == 0 })
		cost := min(max(span, 0), int64(len(xs))*int64(p.dim+3))
		if bestCost < 0 || cost < bestCost {
			best, bestCost = i, cost
		}
	}
	return best
}

// swapped is the polytope with axes 0 and a swapped (the same integer
// points, their coordinates swapped).
func (p *polytope) swapped(a int) *polytope {
	q := &polytope{dim: p.dim}
	for _, h := range p.hs {
		g := slices.Clone(h.g)
		g[0], g[a] = g[a], g[0]
		q.hs = append(q.hs, halfSpace{g, h.c})
	}
	// The box's sides come first, axis by axis: swap those too.
	q.hs[0], q.hs[1], q.hs[2*a], q.hs[2*a+1] = q.hs[2*a], q.hs[2*a+1], q.hs[0], q.hs[1]
	for _, v := range p.verts {
		x := slices.Clone(v.x)
		x[0], x[a] = x[a], x[0]
		tight := make([]int, len(v.tight))
		for k, t := range v.tight {
			switch {
			case t == 0 || t == 1:
				t += 2 * a
			case t == 2*a || t == 2*a+1:
				t -= 2 * a
			}
			tight[k] = t
		}
		slices.Sort(tight)
		q.verts = append(q.verts, polyVertex{x: x, tight: tight})
	}
	return q
}

// maxSlicePeriod is the largest slice period summed in closed form (each
// residue class costs a few slices); past it, stretches are counted slice
// by slice, and one too long for that is an error.
const maxSlicePeriod = 1 << 16

// slicePeriod is the least common multiple of the nonzero determinants of
// the (dim−1)-square minors of the half-spaces' gradients without their
// first coordinate: every vertex of a slice has a denominator dividing one
// (false when it passes maxSlicePeriod).
func (p *polytope) slicePeriod() (int64, bool) {
	k := p.dim - 1
	rows := make([][]*big.Int, len(p.hs))
	for i, h := range p.hs {
		rows[i] = make([]*big.Int, k)
		for j, g := range h.g[1:] {
			rows[i][j] = big.NewInt(g)
		}
	}
	l := big.NewInt(1)
	limit := big.NewInt(maxSlicePeriod)
	pick := make([]int, k)
	var walk func(at, from int) bool
	walk = func(at, from int) bool {
		if at == k {
			m := make([][]*big.Int, k)
			for i, r := range pick {
				m[i] = rows[r]
			}
			d := detBig(m)
			if d.Sign() != 0 {
				d.Abs(d)
				g := new(big.Int).GCD(nil, nil, l, d)
				l.Mul(l, d.Quo(d, g))
			}
			return l.Cmp(limit) <= 0
		}
		for r := from; r < len(rows); r++ {
			pick[at] = r
			if !walk(at+1, r+1) {
				return false
			}
		}
		return true
	}
	if !walk(0, 0) {
		return 0, false
	}
	return l.Int64(), true
}

// forwardDiffs are Δ^i f(0) for i = 0..len(f)−1.
func forwardDiffs(f []*big.Int) []*big.Int {
	row := slices.Clone(f)
	out := make([]*big.Int, len(f))
	for i := range f {
		out[i] = row[0]
		next := make([]*big.Int, len(row)-1)
		for j := range next {
			next[j] = new(big.Int).Sub(row[j+1], row[j])
		}
		row = next
	}
	return out
}

// newtonAt is the polynomial with forward differences d at j:
// Σ_i d_i · C(j, i).
func newtonAt(d []*big.Int, j int64) *big.Int {
	out := new(big.Int)
	for i, v := range d {
		out.Add(out, new(big.Int).Mul(v, new(big.Int).Binomial(j, int64(i))))
	}
	return out
}
