package model_test

import (
	"math"
	"testing"

	"github.com/leaselab/leaselab/model"
)

// TestRateFractionOf: a rate runs at the shortest decimal that reads back
// as it, exactly, reduced; one whose decimal does not fit 64-bit terms at
// its nearest 10⁻¹².
func TestRateFractionOf(t *testing.T) {
	for _, c := range []struct {
		rate float64
		want model.RateFraction
	}{
		{0.2, model.RateFraction{Num: 1, Den: 5}},
		{0.5, model.RateFraction{Num: 1, Den: 2}},
		{1, model.RateFraction{Num: 1, Den: 1}},
		{1.5, model.RateFraction{Num: 3, Den: 2}},
		{0.99, model.RateFraction{Num: 99, Den: 100}},
		{100, model.RateFraction{Num: 100, Den: 1}},
		{0.01, model.RateFraction{Num: 1, Den: 100}},
		{math.Nextafter(0.2, 1), model.RateFraction{Num: 5000000000000001, Den: 25000000000000000}},
		{1.0 / 3, model.RateFraction{Num: 3333333333333333, Den: 10000000000000000}},
		// 1.2345678901234568e-05 is 1543209862654321/1.25·10²⁰, beyond 64 bits.
		{1.2345678901234567e-05, model.RateFraction{Num: 12345679, Den: 1000000000000}},
	} {
		if got := model.RateFractionOf(c.rate); got != c.want {
			t.Errorf("RateFractionOf(%v) = %d/%d, want %d/%d", c.rate, got.Num, got.Den, c.want.Num, c.want.Den)
		}
	}
}

// TestLattice: the step on which rates' roundings repeat is the product of
// every rate's numerator and denominator (a repeated rate counts twice),
// refused beyond the limit.
func TestLattice(t *testing.T) {
	r := model.RateFractionOf
	for _, c := range []struct {
		rates []model.RateFraction
		limit uint64
		want  uint64
		ok    bool
	}{
		{nil, 16, 1, true},
		{[]model.RateFraction{r(0.2)}, 16, 5, true},
		{[]model.RateFraction{r(0.2), r(0.5)}, 16, 10, true},
		{[]model.RateFraction{r(0.2), r(0.2)}, 16, 0, false},
		{[]model.RateFraction{r(0.2), r(0.2)}, 25, 25, true},
		{[]model.RateFraction{r(0.5), r(0.25)}, 16, 8, true},
		{[]model.RateFraction{r(0.4)}, 16, 10, true},
		{[]model.RateFraction{r(1.5), r(0.75)}, 16, 0, false},
		{[]model.RateFraction{r(1.5), r(0.75)}, 72, 72, true},
		{[]model.RateFraction{r(0.99)}, 16, 0, false},
		{[]model.RateFraction{r(0.99)}, 1 << 62, 9900, true},
		{[]model.RateFraction{r(1.0 / 3), r(0.1234567890123)}, 1 << 62, 0, false},
	} {
		got, ok := model.Lattice(c.limit, c.rates...)
		if got != c.want || ok != c.ok {
			t.Errorf("Lattice(%d, %v) = %d, %v; want %d, %v", c.limit, c.rates, got, ok, c.want, c.ok)
		}
	}
}
