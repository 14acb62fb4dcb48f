package real_test

import (
	"github.com/leaselab/leaselab/model/bounds"

	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/real"
)

// BenchmarkScale runs N instances (elector mode) through their own proxies
// with a leader crash, and reports the harness's setup time, its CPU use per
// instance, and whether the measured gap stayed within the prediction.
//
//	go test -run X -bench Scale -benchtime 1x ./sim/
func BenchmarkScale(b *testing.B) {
	for _, n := range []int{10, 50, 100, 200, 500, 1000} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			for b.Loop() {
				res, err := real.Run(context.Background(), model.Scenario{Name: fmt.Sprintf("scale-%d", n), Instances: n, Params: fast,
					Duration: 4 * time.Second, Recovery: 2 * time.Second,
					Faults: []model.Fault{{At: 2 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}}}}, real.Options{})
				if err != nil {
					b.Fatal(err)
				}
				s := res.Analysis.Summary
				var crash bounds.Prediction
				for _, p := range res.Predictions {
					if p.Mode == model.ModeLeaderCrash {
						crash = p
					}
				}
				b.ReportMetric(float64(res.Setup.Milliseconds()), "setup-ms")
				b.ReportMetric(res.Cost.CPUPerInstancePercent, "cpu%/instance")
				b.ReportMetric(float64(s.MaxGap.Milliseconds()), "gap-ms")
				b.ReportMetric(float64(crash.MaxGap.Milliseconds()), "predicted-gap-ms")
				b.ReportMetric(float64(s.Overlaps), "overlaps")
				b.ReportMetric(float64(len(res.Timeline)), "events")
				if len(res.Errors) > 0 {
					b.Fatalf("harness errors: %v", res.Errors)
				}
			}
		})
	}
}
