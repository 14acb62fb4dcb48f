package virtual_test

import (
	"path/filepath"
	"testing"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

// The schedules that broke a "predicted" limit before the bound modelled
// their case (sim/testdata/bound-repros): each expects its case to be
// exercised (a min on the metric it is about) and every predicted limit to
// hold. sim/real's TestBoundReprosReal runs the ones that can be timed.
func TestBoundReprosHold(t *testing.T) {
	files, err := filepath.Glob("../testdata/bound-repros/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no repros: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenarios.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			res := run(t, sc, virtual.Options{})
			for _, c := range res.Evaluation.Checks {
				t.Logf("%s", c)
				if c.Verdict != model.Pass {
					t.Errorf("%s", c)
				}
			}
		})
	}
}
