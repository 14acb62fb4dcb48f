package live

import (
	"github.com/leaselab/leaselab/model/verdict"

	"fmt"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
)

// Verdict is the verdict as the terminal shows it: "PASS", or
// "PASS · 1 finding" when a spec claim did not hold in a run that met its
// expectations, so that neither hides the other.
func Verdict(res *verdict.Result) string {
	v := strings.ToUpper(string(res.Verdict))
	switch n := len(res.Findings()); n {
	case 0:
		return v
	case 1:
		return v + " · 1 finding"
	default:
		return fmt.Sprintf("%s · %d findings", v, n)
	}
}

// VerdictLines are a complete run's lines as it ends: the verdict, the
// findings' count, the key figures and the measurement error, then the
// verdict's reasons (each check's under its own verdict), the lease values that leave the key's holder unknown
// (analysis.Identity), the harness errors and err (what went wrong around
// the run, a report not written).
func VerdictLines(name string, res *verdict.Result, err error) []string {
	s := res.Analysis.Summary
	lines := []string{fmt.Sprintf("%s: %s  max gap %v, max overlap %v, failover max %v, stale max %v%s", name, Verdict(res),
		ms(s.MaxGap), ms(s.MaxOverlap), ms(s.Failover.Max), ms(s.MaxStale), MeasurementNote(res))}
	// A check's reason is labelled with that check's verdict (an unknown
	// check of a failed run is not a fail); a run-level one with the run's.
	checks := map[string]model.Verdict{}
	for _, c := range res.Checks {
		checks[c.String()] = c.Verdict
	}
	for _, r := range res.Reasons {
		v, ok := checks[r]
		if !ok {
			v = res.Verdict
		}
		lines = append(lines, fmt.Sprintf("  %s: %s", v, r))
	}
	for _, f := range res.Analysis.Identity.Findings() {
		lines = append(lines, "  identity: "+f)
	}
	for _, e := range res.Errors {
		lines = append(lines, "  harness error: "+e)
	}
	if err != nil {
		lines = append(lines, fmt.Sprintf("  ERROR: %v", err))
	}
	return lines
}

// MeasurementNote is the run's measurement error, as the verdict line
// shows it: the keyspace-notification lateness (how late the Redis lane
// saw the key change) and how late faults were injected against their
// schedule, and, when the machine ran them late by analysis.MinStall or more,
// how late the instances' timers fired and the harness's goroutines woke
// (analysis.Stall, which the verdicts count). Parallel runs that starve the
// machine show here first. A run
// in virtual time measures exactly: nothing is shown.
func MeasurementNote(res *verdict.Result) string {
	if res.VirtualTime {
		return ""
	}
	n := "none timed"
	if nl := res.Analysis.Redis.NotificationLateness; nl.Count > 0 {
		n = fmt.Sprintf("≤ %v late", ms(nl.Max))
	}
	stamps := ""
	if sl := res.Analysis.StampLateness; sl.Count > 0 {
		stamps = fmt.Sprintf(", agent lines stamped ≤ %v late (median %v)", ms(sl.Max), ms(sl.Median))
	}
	stalls := ""
	if late := res.Analysis.StallLateness(true); late > 0 {
		stalls += fmt.Sprintf(", instance timers ≤ %v late", ms(late))
	}
	if late := res.Analysis.StallLateness(false); late > 0 {
		stalls += fmt.Sprintf(", harness wake-ups ≤ %v late", ms(late))
	}
	return fmt.Sprintf("; measurement error: notifications %s, faults ≤ %v late%s%s", n, ms(res.FaultLateness()), stamps, stalls)
}

// ms rounds a duration to the millisecond for the terminal.
func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
