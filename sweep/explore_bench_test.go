package sweep

import (
	"context"
	"testing"
	"time"
)

// BenchmarkExploreRuns: the search's speed on one core (run with -cpu 1)
// for a 3-instance scenario, partition-blackhole: one seed, 20,000 runs
// per op, every metric judged. Reports runs per minute.
func BenchmarkExploreRuns(b *testing.B) {
	s := Space{Base: builtinScenario(b, "partition-blackhole"), Seeds: 1, Budget: 20000}
	var runs int
	start := time.Now()
	for b.Loop() {
		r, err := Explore(context.Background(), s, ExploreOptions{Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		runs += r.Runs
	}
	b.ReportMetric(float64(runs)/time.Since(start).Minutes(), "runs/min")
}

// BenchmarkExploreBlackholeOverlap: how close partition-blackhole's worst
// overlap comes to its bound, and how long that takes, on one core: one
// seed, 4,000 runs per op. Reports the ratio reached and the seconds.
func BenchmarkExploreBlackholeOverlap(b *testing.B) {
	s := Space{Base: builtinScenario(b, "partition-blackhole"), Metrics: []string{exOverlap}, Seeds: 1, Budget: 4000}
	var ratio float64
	start := time.Now()
	for b.Loop() {
		r, err := Explore(context.Background(), s, ExploreOptions{Workers: 1})
		if err != nil {
			b.Fatal(err)
		}
		ratio = r.Worst[0].Ratio
	}
	b.ReportMetric(ratio, "ratio")
	b.ReportMetric(time.Since(start).Seconds()/float64(b.N), "s/search")
}
