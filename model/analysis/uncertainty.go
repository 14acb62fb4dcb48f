package analysis

import (
	"time"

	"github.com/leaselab/leaselab/model"
)

// MaxStampUncertainty is the most stamping lateness (Event.Late) at one of
// a window's ends a check can be judged with: past a second the run was too
// loaded to measure the spec's bounds at all. A check whose windows (on the
// stamps or on an extreme timing) have an end stamped later than this is
// unknown unless it fails on every timing; the lateness itself is kept
// whole.
const MaxStampUncertainty = time.Second

// attachUncertainty sets the uncertainty of every window of a from the
// events at its ends, and the summary's for the longest windows; a
// belief's Longer and Shorter are the Late of the very lines that began and
// ended it (lates, beliefsOf's). A timeline with no uncertain event (every
// in-process run) is left as it is.
func attachUncertainty(a *Analysis, ev []model.Event, lates []beliefLate) {
	type ends struct{ u, late time.Duration }
	at := map[time.Duration]ends{}
	for _, e := range ev {
		if e.Uncertainty > 0 || e.Late > 0 {
			x := at[e.At]
			at[e.At] = ends{max(x.u, e.Uncertainty), max(x.late, e.Late)}
		}
	}
	if len(at) == 0 {
		return
	}
	set := func(w *model.Window) {
		// The start may have come earlier by its Late (longer), the end
		// by its own (shorter); the symmetric parts add either way.
		w.Uncertainty, w.Longer, w.Shorter = at[w.Start].u, at[w.Start].late, 0
		if !w.Open {
			w.Uncertainty += at[w.End].u
			w.Shorter = at[w.End].late
		}
	}
	// longest returns the spread of the longest of the windows.
	longest := func(ws []*model.Window) time.Duration {
		var best *model.Window
		for _, w := range ws {
			if best == nil || w.Duration > best.Duration {
				best = w
			}
		}
		if best == nil {
			return 0
		}
		return best.Spread()
	}
	for i := range a.Beliefs {
		b := &a.Beliefs[i]
		set(&b.Window)
		b.Longer, b.Shorter = lates[i].start, 0
		if !b.Open {
			b.Shorter = lates[i].end
		}
	}
	var overlaps, gaps, stale []*model.Window
	for i := range a.Overlaps {
		set(&a.Overlaps[i].Window)
		overlaps = append(overlaps, &a.Overlaps[i].Window)
	}
	for i := range a.Gaps {
		set(&a.Gaps[i].Window)
		gaps = append(gaps, &a.Gaps[i].Window)
	}
	for i := range a.Redis.Stale {
		set(&a.Redis.Stale[i].Window)
		stale = append(stale, &a.Redis.Stale[i].Window)
	}
	for i := range a.Redis.Phantom {
		set(&a.Redis.Phantom[i].Window)
	}
	for i := range a.Redis.Holders {
		set(&a.Redis.Holders[i].Window)
	}
	for i := range a.Faults {
		f := &a.Faults[i]
		if f.Failover != nil {
			end := at[f.Applied+*f.Failover]
			f.FailoverShorter, f.FailoverUncertainty = end.late, end.u
		}
		if f.Recovery != nil {
			end := at[f.Healed+*f.Recovery]
			f.RecoveryShorter, f.RecoveryUncertainty = end.late, end.u
		}
	}
	a.Summary.MaxOverlapUncertainty = longest(overlaps)
	a.Summary.MaxGapUncertainty = longest(gaps)
	a.Summary.MaxStaleUncertainty = longest(stale)
}

// metricWindows returns the windows a check of metric measures the longest
// of, and whether the metric is one.
func metricWindows(metric model.Metric, a Analysis) ([]model.Window, bool) {
	var ws []model.Window
	switch metric {
	case model.MetricMaxOverlap:
		for _, o := range a.Overlaps {
			ws = append(ws, o.Window)
		}
	case model.MetricMaxGap:
		for _, g := range a.Gaps {
			ws = append(ws, g.Window)
		}
	case model.MetricStaleLeadership:
		for _, s := range a.Redis.Stale {
			ws = append(ws, s.Window)
		}
	case model.MetricFailover:
		for _, f := range a.Faults {
			if f.Demotion != nil && f.Failover != nil {
				ws = append(ws, faultWindow(f.Applied, *f.Failover, f.FailoverShorter, f.FailoverUncertainty))
			}
		}
	case model.MetricHealToStable:
		for _, f := range a.Faults {
			if !f.Open && f.Recovery != nil {
				ws = append(ws, faultWindow(f.Healed, *f.Recovery, f.RecoveryShorter, f.RecoveryUncertainty))
			}
		}
	default:
		return nil, false
	}
	return ws, true
}

// faultWindow is a failover or recovery as a window: from a harness event
// (exact) for d, to a stable leader that may have come shorter earlier and
// be off by u either way.
func faultWindow(from, d, shorter, u time.Duration) model.Window {
	w := NewWindow(from, from+d, false)
	w.Shorter, w.Uncertainty = shorter, u
	return w
}

// LongestWithin says how the longest of ws relates to limit, given each
// window's uncertainty: Fail when some window is over it however early or
// late its ends came (its Least), Pass when every window is within it
// however they came (its Most), Unknown otherwise; and the spread that
// decided an Unknown, for its detail.
func LongestWithin(ws []model.Window, limit time.Duration) (model.Verdict, time.Duration) {
	v, spread := model.Pass, time.Duration(0)
	for _, w := range ws {
		switch {
		case w.Least() > limit || (w.Open && w.Duration > limit):
			// An open window only grows past the run's end.
			return model.Fail, 0
		case w.Most() > limit:
			v, spread = model.Unknown, max(spread, w.Spread())
		}
	}
	return v, spread
}

// longestReaches says how the longest of ws relates to a minimum: Pass when
// some window reaches it however its ends came (its Least), Fail when none
// could have however they came (every Most is short of it), Unknown
// otherwise; and the spread that decided an Unknown, for its detail.
func longestReaches(ws []model.Window, limit time.Duration) (model.Verdict, time.Duration) {
	v, spread := model.Fail, time.Duration(0)
	for _, w := range ws {
		switch {
		case w.Least() >= limit:
			return model.Pass, 0
		case w.Most() >= limit:
			v, spread = model.Unknown, max(spread, w.Spread())
		}
	}
	return v, spread
}

// tooLate says whether some window of ws has an end whose stamping lateness
// is over MaxStampUncertainty.
func tooLate(ws []model.Window) bool {
	for _, w := range ws {
		if w.Longer > MaxStampUncertainty || w.Shorter > MaxStampUncertainty {
			return true
		}
	}
	return false
}
