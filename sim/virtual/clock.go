package virtual

import (
	"math"
	"math/bits"
	"time"

	"github.com/leaselab/leaselab/model"
)

// clockRate is an instance clock's speed, an exact fraction
// (model.RateFraction): a reading and a timer are computed in whole
// nanoseconds with one rounding each, so that a proof's walk finds every
// time affine on each residue class of the schedule modulo the rates'
// lattice (model.Lattice). A float rate would round differently at every
// point.
type clockRate struct{ model.RateFraction }

// realTime is a clock that keeps real time.
var realTime = clockRate{model.RateFraction{Num: 1, Den: 1}}

func rateOf(rate float64) clockRate { return clockRate{model.RateFractionOf(rate)} }

// elapsed is the clock time that passes in the real time d, rounded down
// (time.Duration(float64(d)*rate) truncated as well; a clock reads only
// forward from its base, so d < 0 is no more than a guard: it rounds down
// too).
func (r clockRate) elapsed(d time.Duration) time.Duration {
	if r.One() {
		return d
	}
	if d < 0 {
		q, rem := mulDiv(uint64(-d), r.Num, r.Den)
		if rem != 0 {
			q++
		}
		return -q
	}
	q, _ := mulDiv(uint64(d), r.Num, r.Den)
	return q
}

// realFor is the real time in which the clock runs d: rounded up, the
// first nanosecond at which the clock has reached it (negative d: a time
// already past, rounded up as well).
func (r clockRate) realFor(d time.Duration) time.Duration {
	if r.One() {
		return d
	}
	if d < 0 {
		q, _ := mulDiv(uint64(-d), r.Den, r.Num)
		return -q
	}
	q, rem := mulDiv(uint64(d), r.Den, r.Num)
	if rem != 0 {
		q++
	}
	return q
}

// realTruncated is d > 0 of the clock in real time rounded down, as
// clock.WithTimeout converts a deadline (its callers pass positive
// timeouts only).
func (r clockRate) realTruncated(d time.Duration) time.Duration {
	if r.One() || d <= 0 {
		return d
	}
	q, _ := mulDiv(uint64(d), r.Den, r.Num)
	return q
}

// mulDiv is ⌊a·m/n⌋ and its remainder, saturated at the longest duration
// (a timer that far out never fires within a run).
func mulDiv(a, m, n uint64) (time.Duration, uint64) {
	hi, lo := bits.Mul64(a, m)
	if hi >= n {
		return math.MaxInt64, 0
	}
	q, rem := bits.Div64(hi, lo, n)
	if q > math.MaxInt64 {
		return math.MaxInt64, 0
	}
	return time.Duration(q), rem
}
