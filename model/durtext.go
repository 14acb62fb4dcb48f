package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// DurationText prints a duration for people: "0s", "250ms", "12.5ms", "1.234s",
// "2m3.5s", "unbounded". Precision stops at what the harness can resolve
// (microseconds below a millisecond, milliseconds above a second) so that
// reports do not suggest nanosecond accuracy nobody measured. It is the one
// rounding rule for durations in every report and check (a check's
// measured value and limit get the digits that tell them apart: see
// Check.Value).
func DurationText(d time.Duration) string { return durationText(d, 0) }

// maxExtraDigits is as many decimals as durationText can add: seconds to
// nanoseconds.
const maxExtraDigits = 6

// durationText is DurationText with extra more decimals (at most
// maxExtraDigits).
func durationText(d time.Duration, extra int) string {
	if d == Unbounded {
		return "unbounded"
	}
	if d < 0 {
		if d == math.MinInt64 { // -d overflows back to itself
			return "-unbounded"
		}
		return "-" + durationText(-d, extra)
	}
	switch {
	case d == 0:
		return "0s"
	case d < time.Microsecond:
		return strconv.FormatInt(int64(d), 10) + "ns"
	case d < time.Millisecond:
		return TrimFloat(float64(d)/float64(time.Microsecond), min(1+extra, 3)) + "µs"
	case d < time.Second:
		return TrimFloat(float64(d)/float64(time.Millisecond), min(2+extra, 6)) + "ms"
	case d < time.Minute:
		return TrimFloat(float64(d)/float64(time.Second), 3+extra) + "s"
	}
	m := d / time.Minute
	s := d - m*time.Minute
	if s < time.Millisecond {
		return fmt.Sprintf("%dm", m)
	}
	return fmt.Sprintf("%dm%ss", m, TrimFloat(s.Seconds(), 3+extra))
}

// TrimFloat formats f with at most prec decimals and no trailing zeros.
func TrimFloat(f float64, prec int) string {
	s := strconv.FormatFloat(f, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// DurationsApart prints a and b by DurationText's rule, each with as many
// more decimals as it takes for the two to read differently when they
// differ: a measurement beside its bound ("7.5649s" beside "7.565s", not
// "7.565s" beside "7.565s").
func DurationsApart(a, b time.Duration) (string, string) {
	for k := range maxExtraDigits {
		x, y := durationText(a, k), durationText(b, k)
		if a == b || x != y {
			return x, y
		}
	}
	return durationText(a, maxExtraDigits), durationText(b, maxExtraDigits)
}
