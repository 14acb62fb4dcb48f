package sweep

import (
	"math/big"
	"slices"
)

// The box prover's geometry: a cell of a two-axis box is the set of integer
// points (schedules on the model's nanosecond grid) at which every recorded
// comparison keeps its outcome, each comparison an integer half-plane
// g1·x1 + g2·x2 + c ≤ 0. Everything here is exact (big rationals): the
// coverage certificate counts lattice points, where a rounding would lose or
// add a schedule.

// halfPlane is g1·x1 + g2·x2 + c ≤ 0.
type halfPlane struct{ g1, g2, c int64 }

// holds reports whether the integer point x satisfies h.
func (h halfPlane) holds(x [2]int64) bool { return h.g1*x[0]+h.g2*x[1]+h.c <= 0 }

// tightened divides h by the gcd of its coefficients and rounds its constant
// so that it keeps exactly the same integer points: g·x ≤ −c becomes
// (g/d)·x ≤ ⌊−c/d⌋.
func (h halfPlane) tightened() halfPlane {
	d := gcd(abs64(h.g1), abs64(h.g2))
	if d <= 1 {
		return h
	}
	return halfPlane{h.g1 / d, h.g2 / d, -floorDiv(-h.c, d)}
}

// boxPlanes are the half-planes of the box lo ≤ x ≤ hi.
func boxPlanes(lo, hi [2]int64) []halfPlane {
	return []halfPlane{{-1, 0, lo[0]}, {1, 0, -hi[0]}, {0, -1, lo[1]}, {0, 1, -hi[1]}}
}

// normalizePlanes tightens the half-planes and keeps, of those with the same
// coefficients, the strongest.
func normalizePlanes(hs []halfPlane) []halfPlane {
	type key struct{ g1, g2 int64 }
	best := map[key]int64{}
	var order []key
	for _, h := range hs {
		h = h.tightened()
		k := key{h.g1, h.g2}
		c, ok := best[k]
		if !ok {
			order = append(order, k)
		}
		if !ok || h.c > c {
			best[k] = h.c
		}
	}
	out := make([]halfPlane, 0, len(order))
	for _, k := range order {
		out = append(out, halfPlane{k.g1, k.g2, best[k]})
	}
	return out
}

// ratPoint is a point with rational coordinates.
type ratPoint struct{ x, y *big.Rat }

// polygon is a convex polygon (its vertices in order; fewer than three when
// it degenerates to a segment or a point; none when empty).
type polygon []ratPoint

// boxPolygon is the rectangle lo..hi.
func boxPolygon(lo, hi [2]int64) polygon {
	r := func(v int64) *big.Rat { return new(big.Rat).SetInt64(v) }
	return polygon{{r(lo[0]), r(lo[1])}, {r(hi[0]), r(lo[1])}, {r(hi[0]), r(hi[1])}, {r(lo[0]), r(hi[1])}}
}

// value is g1·x + g2·y + c at a rational point.
func (h halfPlane) value(p ratPoint) *big.Rat {
	v := new(big.Rat).Mul(p.x, new(big.Rat).SetInt64(h.g1))
	v.Add(v, new(big.Rat).Mul(p.y, new(big.Rat).SetInt64(h.g2)))
	return v.Add(v, new(big.Rat).SetInt64(h.c))
}

// clip keeps the part of the polygon where h holds (Sutherland–Hodgman,
// exact).
func (poly polygon) clip(h halfPlane) polygon {
	n := len(poly)
	if n == 0 {
		return nil
	}
	vals := make([]*big.Rat, n)
	all := true
	for i, p := range poly {
		vals[i] = h.value(p)
		all = all && vals[i].Sign() <= 0
	}
	if all {
		return poly
	}
	var out polygon
	for i := range n {
		j := (i + 1) % n
		a, b := poly[i], poly[j]
		va, vb := vals[i], vals[j]
		if va.Sign() <= 0 {
			out = append(out, a)
		}
		if (va.Sign() < 0 && vb.Sign() > 0) || (va.Sign() > 0 && vb.Sign() < 0) {
			// a + t·(b − a), t = va / (va − vb)
			t := new(big.Rat).Quo(va, new(big.Rat).Sub(va, vb))
			x := new(big.Rat).Add(a.x, new(big.Rat).Mul(t, new(big.Rat).Sub(b.x, a.x)))
			y := new(big.Rat).Add(a.y, new(big.Rat).Mul(t, new(big.Rat).Sub(b.y, a.y)))
			out = append(out, ratPoint{x, y})
		}
	}
	return out.dedup()
}

// dedup drops repeated consecutive vertices.
func (poly polygon) dedup() polygon {
	var out polygon
	for _, p := range poly {
		if len(out) > 0 && out[len(out)-1].x.Cmp(p.x) == 0 && out[len(out)-1].y.Cmp(p.y) == 0 {
			continue
		}
		out = append(out, p)
	}
	for len(out) > 1 && out[0].x.Cmp(out[len(out)-1].x) == 0 && out[0].y.Cmp(out[len(out)-1].y) == 0 {
		out = out[:len(out)-1]
	}
	return out
}

// cellPolygon is the real polygon of the half-planes inside the box.
func cellPolygon(lo, hi [2]int64, hs []halfPlane) polygon {
	poly := boxPolygon(lo, hi)
	for _, h := range hs {
		if poly = poly.clip(h); len(poly) == 0 {
			return nil
		}
	}
	return poly
}

// columnRange is the range of x2 the half-planes allow at column x1 (ok
// false when none, or when a half-plane without x2 excludes the column).
// The half-planes must bound x2 both ways (the box's sides do).
func columnRange(hs []halfPlane, x1 int64) (lo, hi int64, ok bool) {
	lo, hi = minInt64, maxInt64
	for _, h := range hs {
		rest := -h.c - h.g1*x1 // g2·x2 ≤ rest
		switch {
		case h.g2 == 0:
			if rest < 0 {
				return 0, 0, false
			}
		case h.g2 > 0:
			hi = min(hi, floorDiv(rest, h.g2))
		default:
			lo = max(lo, ceilDiv(rest, h.g2))
		}
	}
	return lo, hi, lo <= hi
}

const (
	minInt64 = -1 << 63
	maxInt64 = 1<<63 - 1
)

// latticeCount is the number of integer points of the box lo..hi that
// satisfy every half-plane: column by column, each run of columns between
// two of the polygon's vertices summed in closed form (the upper and lower
// boundaries are one line each there).
func latticeCount(lo, hi [2]int64, hs []halfPlane) *big.Int {
	all := append(boxPlanes(lo, hi), hs...)
	poly := cellPolygon(lo, hi, hs)
	total := new(big.Int)
	if len(poly) == 0 {
		return total
	}
	// The columns: every integer between the polygon's leftmost and
	// rightmost x, cut at each vertex's x.
	var xs []*big.Rat
	for _, p := range poly {
		xs = append(xs, p.x)
	}
	slices.SortFunc(xs, func(a, b *big.Rat) int { return a.Cmp(b) })
	xs = slices.CompactFunc(xs, func(a, b *big.Rat) bool { return a.Cmp(b) == 0 })
	first, last := ceilRat(xs[0]), floorRat(xs[len(xs)-1])
	if first > last {
		return total
	}
	// Cut points: the columns at which a new piece starts.
	cuts := []int64{first}
	for _, x := range xs[1:] {
		c := ceilRat(x) // a vertex at x: the columns ≥ x use the next piece
		if c > cuts[len(cuts)-1] && c <= last {
			cuts = append(cuts, c)
		}
	}
	for i, a := range cuts {
		b := last
		if i+1 < len(cuts) {
			b = cuts[i+1] - 1
		}
		if b < a {
			continue
		}
		// Between two vertices the binding upper and lower lines are one
		// each: find them at the middle of the run (exact).
		mid := new(big.Rat).SetFrac64(a+b, 2)
		up, down := binding(all, mid)
		n := b - a + 1
		// Σ ⌊(−c − g1·x)/g2⌋ over x = a..b, for the upper line (g2 > 0).
		su := floorSum(n, up.g2, -up.g1, -up.c-up.g1*a)
		// Σ ⌈(c + g1·x)/(−g2)⌉ for the lower (g2 < 0) = −Σ ⌊(−c − g1·x)/(−g2)⌋.
		sd := floorSum(n, -down.g2, -down.g1, -down.c-down.g1*a)
		sd.Neg(sd)
		total.Add(total, su.Sub(su, sd))
		total.Add(total, big.NewInt(n))
	}
	return total
}

// binding returns the half-planes that bound x2 from above and from below
// most tightly at column x (the box's own sides are among hs).
func binding(hs []halfPlane, x *big.Rat) (up, down halfPlane) {
	var bu, bd *big.Rat
	for _, h := range hs {
		if h.g2 == 0 {
			continue
		}
		// x2 bound: (−c − g1·x)/g2
		v := new(big.Rat).Mul(x, new(big.Rat).SetInt64(-h.g1))
		v.Add(v, new(big.Rat).SetInt64(-h.c))
		v.Quo(v, new(big.Rat).SetInt64(h.g2))
		if h.g2 > 0 && (bu == nil || v.Cmp(bu) < 0) {
			bu, up = v, h
		}
		if h.g2 < 0 && (bd == nil || v.Cmp(bd) > 0) {
			bd, down = v, h
		}
	}
	return up, down
}

// floorSum is Σ_{i=0}^{n−1} ⌊(a·i + b)/m⌋ for m > 0, in O(log) steps.
func floorSum(n, m, a, b int64) *big.Int {
	N, M, A, B := big.NewInt(n), big.NewInt(m), big.NewInt(a), big.NewInt(b)
	ans := new(big.Int)
	q, r := new(big.Int), new(big.Int)
	two := big.NewInt(2)
	tri := func(n *big.Int) *big.Int { // n(n−1)/2
		t := new(big.Int).Sub(n, big.NewInt(1))
		t.Mul(t, n)
		return t.Quo(t, two)
	}
	// Make 0 ≤ a, b < m.
	q.DivMod(A, M, r) // Euclidean: r ≥ 0
	ans.Add(ans, new(big.Int).Mul(tri(N), q))
	A.Set(r)
	q.DivMod(B, M, r)
	ans.Add(ans, new(big.Int).Mul(N, q))
	B.Set(r)
	for N.Sign() > 0 {
		if A.Cmp(M) >= 0 {
			q.DivMod(A, M, r)
			ans.Add(ans, new(big.Int).Mul(tri(N), q))
			A.Set(r)
		}
		if B.Cmp(M) >= 0 {
			q.DivMod(B, M, r)
			ans.Add(ans, new(big.Int).Mul(N, q))
			B.Set(r)
		}
		y := new(big.Int).Mul(A, N)
		y.Add(y, B)
		if y.Cmp(M) < 0 {
			break
		}
		N.DivMod(y, M, B)
		M, A = A, M
	}
	return ans
}

// floorRat and ceilRat round a rational down and up (big.Int's Div is
// Euclidean: a floor, the denominator being positive).
func floorRat(r *big.Rat) int64 { return new(big.Int).Div(r.Num(), r.Denom()).Int64() }

func ceilRat(r *big.Rat) int64 {
	return -new(big.Int).Div(new(big.Int).Neg(r.Num()), r.Denom()).Int64()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
