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
