package sweep

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// failoverThenPartition is a replicated Redis whose failover's lag the
// moved partition often falls in: Validate refuses those schedules.
func failoverThenPartition() model.Scenario {
	return model.Scenario{
		Name: "fo-part", Redis: model.RedisReplicated, Instances: 3, Duration: 30 * time.Second,
		Faults: []model.Fault{
			{At: 6250 * time.Millisecond, Kind: model.FaultRedisFailover, Lag: 5 * time.Second},
			{At: 12 * time.Second, Kind: model.FaultPartition, Target: model.Target{Role: model.RoleLeader}, For: 3 * time.Second},
		},
	}
}

// A schedule the validator refuses is skipped and counted, not the end of
// the search: every seed spends its whole budget (the search stopped at
// 328 of 2,000 runs on the first refused mutant), and the output says how
// many were skipped and why.
func TestExploreSkipsRefusedSchedules(t *testing.T) {
	s := Space{Base: failoverThenPartition(), Seeds: 2, Budget: 2 * 400}
	r, err := Explore(context.Background(), s, ExploreOptions{})
	if err != nil {
		t.Fatalf("explore stopped: %v", err)
	}
	if !r.Complete || r.Runs != s.Budget {
		t.Fatalf("complete %v, %d runs of %d (%s)", r.Complete, r.Runs, s.Budget, r.Incomplete)
	}
	if r.Skipped == 0 || len(r.SkipReasons) == 0 {
		t.Fatalf("skipped %d, reasons %v: want the refused schedules counted", r.Skipped, r.SkipReasons)
	}
	if !strings.Contains(r.SkipReasons[0].Why, "holds the schedule") {
		t.Fatalf("top reason %q: want the failover's lag", r.SkipReasons[0].Why)
	}
	var tb, md bytes.Buffer
	r.WriteTable(&tb)
	if err := ExploreMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"table": tb.String(), "explore.md": md.String()} {
		if !strings.Contains(out, "skipped") || !strings.Contains(out, "holds the schedule") {
			t.Errorf("%s does not say what was skipped and why:\n%s", name, out)
		}
	}
}
