package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"strconv"
	"testing"
	"time"
)

// flappingTimeline is n handovers among agents instances, each
// overlapping the next by 10 ms, every agent line read late by late, a
// chore and the key's holder every third handover.
func flappingTimeline(n, agents int, late time.Duration) model.Timeline {
	var tl model.Timeline
	at := time.Duration(0)
	for k := 0; k < n; k++ {
		i := k % agents
		id := "i" + strconv.Itoa(i)
		tl = append(tl, model.Event{At: at, Kind: model.LeaderGained, Instance: i, ID: id, Late: late})
		at += 300 * time.Millisecond
		tl = append(tl, model.Event{At: at + 10*time.Millisecond, Kind: model.LeaderLost, Instance: i, ID: id, Late: late})
		if k%3 == 0 {
			tl = append(tl, model.Event{At: at, Kind: model.ChoreRan, Instance: i, ID: id, Chore: "s", Late: late},
				model.Event{At: at + 5*time.Millisecond, Kind: model.RedisHolder, Instance: -1, Holder: id})
		}
	}
	tl = append(tl, model.Event{At: at + time.Minute, Kind: model.RunEnded, Instance: -1})
	return analysis.InOrder(tl)
}

// BenchmarkAnalyzeLate is Analyze and Evaluate of a flapping run with and
// without Late on its agents' lines (the extreme timings' cost).
func BenchmarkAnalyzeLate(b *testing.B) {
	p := model.Params{TTL: time.Second, Wait: 1200 * time.Millisecond, JitterMS: -1}.WithDefaults()
	sc := model.Scenario{Params: p, Expect: []model.Expectation{{Metric: "overlap_windows", Max: "0"}, {Metric: "gaps", Max: "0"}, {Metric: "max_overlap", Max: "1s"}}}
	for _, n := range []int{2000, 8000} {
		for _, late := range []time.Duration{0, 5 * time.Millisecond} {
			tl := flappingTimeline(n, 100, late)
			b.Run("late="+late.String()+"/handovers="+strconv.Itoa(n), func(b *testing.B) {
				for b.Loop() {
					Evaluate(sc, analysis.Analyze(tl, p), nil)
				}
			})
		}
	}
}
