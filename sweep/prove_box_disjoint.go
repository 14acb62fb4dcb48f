package sweep

import (
	"context"
	"fmt"
	"math/big"
	"slices"
)

// The box prover's second certificate: no schedule lies in two cells.
//
// Coverage is certified by counting: the cells' integer points add up to
// the box's. That count proves coverage only if no point is counted twice,
// which the path argument gives (a schedule runs one path, and every
// schedule of a cell runs the cell's) and the interior checks sample. A
// recorder bug that let two cells overlap, and left a hole of the same
// size, would pass the count; disjoint checks every pair of cells that
// could share a point instead of trusting it.
//
// Two cells on either side of a comparison are strictly apart as real
// polygons (d ≤ −1 in one, d ≥ 0 in the other, once tightened), so most
// pairs are settled by a half-plane of one that has every vertex of the
// other outside it; the rest by counting their common integer points, a
// line's or a point's exactly along it.

// latticeRect is the bounding rectangle of a cell's integer points.
type latticeRect struct{ xlo, xhi, ylo, yhi int64 }

func (r latticeRect) meets(s latticeRect) bool {
	return r.xlo <= s.xhi && s.xlo <= r.xhi && r.ylo <= s.yhi && s.ylo <= r.yhi
}

// rect is the cell's latticeRect.
func (c *boxCell) rect() latticeRect {
	if c.kind == 2 {
		r := latticeRect{c.xlo, c.xhi, maxInt64, minInt64}
		for _, v := range c.poly {
			r.ylo, r.yhi = min(r.ylo, ceilRat(v.y)), max(r.yhi, floorRat(v.y))
		}
		return r
	}
	a, z := c.lineEnd(c.tlo), c.lineEnd(c.thi)
	return latticeRect{min(a[0], z[0]), max(a[0], z[0]), min(a[1], z[1]), max(a[1], z[1])}
}

// lineEnd is a line cell's point o + t·dir (a point cell's o).
func (c *boxCell) lineEnd(t int64) [2]int64 {
	if c.kind == 0 {
		return c.o()
	}
	o := c.o()
	return [2]int64{o[0] + t*c.dir[0], o[1] + t*c.dir[1]}
}

// lineSpan is a line or point cell's points as o + t·dir, tlo ≤ t ≤ thi
// (a point's dir is zero).
func (c *boxCell) lineSpan() (o, dir [2]int64, tlo, thi int64) {
	if c.kind == 0 {
		return c.o(), [2]int64{}, 0, 0
	}
	return c.o(), c.dir, c.tlo, c.thi
}

// disjoint reports an error naming two cells that share a schedule.
func (b *boxProver) disjoint(ctx context.Context) error {
	idx := make(map[*boxCell]int, len(b.cells))
	rects := make([]latticeRect, len(b.cells))
	for i, c := range b.cells {
		idx[c], rects[i] = i, c.rect()
	}
	for k, bucket := range b.buckets {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i, c := range bucket {
			rc := rects[idx[c]]
			for _, d := range bucket[i+1:] {
				// Each pair once: in the first bucket both are filed under.
				if max(c.blo, d.blo) != k || !rc.meets(rects[idx[d]]) {
					continue
				}
				if n := commonPoints(b, c, d); n > 0 {
					return fmt.Errorf("%w: the cells of %s and of %s have schedules in common (%d; two paths claim them)", ErrPathMismatch,
						b.pointText(pointDur(c.o())...), b.pointText(pointDur(d.o())...), n)
				}
			}
		}
	}
	return nil
}

// commonPoints is how many integer points two cells share (a lower bound
// past 1 for two lines on one line: any is too many).
func commonPoints(b *boxProver, c, d *boxCell) int64 {
	if c.kind < d.kind {
		c, d = d, c
	}
	switch {
	case c.kind == 2 && d.kind == 2:
		if separates(c.hs, d.poly) || separates(d.hs, c.poly) {
			return 0
		}
		n := latticeCount(b.lo, b.hi, slices.Concat(c.hs, d.hs))
		if !n.IsInt64() {
			return maxInt64
		}
		return n.Int64()
	case c.kind == 2:
		o, dir, tlo, thi := d.lineSpan()
		lo, hi := lineInPlanes(o, dir, tlo, thi, c.hs)
		return max(0, hi-lo+1)
	}
	return lineMeetsLine(c, d)
}

// separates reports whether one of the half-planes has every vertex of
// the polygon strictly outside it.
func separates(hs []halfPlane, poly polygon) bool {
	for _, h := range hs {
		out := true
		for _, v := range poly {
			if h.value(v).Sign() <= 0 {
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

// lineInPlanes narrows tlo..thi to the t at which o + t·dir satisfies
// every half-plane (empty when lo > hi).
func lineInPlanes(o, dir [2]int64, tlo, thi int64, hs []halfPlane) (lo, hi int64) {
	lo, hi = tlo, thi
	for _, h := range hs {
		a := h.g1*dir[0] + h.g2*dir[1]        // the half-plane's rate along the line
		rhs := -(h.c + h.g1*o[0] + h.g2*o[1]) // a·t ≤ rhs
		switch {
		case a == 0 && rhs < 0:
			return 1, 0
		case a > 0:
			hi = min(hi, floorDiv(rhs, a))
		case a < 0:
			lo = max(lo, ceilDiv(rhs, a))
		}
	}
	return lo, hi
}

// lineMeetsLine is how many integer points two line or point cells share
// (1 when they do, for two lines on one line).
func lineMeetsLine(c, d *boxCell) int64 {
	o1, d1, a1, b1 := c.lineSpan()
	o2, d2, a2, b2 := d.lineSpan()
	if d1 == ([2]int64{}) {
		o1, d1, a1, b1, o2, d2, a2, b2 = o2, d2, a2, b2, o1, d1, a1, b1
	}
	e := [2]int64{o2[0] - o1[0], o2[1] - o1[1]}
	// In big integers: a line's direction is that of two of its points,
	// which may lie far apart, and e spans the box.
	cross := func(u, v [2]int64) *big.Int {
		a := new(big.Int).Mul(big.NewInt(u[0]), big.NewInt(v[1]))
		return a.Sub(a, new(big.Int).Mul(big.NewInt(u[1]), big.NewInt(v[0])))
	}
	in := func(t, lo, hi int64) bool { return t >= lo && t <= hi }
	switch {
	case d1 == ([2]int64{}): // two points
		if e == ([2]int64{}) {
			return 1
		}
		return 0
	case d2 == ([2]int64{}): // a point on the line?
		if cross(e, d1).Sign() != 0 {
			return 0
		}
		if in(along(e, d1), a1, b1) {
			return 1
		}
		return 0
	}
	if x := cross(d1, d2); x.Sign() != 0 {
		// o1 + t·d1 = o2 + s·d2: t = (e × d2)/x, s = (e × d1)/x.
		t, rt := new(big.Int).QuoRem(cross(e, d2), x, new(big.Int))
		u, ru := new(big.Int).QuoRem(cross(e, d1), x, new(big.Int))
		if rt.Sign() != 0 || ru.Sign() != 0 || !t.IsInt64() || !u.IsInt64() || !in(t.Int64(), a1, b1) || !in(u.Int64(), a2, b2) {
			return 0
		}
		return 1
	}
	if cross(e, d1).Sign() != 0 {
		return 0 // parallel, apart
	}
	// One line: o2 = o1 + k·d1 (d1 primitive), d2 = ±d1.
	k := along(e, d1)
	sgn := int64(1)
	if d2 != d1 {
		sgn = -1
	}
	lo, hi := k+sgn*a2, k+sgn*b2
	if lo > hi {
		lo, hi = hi, lo
	}
	if max(lo, a1) <= min(hi, b1) {
		return 1
	}
	return 0
}

// along is k for e = k·d, e a multiple of the nonzero d.
func along(e, d [2]int64) int64 {
	if d[0] != 0 {
		return e[0] / d[0]
	}
	return e[1] / d[1]
}
