package reports

import (
	"math"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

func TestDur(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{500, "500ns"},
		{1500, "1.5µs"},
		{250 * time.Millisecond, "250ms"},
		{12500 * time.Microsecond, "12.5ms"},
		{1234 * time.Millisecond, "1.234s"},
		{5 * time.Second, "5s"},
		{5*time.Second + 400*time.Microsecond, "5s"},
		{123500 * time.Millisecond, "2m3.5s"},
		{2 * time.Minute, "2m"},
		{-250 * time.Millisecond, "-250ms"},
		{model.Unbounded, "unbounded"},
		{math.MinInt64, "-unbounded"}, // an overflowed sum: no stack overflow negating it
	} {
		if got := dur(tc.d); got != tc.want {
			t.Errorf("dur(%v) = %q; want %q", int64(tc.d), got, tc.want)
		}
	}
	if got := at(12345 * time.Millisecond); got != "12.345s" {
		t.Errorf("at = %q", got)
	}
	if got := durp(nil); got != "—" {
		t.Errorf("durp(nil) = %q", got)
	}
}

func TestMarkdownEscaping(t *testing.T) {
	for in, want := range map[string]string{
		"max_gap ≤ ttl + wait": "max_gap ≤ ttl + wait", // intraword _ and + left alone
		"2*ttl":                `2\*ttl`,
		"<script>":             "&lt;script>",
		"a <= b":               "a <= b",
		"_emph_":               `\_emph\_`,
		"[x](http://evil)":     `[x\](http://evil)`,
		"line\nbreak":          "line break",
		"`code`":               "\\`code\\`",
	} {
		if got := mdText(in); got != want {
			t.Errorf("mdText(%q) = %q; want %q", in, got, want)
		}
	}
	if got := mdCell("a|b"); got != `a\|b` {
		t.Errorf("mdCell = %q", got)
	}
}

func TestUncertain(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		d, u time.Duration
		want string
	}{
		{1203 * ms, 15 * ms, "1.20s ± 15ms"},
		{1203 * ms, 150 * ms, "1.2s ± 150ms"},
		{1203 * ms, 1500 * ms, "1s ± 1.5s"},
		{123456 * time.Microsecond, 1234 * time.Microsecond, "123ms ± 1.2ms"},
		{123456 * time.Microsecond, 150 * time.Microsecond, "123.5ms ± 150µs"},
		{750 * time.Microsecond, 20 * time.Microsecond, "750µs ± 20µs"},
		{5 * ms, 0, "5ms"},
	} {
		if got := Uncertain(c.d, c.u); got != c.want {
			t.Errorf("Uncertain(%v, %v) = %q, want %q", c.d, c.u, got, c.want)
		}
	}
}

// A one-sided range (agents' lines stamped late) prints as the range, not
// as ± its widest side: a window that may have been 0.2 s shorter is not
// one that may have been 0.2 s longer.
func TestBetween(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		d, lo, hi time.Duration
		want      string
	}{
		{1200 * ms, 1000 * ms, 1200 * ms, "1.20s (1.00s–1.20s)"},
		{0, 0, 150 * ms, "0ms (0ms–150ms)"},
		{950 * ms, 950 * ms, 1150 * ms, "950ms (950ms–1.15s)"},
		{5 * ms, 5 * ms, 5 * ms, "5ms"},
	} {
		if got := Between(c.d, c.lo, c.hi); got != c.want {
			t.Errorf("Between(%v, %v, %v) = %q, want %q", c.d, c.lo, c.hi, got, c.want)
		}
	}
	w := model.Window{Duration: 1200 * ms, Shorter: 200 * ms}
	if got := windowDur(w); got != "1.20s (1.00s–1.20s)" {
		t.Errorf("a window whose end was read 0.2 s late: %q, want its range", got)
	}
	if got := windowDur(model.Window{Duration: 1200 * ms, Uncertainty: 15 * ms}); got != "1.20s ± 15ms" {
		t.Errorf("an estimate ± 15 ms: %q, want ±", got)
	}
}
