package virtual

import (
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// TestDriverErrorIsAHarnessError: what the fault driver cannot do (here a
// kind it has no driver for, which validation keeps out of a real run) is
// in the run's errors, not dropped.
func TestDriverErrorIsAHarnessError(t *testing.T) {
	sc := model.Scenario{Name: "bogus", Instances: 1, Seed: 1, Duration: time.Second, Recovery: time.Second,
		Faults: []model.Fault{{At: 100 * time.Millisecond, Kind: "bogus", Target: model.Target{Indexes: []int{0}}}}}.WithDefaults()
	rec, err := Backend{}.Run(t.Context(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Errors) != 1 || !strings.Contains(rec.Errors[0], `no driver for fault kind "bogus"`) {
		t.Errorf("errors %q, want the driver's", rec.Errors)
	}
}
