package sweep

import (
	"context"
	"testing"
)

// BenchmarkProveFailover: what asking for failover costs a proof of
// partition-blackhole's default range: its path then records the
// analysis's comparisons too (more per run, and 2 more segments). Compare
// the two sub-benchmarks in one run; reports segments and runs per op.
func BenchmarkProveFailover(b *testing.B) {
	for _, m := range []string{exOverlap, exFailover} {
		b.Run(m, func(b *testing.B) {
			s := ProveSpace{Base: builtinScenario(b, "partition-blackhole"), Metrics: []string{m}}
			var res *ProveResult
			for b.Loop() {
				var err error
				if res, err = Prove(context.Background(), s, ProveOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Segments), "segments")
			b.ReportMetric(float64(res.Runs), "runs")
		})
	}
}
