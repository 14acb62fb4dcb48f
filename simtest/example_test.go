package simtest_test

import (
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/simtest"
)

// A test of your own runs a scenario against Redis and Toxiproxy in
// containers and judges what was measured. Without Docker it is skipped
// (failed with LEASELAB_REQUIRE_DOCKER=1); the containers are gone when it
// returns.
func ExampleRunInContainers() {
	testLeaderCrash := func(t *testing.T) {
		res := simtest.RunInContainers(t, model.Scenario{
			Instances: 3,
			Params:    model.Params{TTL: 500 * time.Millisecond, Wait: 600 * time.Millisecond},
			Duration:  3 * time.Second,
			Faults: []model.Fault{{At: time.Second, Kind: model.FaultCrash,
				Target: model.Target{Role: model.RoleLeader}}},
		})
		s := res.Analysis.Summary
		if s.Gaps != 1 || s.Overlaps != 0 {
			t.Errorf("after a leader crash: %d gaps, %d overlaps; want 1 and 0", s.Gaps, s.Overlaps)
		}
		if res.Verdict != model.Pass {
			t.Errorf("verdict %s: %v", res.Verdict, res.Reasons)
		}
	}
	_ = testLeaderCrash
}
