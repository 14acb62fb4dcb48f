package reports

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

func distResult(seed int64, overlap time.Duration, v model.Verdict) *verdict.Result {
	r := &verdict.Result{Seed: seed, Complete: true}
	r.Verdict = v
	r.Analysis.Summary.MaxOverlap = overlap
	r.Checks = []model.Check{{Metric: "max_overlap", Limit: "3s", Verdict: v}}
	return r
}

// Quantiles are nearest-rank to 1 ms, min/max exact, the worst seed the
// smallest with the maximum, and the bytes do not depend on the order the
// runs arrive in.
func TestDistributionStreaming(t *testing.T) {
	build := func(order []int64) []byte {
		d := NewDistribution(model.Scenario{Name: "x", Seed: 1}, "virtual", 100, func(seed int64, b string) string { return b })
		for _, s := range order {
			v := model.Pass
			if s > 98 {
				v = model.Fail
			}
			d.Add(distResult(s, time.Duration(s)*10*time.Millisecond+123*time.Microsecond, v))
		}
		d.Finish()
		if d.Worst.Seed != 100 {
			t.Errorf("worst run %d, want 100 (a failure with the longest overlap)", d.Worst.Seed)
		}
		b, _ := json.Marshal(d)
		return b
	}
	var up, down []int64
	for s := int64(1); s <= 100; s++ {
		up, down = append(up, s), append([]int64{s}, down...)
	}
	a, b := build(up), build(down)
	if !bytes.Equal(a, b) {
		t.Fatal("the order of the runs changed the distribution")
	}
	var d Distribution
	_ = json.Unmarshal(a, &d)
	m := d.Metrics[1]
	if m.Name != "max_overlap" || m.Min != 0.010123 || m.Max != 1.000123 || m.P50 != 0.5 || m.P90 != 0.9 || m.P99 != 0.99 || m.WorstSeed != 100 {
		t.Errorf("max_overlap: %+v", m)
	}
	if d.Metrics[3].NotMeasured != 100 || d.Metrics[3].Measured != 0 {
		t.Errorf("failover never measured: %+v", d.Metrics[3])
	}
	if d.Verdicts != (VerdictCounts{Pass: 98, Fail: 2}) || d.Broken[0].Fail != 2 || d.Broken[0].FirstSeed != 99 {
		t.Errorf("verdicts %+v, broken %+v", d.Verdicts, d.Broken)
	}
}
