package virtual_test

import (
	"github.com/leaselab/leaselab/model/verdict"

	"path/filepath"
	"strings"
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
	eachScenario(t, "../testdata/bound-repros/*.yaml", func(t *testing.T, res *verdict.Result) {
		for _, c := range res.Evaluation.Checks {
			t.Logf("%s", c)
			if c.Verdict != model.Pass {
				t.Errorf("%s", c)
			}
		}
	})
}

// eachScenario runs every scenario file matching pattern on the virtual
// backend, each in its own subtest, and hands check its result; it fails t
// when nothing matches.
func eachScenario(t *testing.T, pattern string, check func(*testing.T, *verdict.Result)) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario matches %s: %v", pattern, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := scenarios.Load(f)
			if err != nil {
				t.Fatal(err)
			}
			check(t, run(t, sc, virtual.Options{}))
		})
	}
}

// Schedules outside what the bounds model (sim/testdata/bound-unknown: no
// healthy follower left to take over, a ClusterClient's failing calls) are
// judged unknown on every metric that depends on it, never failed: each has
// a check made unknown, and none fails.
func TestBrokenPreconditionsAreUnknown(t *testing.T) {
	eachScenario(t, "../testdata/bound-unknown/*.yaml", func(t *testing.T, res *verdict.Result) {
		broken := false
		for _, c := range res.Evaluation.Checks {
			t.Logf("%s", c)
			if c.Verdict == model.Fail {
				t.Errorf("%s", c)
			}
			broken = broken || (c.Verdict == model.Unknown && (strings.Contains(c.Detail, "precondition") || strings.Contains(c.Detail, "unbounded")))
		}
		if !broken {
			t.Errorf("no check is unknown for a broken precondition or an unmodelled call")
		}
	})
}
