package sweep

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseAxis reads an axis as a command line gives it (chaos sweep --grid):
// PARAM=V1,V2,… , each value as a sweep file writes it, or
// PARAM=FROM..TO/STEPS, STEPS values from FROM to TO with both ends, as a
// sweep file's {from, to, steps} range (a number or duration parameter).
// An unknown parameter is Grid.Check's to report.
func ParseAxis(s string) (Axis, error) {
	param, values, ok := strings.Cut(s, "=")
	if !ok || values == "" {
		return Axis{}, fmt.Errorf("want PARAM=VALUES, e.g. ttl=1s,2s,5s or ttl=1s..10s/10")
	}
	a := Axis{Param: param}
	if from, rest, ok := strings.Cut(values, ".."); ok {
		to, steps, ok := strings.Cut(rest, "/")
		if !ok || param == ParamSafe {
			return Axis{}, fmt.Errorf("%s: a range is FROM..TO/STEPS, e.g. 1s..10s/10 (safe takes a list: false,true)", param)
		}
		a1, err1 := parseValue(param, from)
		b1, err2 := parseValue(param, to)
		n, err3 := strconv.Atoi(steps)
		lo, hi := number(param, a1), number(param, b1)
		if err1 != nil || err2 != nil || err3 != nil || n < 2 || n > 10000 || hi <= lo {
			return Axis{}, fmt.Errorf("%s: %q: want FROM < TO and from 2 to 10000 steps", param, values)
		}
		a.Values = linear(param, lo, hi, n)
		return a, nil
	}
	for _, v := range strings.Split(values, ",") {
		pv, err := parseValue(param, v)
		if err != nil {
			return Axis{}, fmt.Errorf("%s: %v", param, err)
		}
		a.Values = append(a.Values, canonical(param, pv))
	}
	return a, nil
}

// number is a parsed value of a number or duration parameter as a float:
// the count, the rate, or the nanoseconds.
func number(param string, v value) float64 {
	switch param {
	case ParamMaxRetries:
		return float64(v.i)
	case ParamClockRate:
		return v.f
	}
	return float64(v.d)
}

// linear is steps values from from to to (numbers as number gives them),
// both ends included, in canonical text: durations rounded to the
// millisecond, rates to 1e-6, counts to the whole number; a value that
// rounds to the one before it is dropped.
func linear(param string, from, to float64, steps int) []string {
	var out []string
	for k := range steps {
		x := from
		if steps > 1 {
			x = from + (to-from)*float64(k)/float64(steps-1)
		}
		var v value
		switch param {
		case ParamMaxRetries:
			v.i = int(math.Round(x))
		case ParamClockRate:
			v.f = math.Round(x*1e6) / 1e6
		default:
			v.d = time.Duration(math.Round(x/float64(time.Millisecond))) * time.Millisecond
		}
		s := canonical(param, v)
		if len(out) > 0 && out[len(out)-1] == s {
			continue
		}
		out = append(out, s)
	}
	return out
}
