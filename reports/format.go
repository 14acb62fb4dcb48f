package reports

import (
	"github.com/leaselab/leaselab/model/analysis"

	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
)

// dur prints a duration for people: model.DurationText, the one rounding
// rule of every report.
func dur(d time.Duration) string { return model.DurationText(d) }

// durp prints an optional duration; nil is a dash.
func durp(d *time.Duration) string {
	if d == nil {
		return "—"
	}
	return dur(*d)
}

// durLate prints a failover or recovery time (durp) that ends at a stable
// leader's promotion, with the range it may really have been in when that
// promotion's line was read late (shorter: FaultOutcome.FailoverShorter).
func durLate(d *time.Duration, shorter, u time.Duration) string {
	if d == nil || shorter == 0 {
		return durp(d)
	}
	return Between(*d, max(*d-shorter-u, 0), *d+u)
}

// trimFloat formats f with at most prec decimals and no trailing zeros
// (model.TrimFloat).
func trimFloat(f float64, prec int) string { return model.TrimFloat(f, prec) }

// at prints an offset from the start of the run. A fixed three decimals keep
// a column of times aligned and comparable at a glance.
func at(d time.Duration) string {
	return fmt.Sprintf("%.3fs", d.Seconds())
}

// windowEnd prints the end of a window, marking one still open at the end
// of the run, whose length is then only a lower bound.
func windowEnd(w model.Window) string {
	if w.Open {
		return at(w.End) + " (open)"
	}
	return at(w.End)
}

// windowDur prints a window's length, "≥" when it was still open, with its
// uncertainty when it has one: ± an estimate's either way (Uncertainty),
// or, when an end was stamped late (Longer, Shorter: one-sided), the range
// from its Least to its Most.
func windowDur(w model.Window) string {
	d := Uncertain(w.Duration, w.Spread())
	if w.Longer > 0 || w.Shorter > 0 {
		d = Between(w.Duration, max(w.Least(), 0), w.Most())
	}
	if w.Open {
		return "≥ " + d
	}
	return d
}

// Between prints d as measured and the range it may really have been in,
// lo to hi, for a one-sided uncertainty (agents' lines stamped late): "1.20s
// (1.00s–1.20s)". All three keep the digits two significant ones of the
// range's width leave; with lo = hi = d it is dur(d).
func Between(d, lo, hi time.Duration) string {
	if (lo == d && hi == d) || d == model.Unbounded || hi == model.Unbounded {
		return dur(d)
	}
	step := max(time.Duration(math.Pow(10, math.Floor(math.Log10(float64(hi-lo)))))/10, 1)
	return fixed(d.Round(step), step) + " (" + fixed(lo.Round(step), step) + "–" + fixed(hi.Round(step), step) + ")"
}

// countBetween prints a count as measured and, when it is not the same
// on every timing, the range it may really have been in: "2 (1–2)".
func countBetween(n int, r analysis.CountRange) string {
	if r.Least == n && r.Most == n {
		return strconv.Itoa(n)
	}
	return fmt.Sprintf("%d (%d–%d)", n, r.Least, r.Most)
}

// Uncertain prints d known within ± u: "1.20s ± 15ms". d keeps only the
// digits u leaves meaningful (down to the power of ten below u) and u two
// significant digits, so a report never shows precision the data lacks.
// With u = 0 it is dur(d).
func Uncertain(d, u time.Duration) string {
	if u <= 0 || d == model.Unbounded {
		return dur(d)
	}
	step := time.Duration(math.Pow(10, math.Floor(math.Log10(float64(u)))))
	return fixed(d.Round(step), step) + " ± " + dur(round2(u))
}

// fixed prints d with exactly the decimals step resolves: 1.2s at 100ms,
// 1.20s at 10ms, 120ms at 10ms below a second.
func fixed(d, step time.Duration) string {
	if d < 0 {
		return "-" + fixed(-d, step)
	}
	unit, name := time.Second, "s"
	if d < time.Second && step < time.Second {
		unit, name = time.Millisecond, "ms"
		if d < time.Millisecond && step < time.Millisecond {
			unit, name = time.Microsecond, "µs"
		}
	}
	decimals := 0
	for s := unit; s > step && decimals < 9; s /= 10 {
		decimals++
	}
	return strconv.FormatFloat(float64(d)/float64(unit), 'f', decimals, 64) + name
}

// round2 rounds u to two significant digits.
func round2(u time.Duration) time.Duration {
	step := time.Duration(math.Pow(10, math.Floor(math.Log10(float64(u))))) / 10
	if step < 1 {
		return u
	}
	return u.Round(step)
}

// shortID shortens an elector id (32 hex digits) to something a reader can
// match across tables without drowning in hex.
func shortID(id string) string {
	if len(id) > 6 {
		return id[:6]
	}
	return id
}

// member names an incarnation: "i1" plus its short id, because a restarted
// index runs under a new id and the two must not be confused.
func member(m model.Member) string {
	if m.Instance < 0 {
		if m.ID == "" {
			return "unknown"
		}
		return "unknown (" + shortID(m.ID) + ")"
	}
	if m.ID == "" {
		return fmt.Sprintf("i%d", m.Instance)
	}
	return fmt.Sprintf("i%d (%s)", m.Instance, shortID(m.ID))
}

func members(ms []model.Member) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = member(m)
	}
	return strings.Join(s, ", ")
}

// identityCause says in a few words why who held the key is unknown
// (analysis.Identity), for a suite row.
func identityCause(id analysis.Identity) string {
	var parts []string
	for _, s := range id.Shared {
		parts = append(parts, fmt.Sprintf("%s share %q", targets(s.Instances), s.Value))
	}
	if len(id.Unannounced) > 0 {
		parts = append(parts, "values no agent announced")
	}
	return nonEmpty(strings.Join(parts, "; "), "the key's value cannot be told")
}

// targets prints the instances a fault hit; none means the fault acted on
// Redis itself (a restart, a failover, a slot migration).
func targets(t []int) string {
	if len(t) == 0 {
		return "Redis itself"
	}
	s := make([]string, len(t))
	for i, x := range t {
		s[i] = fmt.Sprintf("i%d", x)
	}
	return strings.Join(s, ", ")
}

// stats prints a DurationStats on one line.
func stats(s analysis.DurationStats) string {
	if s.Count == 0 {
		return "none"
	}
	return fmt.Sprintf("n=%d, min %s, median %s, max %s", s.Count, dur(s.Min), dur(s.Median), dur(s.Max))
}

// yesNo prints a boolean the way a parameter table reads it.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
