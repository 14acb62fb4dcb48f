package analysis

import (
	"slices"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// TestAnalyzeWithFailoverComparisons: the failover's stability rule is a
// comparison the timeline's order does not make. A leader cut off at 2 s
// loses at 3 s; i1 leads from 4 s for x, then i2 to the end. Every x in
// 1 s..9 s orders the events the same way, yet the failover is 2 s + x +
// 1 ms while i1 leads less than a TTL (5 s) and 2 s from there on. The
// comparisons AnalyzeWith tells part exactly there: the same outcomes on
// each side (where the failover is affine in x), one that turns between.
func TestAnalyzeWithFailoverComparisons(t *testing.T) {
	const ms = time.Millisecond
	p := model.Params{TTL: 5 * time.Second, Wait: 6 * time.Second}
	run := func(x time.Duration) (time.Duration, []int) {
		tl := model.Timeline{
			{At: 0, Kind: model.InstanceStarted, Instance: 0, ID: "a"},
			{At: 0, Kind: model.InstanceStarted, Instance: 1, ID: "b"},
			{At: 0, Kind: model.InstanceStarted, Instance: 2, ID: "c"},
			{At: 0, Kind: model.LeaderGained, Instance: 0, ID: "a"},
			{At: 2 * time.Second, Kind: model.FaultApplied, Instance: -1, FaultID: 0, Fault: "partition", Detail: "mode=blackhole", Target: []int{0}},
			{At: 3 * time.Second, Kind: model.LeaderLost, Instance: 0, ID: "a"},
			{At: 4 * time.Second, Kind: model.FaultHealed, Instance: -1, FaultID: 0},
			{At: 4 * time.Second, Kind: model.LeaderGained, Instance: 1, ID: "b"},
			{At: 4*time.Second + x, Kind: model.LeaderLost, Instance: 1, ID: "b"},
			{At: 4*time.Second + x + ms, Kind: model.LeaderGained, Instance: 2, ID: "c"},
			{At: 30 * time.Second, Kind: model.RunEnded, Instance: -1},
		}
		var signs []int
		a := AnalyzeWith(tl, p, Options{OnCompare: func(a, b time.Duration) {
			switch {
			case a < b:
				signs = append(signs, -1)
			case a > b:
				signs = append(signs, 1)
			default:
				signs = append(signs, 0)
			}
		}})
		plain := Analyze(tl, p)
		if len(a.Faults) != 1 || a.Faults[0].Failover == nil || plain.Faults[0].Failover == nil || *plain.Faults[0].Failover != *a.Faults[0].Failover {
			t.Fatalf("x = %v: faults %+v, Analyze's %+v: want one failover, the same with and without the hook", x, a.Faults, plain.Faults)
		}
		return *a.Faults[0].Failover, signs
	}
	var below, above []int
	for _, x := range []time.Duration{time.Second, 3 * time.Second, 4999 * ms} {
		f, s := run(x)
		if want := 2*time.Second + x + ms; f != want {
			t.Errorf("x = %v: failover %v, want %v (i2 the first stable leader)", x, f, want)
		}
		if below == nil {
			below = s
		} else if !slices.Equal(s, below) {
			t.Errorf("x = %v: comparisons %v, at 1 s %v: want the same outcomes on one piece", x, s, below)
		}
	}
	for _, x := range []time.Duration{5*time.Second + ms, 7 * time.Second, 9 * time.Second} {
		f, s := run(x)
		if f != 2*time.Second {
			t.Errorf("x = %v: failover %v, want 2s (i1 stable)", x, f)
		}
		if above == nil {
			above = s
		} else if !slices.Equal(s, above) {
			t.Errorf("x = %v: comparisons %v, at 5.001 s %v: want the same outcomes on one piece", x, s, above)
		}
	}
	// x = TTL exactly is a piece of its own, a tie: i1 led a TTL, stable.
	if f, s := run(5 * time.Second); f != 2*time.Second || slices.Equal(s, below) || slices.Equal(s, above) {
		t.Errorf("x = TTL: failover %v, comparisons %v: want 2s and a tie of its own", f, s)
	}
	if slices.Equal(below, above) {
		t.Errorf("the comparisons told are the same on both sides of x = TTL (%v): the stability rule's is missing", below)
	}
}
