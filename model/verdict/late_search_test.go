package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// randomLateTimeline is three instances leading in turns and at once, every
// agent line read up to 0.6 s late, crashes and stops recorded before the
// agent's last line was read (a demotion or a promotion, some too little
// late to have been), restarts with new ids, a partition of one instance,
// an instant fault, the key's holders and chores.
func randomLateTimeline(rng *rand.Rand) model.Timeline {
	ms := time.Millisecond
	late := func() time.Duration {
		switch rng.IntN(3) {
		case 0:
			return 0
		case 1:
			return time.Duration(1+rng.IntN(50)) * ms
		}
		return time.Duration(100+rng.IntN(500)) * ms
	}
	var tl model.Timeline
	ids := []string{"a", "b", "c"}
	for i, base := range ids {
		id, restarts := base, 0
		at := time.Duration(rng.IntN(3000)) * ms
		tl = append(tl, model.Event{At: 0, Kind: model.InstanceStarted, Instance: i, ID: id})
		// gone is a crash (or stop) the harness recorded before it read
		// lines the agent wrote before it, then a restart with a new id.
		gone := func(kind model.Kind) {
			tl = append(tl, model.Event{At: at, Kind: kind, Instance: i, ID: id})
			if rng.IntN(2) == 0 {
				// A promotion written before the end, read after it:
				// sometimes so little late it cannot have been.
				d := time.Duration(1+rng.IntN(100)) * ms
				tl = append(tl, model.Event{At: at + d, Kind: model.LeaderGained, Instance: i, ID: id, Late: d - 1 + late()})
			}
			at += time.Duration(200+rng.IntN(1000)) * ms
			restarts++
			id = base + strconv.Itoa(restarts)
			tl = append(tl, model.Event{At: at, Kind: model.InstanceStarted, Instance: i, ID: id})
			at += time.Duration(50+rng.IntN(1000)) * ms
		}
		for n := rng.IntN(5); n > 0; n-- {
			tl = append(tl, model.Event{At: at, Kind: model.LeaderGained, Instance: i, ID: id, Late: late()})
			at += time.Duration(50+rng.IntN(4000)) * ms
			switch rng.IntN(5) {
			case 0:
				// Crashed: the harness recorded it before it read the
				// agent's demotion, written just before.
				d := time.Duration(rng.IntN(100)) * ms
				tl = append(tl, model.Event{At: at, Kind: model.InstanceCrashed, Instance: i, ID: id},
					model.Event{At: at + d, Kind: model.LeaderLost, Instance: i, ID: id, Late: d + late()})
				at += time.Duration(rng.IntN(200)) * ms
				restarts++
				id = base + strconv.Itoa(restarts)
				tl = append(tl, model.Event{At: at, Kind: model.InstanceStarted, Instance: i, ID: id})
				at += time.Duration(50+rng.IntN(1000)) * ms
				continue
			case 1:
				tl = append(tl, model.Event{At: at, Kind: model.LeaderLost, Instance: i, ID: id, Late: late()})
				at += time.Duration(rng.IntN(300)) * ms
				kind := model.InstanceCrashed
				if rng.IntN(2) == 0 {
					kind = model.InstanceStopped
				}
				gone(kind)
				continue
			}
			tl = append(tl, model.Event{At: at, Kind: model.LeaderLost, Instance: i, ID: id, Late: late()})
			at += time.Duration(50+rng.IntN(3000)) * ms
		}
	}
	// The key's holders (exact: the harness's own observation), and
	// chores stamped late, within a second of each other.
	holders := []string{"", "a", "b", "c"}
	for range 6 {
		tl = append(tl, model.Event{At: time.Duration(rng.IntN(20000)) * ms, Kind: model.RedisHolder, Instance: -1, Holder: holders[rng.IntN(4)]})
	}
	for range 8 {
		i := rng.IntN(3)
		tl = append(tl, model.Event{At: time.Duration(rng.IntN(20000)) * ms, Kind: model.ChoreRan, Instance: i, ID: ids[i], Chore: "scheduler",
			Took: time.Duration(rng.IntN(30)) * ms, Late: late()})
	}
	f := time.Duration(2000+rng.IntN(6000)) * ms
	tl = append(tl, model.Event{At: f, Kind: model.FaultApplied, Instance: -1, FaultID: 0, Fault: "partition", Mode: "blackhole", Target: []int{rng.IntN(3)}},
		model.Event{At: f + time.Duration(rng.IntN(3000))*ms, Kind: model.FaultHealed, Instance: -1, FaultID: 0})
	g := time.Duration(1000+rng.IntN(12000)) * ms
	tl = append(tl, model.Event{At: g, Kind: model.FaultApplied, Instance: -1, FaultID: 1, Fault: "redis-restart", Instant: true},
		model.Event{At: g, Kind: model.FaultHealed, Instance: -1, FaultID: 1})
	tl = append(tl, model.Event{At: 30 * time.Second, Kind: model.RunEnded, Instance: -1, Detail: "complete"})
	slices.SortStableFunc(tl, func(x, y model.Event) int { return cmp.Compare(x.At, y.At) })
	return tl
}

// aTiming is one timing the lines of tl allow: each line moved earlier by
// up to its Late (often all of it or none), an agent's lines kept in the
// order it wrote them, each after the one before, and a line read after
// its agent's crash written before it.
func aTiming(tl model.Timeline, rng *rand.Rand) model.Timeline {
	out := slices.Clone(tl)
	last := map[string]time.Duration{}    // incarnation id → its previous line's time
	crashed := map[string]time.Duration{} // incarnation id → its crash or stop
	for i, e := range out {
		if _, was := crashed[e.ID]; !was && (e.Kind == model.InstanceCrashed || e.Kind == model.InstanceStopped) {
			crashed[e.ID] = e.At
		}
		if e.Kind == model.InstanceStarted {
			last[e.ID] = e.At // an incarnation writes nothing before it starts
		}
		if e.Late == 0 && e.Kind != model.LeaderGained && e.Kind != model.LeaderLost {
			continue
		}
		if e.Kind == model.ChoreRan {
			// A chore's line is its own: moved alone.
			out[i].At, out[i].Late = e.At-time.Duration(rng.Int64N(int64(e.Late)+1)), 0
			continue
		}
		hi := e.At
		if c, ok := crashed[e.ID]; ok {
			hi = min(hi, c)
		}
		// A line whose earliest time is after its agent's crash cannot
		// have been written (no leadership): at the crash, after it.
		lo := min(e.At-e.Late, hi)
		var at time.Duration
		switch rng.IntN(3) {
		case 0:
			at = lo
		case 1:
			at = hi
		default:
			at = lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
		}
		// After the agent's previous line: a belief of no length is no
		// leadership, and no agent writes two lines in one nanosecond.
		at = min(max(at, last[e.ID]+1), hi)
		last[e.ID] = at
		out[i].At, out[i].Late = at, 0
	}
	slices.SortStableFunc(out, func(x, y model.Event) int { return cmp.Compare(x.At, y.At) })
	return out
}

// An adversarial search for a timing outside the late range: on random
// timelines, every timing their lines allow measures each figure within
// LateRange (stale leadership too), and each count (chores too); and a
// check or claim that passes (holds) or fails on the late lines does so on
// every timing of them.
func TestLateRangeHoldsEveryTiming(t *testing.T) {
	p := model.Params{TTL: time.Second, Wait: 1200 * time.Millisecond, JitterMS: -1}.WithDefaults()
	rng := rand.New(rand.NewPCG(29, 1))
	within := func(what string, d time.Duration, s analysis.Span, tl, real model.Timeline) {
		t.Helper()
		if d < s.Least || d > s.Most {
			t.Fatalf("%s %v outside %v to %v\ntimeline %s\ntiming %s", what, d, s.Least, s.Most, brief(tl), brief(real))
		}
	}
	trials, timings := 200, 30
	if testing.Short() {
		trials = 50
	}
	for range trials {
		tl := randomLateTimeline(rng)
		a := analysis.Analyze(tl, p)
		r := a.LateRange
		if r == nil {
			continue // nothing read late
		}
		// Checks with limits about the run's own figures.
		sc := model.Scenario{Params: p}
		for _, m := range []string{"max_overlap", "total_overlap", "max_gap", "stale_leadership", "failover", "heal_to_stable"} {
			lim := time.Duration(rng.IntN(4000)) * time.Millisecond
			e := model.Expectation{Metric: model.Metric(m), Max: lim.String()}
			if rng.IntN(2) == 0 {
				e = model.Expectation{Metric: model.Metric(m), Min: lim.String()}
			}
			sc.Expect = append(sc.Expect, e)
		}
		for _, m := range []string{"overlap_windows", "gaps", "duplicate_chores", "stale_chores"} {
			sc.Expect = append(sc.Expect, model.Expectation{Metric: model.Metric(m), Max: strconv.Itoa(rng.IntN(4)), Min: strconv.Itoa(rng.IntN(2))})
		}
		ev := Evaluate(sc, a, nil)
		for range timings {
			real := aTiming(tl, rng)
			b := analysis.Analyze(real, p)
			// A verdict on the late lines holds on every timing of them.
			got := Evaluate(sc, b, nil)
			for i, c := range ev.Checks {
				if c.Verdict != model.Unknown && got.Checks[i].Verdict != c.Verdict {
					t.Fatalf("%s %s: %s on the late lines, %s on a timing of them (%s)\ntimeline %s\ntiming %s", c.Metric, c.Want(), c.Verdict, got.Checks[i].Verdict, got.Checks[i].Value(), brief(tl), brief(real))
				}
			}
			for i, c := range a.Claims {
				if g := b.Claims[i].Verdict; (c.Verdict == analysis.NotHeld && g != analysis.NotHeld) || (c.Verdict == analysis.Held && g == analysis.NotHeld) {
					t.Fatalf("claim %s: %s on the late lines (%s), %s on a timing of them (%s)\ntimeline %s\ntiming %s", c.Name, c.Verdict, c.Detail, g, b.Claims[i].Detail, brief(tl), brief(real))
				}
			}
			s := b.Summary
			within("max overlap", s.MaxOverlap, r.MaxOverlap, tl, real)
			within("total overlap", s.TotalOverlap, r.TotalOverlap, tl, real)
			within("max gap", s.MaxGap, r.MaxGap, tl, real)
			if s.Overlaps < r.Overlaps.Least || s.Overlaps > r.Overlaps.Most {
				t.Fatalf("%d overlaps outside %+v\ntimeline %s\ntiming %s", s.Overlaps, r.Overlaps, brief(tl), brief(real))
			}
			if b.Redis.Observed {
				within("max stale", s.MaxStale, r.MaxStale, tl, real)
			}
			for _, c := range []struct {
				what string
				n    int
				r    analysis.CountRange
			}{{"duplicate chores", s.DuplicateChores, r.DuplicateChores}, {"stale chores", s.StaleChores, r.StaleChores}} {
				if c.n < c.r.Least || c.n > c.r.Most {
					t.Fatalf("%d %s outside %+v\ntimeline %s\ntiming %s", c.n, c.what, c.r, brief(tl), brief(real))
				}
			}
			if s.Gaps < r.Gaps.Least || s.Gaps > r.Gaps.Most {
				t.Fatalf("%d gaps outside %+v\ntimeline %s\ntiming %s", s.Gaps, r.Gaps, brief(tl), brief(real))
			}
			for _, m := range []struct {
				metric string
				span   *analysis.Span
			}{{"failover", r.Failover}, {"heal_to_stable", r.HealToStable}} {
				got := analysis.Measure(model.Metric(m.metric), b)
				if m.span == nil {
					continue
				}
				if got.Missing != "" || got.Unknown != "" {
					t.Fatalf("%s not measured on a timing (%s%s), but in %v to %v\ntimeline %s\ntiming %s", m.metric, got.Missing, got.Unknown, m.span.Least, m.span.Most, brief(tl), brief(real))
				}
				within(m.metric, got.Value, *m.span, tl, real)
			}
		}
	}
}

// brief prints a timeline for a failure message, one event a line.
func brief(tl model.Timeline) string {
	var out []string
	for _, e := range tl {
		l := fmt.Sprintf("%v %s i%d %s %s", e.At, e.Kind, e.Instance, e.ID, e.Holder+e.Fault)
		if e.Late > 0 {
			l += fmt.Sprintf(" late %v", e.Late)
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
