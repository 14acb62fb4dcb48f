package model

import "time"

// attachUncertainty sets the Uncertainty of every window of a from the
// events at its ends, and the summary's for the longest windows. A timeline
// with no uncertain event (every harness run) is left as it is.
func attachUncertainty(a *Analysis, ev []Event) {
	at := map[time.Duration]time.Duration{}
	for _, e := range ev {
		if e.Uncertainty > 0 {
			at[e.At] = max(at[e.At], e.Uncertainty)
		}
	}
	if len(at) == 0 {
		return
	}
	set := func(w *Window) {
		w.Uncertainty = at[w.Start]
		if !w.Open {
			w.Uncertainty += at[w.End]
		}
	}
	// longest returns the uncertainty of the longest of the windows.
	longest := func(ws []*Window) time.Duration {
		var best *Window
		for _, w := range ws {
			if best == nil || w.Duration > best.Duration {
				best = w
			}
		}
		if best == nil {
			return 0
		}
		return best.Uncertainty
	}
	for i := range a.Beliefs {
		set(&a.Beliefs[i].Window)
	}
	var overlaps, gaps, stale []*Window
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
	a.Summary.MaxOverlapUncertainty = longest(overlaps)
	a.Summary.MaxGapUncertainty = longest(gaps)
	a.Summary.MaxStaleUncertainty = longest(stale)
}
