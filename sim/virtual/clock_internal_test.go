package virtual

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"
)

// TestClockRateExact: a drifting clock's reading, its timers and its
// deadlines are the exact fraction of a duration, each rounded once in
// its documented direction (against math/big), at rates whose fractions
// are small and large.
func TestClockRateExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, rate := range []float64{0.2, 0.99, 1.5, 100, 0.01, 1.0 / 3, 0.123456789} {
		r := rateOf(rate)
		frac := new(big.Rat).SetFrac(new(big.Int).SetUint64(r.Num), new(big.Int).SetUint64(r.Den))
		scaled := func(d time.Duration, f *big.Rat) (floor, ceil int64) {
			x := new(big.Rat).Mul(new(big.Rat).SetInt64(int64(d)), f)
			q := new(big.Int).Div(x.Num(), x.Denom()) // Euclidean: the floor for a positive denominator
			c := new(big.Int).Set(q)
			if !x.IsInt() {
				c.Add(c, big.NewInt(1))
			}
			return q.Int64(), c.Int64()
		}
		inv := new(big.Rat).Inv(frac)
		for range 2000 {
			d := time.Duration(rng.Int64N(int64(time.Hour)))
			if f, _ := scaled(d, frac); int64(r.elapsed(d)) != f {
				t.Fatalf("rate %v: elapsed(%v) = %v, want %v", rate, d, r.elapsed(d), time.Duration(f))
			}
			f, c := scaled(d, inv)
			if int64(r.realFor(d)) != c || int64(r.realTruncated(d)) != f {
				t.Fatalf("rate %v: realFor(%v) = %v, realTruncated %v; want %v, %v", rate, d, r.realFor(d), r.realTruncated(d), time.Duration(c), time.Duration(f))
			}
			// A time already past rounds up as well: towards zero; a
			// reading before the base rounds down.
			if _, c := scaled(-d, inv); int64(r.realFor(-d)) != c {
				t.Fatalf("rate %v: realFor(%v) = %v, want %v", rate, -d, r.realFor(-d), time.Duration(c))
			}
			if f, _ := scaled(-d, frac); int64(r.elapsed(-d)) != f {
				t.Fatalf("rate %v: elapsed(%v) = %v, want %v", rate, -d, r.elapsed(-d), time.Duration(f))
			}
		}
	}
	if r := rateOf(0.2); r.elapsed(5) != 1 || r.elapsed(4) != 0 || r.realFor(1) != 5 || r.realFor(0) != 0 {
		t.Errorf("0.2: elapsed(5ns) %v, elapsed(4ns) %v, realFor(1ns) %v", r.elapsed(5), r.elapsed(4), r.realFor(1))
	}
	// A timer beyond any run saturates at never, without wrapping past it.
	in := &inc{rate: rateOf(0.2), baseReal: time.Hour, baseTT: time.Hour}
	if got := in.realAt(never / 2); got != never {
		t.Errorf("0.2: a timer at %v fires at %v, want never", never/2, got)
	}
	if got := in.realAt(time.Hour + time.Second); got != time.Hour+5*time.Second {
		t.Errorf("0.2: a timer a second of the clock away fires at %v, want 1h0m5s", got)
	}
}
