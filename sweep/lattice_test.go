package sweep

import (
	"math/rand/v2"
	"testing"
)

// TestLatticeCount: the closed-form count of a cell's integer points is
// the brute-force count, on random boxes cut by random half-planes (with
// the ±1, ±2 coefficients a schedule's times have, and steeper ones).
func TestLatticeCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	coef := []int64{-3, -2, -1, 0, 1, 2, 3}
	for trial := range 3000 {
		lo := [2]int64{rng.Int64N(20) - 10, rng.Int64N(20) - 10}
		hi := [2]int64{lo[0] + rng.Int64N(25), lo[1] + rng.Int64N(25)}
		var hs []halfPlane
		for range rng.IntN(5) {
			h := halfPlane{coef[rng.IntN(len(coef))], coef[rng.IntN(len(coef))], rng.Int64N(40) - 20}
			hs = append(hs, h)
		}
		want := int64(0)
		for x := lo[0]; x <= hi[0]; x++ {
			for y := lo[1]; y <= hi[1]; y++ {
				if holdsAll(hs, [2]int64{x, y}) {
					want++
				}
			}
		}
		if got := latticeCount(lo, hi, hs); got.Int64() != want {
			t.Fatalf("trial %d: box %v..%v, %v: count %v, brute force %d", trial, lo, hi, hs, got, want)
		}
		if got := latticeCount(lo, hi, normalizePlanes(hs)); got.Int64() != want {
			t.Fatalf("trial %d: normalized %v: count %v, brute force %d", trial, normalizePlanes(hs), got, want)
		}
		// columnRange agrees column by column.
		for x := lo[0]; x <= hi[0]; x++ {
			a, b, ok := columnRange(append(boxPlanes(lo, hi), hs...), x)
			n := int64(0)
			for y := lo[1]; y <= hi[1]; y++ {
				if holdsAll(hs, [2]int64{x, y}) {
					n++
				}
			}
			if (ok && b-a+1 != n) || (!ok && n != 0) {
				t.Fatalf("trial %d column %d: range %d..%d (%v), brute %d", trial, x, a, b, ok, n)
			}
		}
	}
}

func holdsAll(hs []halfPlane, x [2]int64) bool {
	for _, h := range hs {
		if !h.holds(x) {
			return false
		}
	}
	return true
}

// TestFloorSum against the sum itself, negatives included.
func TestFloorSum(t *testing.T) {
	for n := int64(0); n < 12; n++ {
		for m := int64(1); m < 7; m++ {
			for a := int64(-9); a < 10; a++ {
				for b := int64(-9); b < 10; b++ {
					want := int64(0)
					for i := range n {
						want += floorDiv(a*i+b, m)
					}
					if got := floorSum(n, m, a, b); got.Int64() != want {
						t.Fatalf("floorSum(%d,%d,%d,%d) = %v, want %d", n, m, a, b, got, want)
					}
				}
			}
		}
	}
}

// TestCommonPoints: whether two cells (polygons, lines, points) share an
// integer point, against brute force over 4,000 random pairs in a small
// box; with a polygon, the exact count of points they share.
func TestCommonPoints(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lo, hi := [2]int64{-12, -12}, [2]int64{12, 12}
	b := &boxProver{lo: lo, hi: hi}
	coef := []int64{-3, -2, -1, 0, 1, 2, 3}
	randCell := func() *boxCell {
		o := [2]int64{lo[0] + rng.Int64N(25), lo[1] + rng.Int64N(25)}
		switch rng.IntN(3) {
		case 0:
			return &boxCell{kind: 0, pts: [][2]int64{o}}
		case 1:
			var d [2]int64
			for d == ([2]int64{}) {
				d = [2]int64{coef[rng.IntN(len(coef))], coef[rng.IntN(len(coef))]}
			}
			g := gcd(abs64(d[0]), abs64(d[1]))
			c := &boxCell{kind: 1, pts: [][2]int64{o}, dir: [2]int64{d[0] / g, d[1] / g}}
			c.tlo = rng.Int64N(9) - 6
			c.thi = c.tlo + rng.Int64N(6)
			return c
		}
		for {
			hs := []halfPlane{}
			for range 1 + rng.IntN(4) {
				hs = append(hs, halfPlane{coef[rng.IntN(len(coef))], coef[rng.IntN(len(coef))], rng.Int64N(30) - 15})
			}
			hs = normalizePlanes(append(hs, boxPlanes(lo, hi)...))
			c := &boxCell{kind: 2, hs: hs, poly: cellPolygon(lo, hi, hs)}
			if latticeCount(lo, hi, hs).Sign() == 0 {
				continue
			}
			c.xlo, c.xhi = maxInt64, minInt64
			for _, v := range c.poly {
				c.xlo, c.xhi = min(c.xlo, ceilRat(v.x)), max(c.xhi, floorRat(v.x))
			}
			// pts[0] is only a name here: contains reads the half-planes.
			c.pts = [][2]int64{{c.xlo, 0}}
			return c
		}
	}
	// Far apart on steep lines: their cross products pass int64.
	p := [2]int64{40 * 1000000007, 40}
	steep := &boxCell{kind: 1, pts: [][2]int64{{0, 0}}, dir: [2]int64{1000000007, 1}, tlo: 0, thi: 50}
	other := &boxCell{kind: 1, pts: [][2]int64{{p[0] - 3, p[1] - 3*1000000009}}, dir: [2]int64{1, 1000000009}, tlo: 0, thi: 5}
	if !steep.contains(p) || !other.contains(p) {
		t.Fatal("the steep lines' common point is not on both")
	}
	if n := commonPoints(b, steep, other); n != 1 {
		t.Errorf("two steep lines through %v: %d common points, want 1", p, n)
	}
	for trial := range 4000 {
		c, d := randCell(), randCell()
		if c.kind == 1 && d.kind == 1 && rng.IntN(2) == 0 {
			// On one line, either way along it.
			k := rng.Int64N(11) - 5
			d.pts[0] = [2]int64{c.o()[0] + k*c.dir[0], c.o()[1] + k*c.dir[1]}
			d.dir = c.dir
			if rng.IntN(2) == 0 {
				d.dir = [2]int64{-c.dir[0], -c.dir[1]}
			}
		}
		var want int64
		for x := lo[0] - 40; x <= hi[0]+40; x++ {
			for y := lo[1] - 40; y <= hi[1]+40; y++ {
				p := [2]int64{x, y}
				if c.contains(p) && d.contains(p) {
					want++
				}
			}
		}
		got := commonPoints(b, c, d)
		if (got > 0) != (want > 0) || (max(c.kind, d.kind) == 2 && got != want) {
			t.Fatalf("trial %d: kinds %d and %d (%+v, %+v): %d common points, brute force %d", trial, c.kind, d.kind, c, d, got, want)
		}
		if r, s := c.rect(), d.rect(); want > 0 && !r.meets(s) {
			t.Fatalf("trial %d: rectangles %+v and %+v apart, yet %d common points", trial, r, s, want)
		}
	}
}
