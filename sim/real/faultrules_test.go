package real_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// TestClockHealOfACrashedInstance: seven clocks run 2× fast, then the
// leader crashes for good. The clock fault's heal finds it not running:
// nothing to heal there (it ended the run with the harness error "healing a
// clock fault: not running"), and the FaultHealed says so.
func TestClockHealOfACrashedInstance(t *testing.T) {
	t.Parallel()
	res := runScenario(t, model.Scenario{Instances: 7, Params: fast, Duration: 3 * time.Second, Recovery: time.Second,
		Faults: []model.Fault{
			{At: 500 * time.Millisecond, Kind: model.FaultClock, Rate: 2, Target: model.Target{Role: model.RoleAll}},
			{At: 1500 * time.Millisecond, Kind: model.FaultCrash},
		}})
	if len(res.Errors) > 0 {
		t.Errorf("harness errors %v, want none (the heal of the crashed instance's clock is none)", res.Errors)
	}
	var crashed []int
	for _, e := range res.Timeline {
		if e.Kind == model.FaultApplied && e.FaultID == 1 {
			crashed = e.Target
		}
	}
	if len(crashed) != 1 {
		t.Fatalf("the leader's crash hit %v, want one instance", crashed)
	}
	for _, e := range res.Timeline {
		if e.Kind == model.FaultHealed && e.FaultID == 0 {
			want := fmt.Sprintf("instance %v not running: nothing to heal there", crashed)
			if !strings.Contains(e.Detail, want) {
				t.Errorf("the clock fault's heal says %q, want %q", e.Detail, want)
			}
			return
		}
	}
	t.Errorf("the clock fault was not healed")
}
