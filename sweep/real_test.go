package sweep_test

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
	"github.com/leaselab/leaselab/sweep"
)

// A real run's figures sit beside the virtual backend's for the same
// scenario and seed; a run that did not start says why.
func TestRealCheckOf(t *testing.T) {
	e, _ := scenarios.Lookup("partition-blackhole")
	sc := e.Scenario
	v, err := virtual.Run(sc, virtual.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := &verdict.Result{}
	res.Verdict = model.Pass
	res.Analysis.Summary.MaxGap, res.Analysis.Summary.MaxOverlap = 7*time.Second, time.Second
	rc := sweep.RealCheckOf(sc, res, nil)
	vs := v.Analysis.Summary
	if rc.Scenario != sc.Name || rc.Verdict != "pass" || rc.Gap != 7*time.Second || rc.Overlap != time.Second ||
		rc.VirtualGap != vs.MaxGap || rc.VirtualOverlap != vs.MaxOverlap || rc.VirtualStale != vs.MaxStale {
		t.Errorf("RealCheckOf = %+v; virtual summary %+v", rc, vs)
	}
	if rc := sweep.RealCheckOf(sc, nil, errors.New("no redis-server")); rc.Error != "no redis-server" || rc.Verdict != "" || rc.VirtualGap != vs.MaxGap {
		t.Errorf("a run that did not start: %+v", rc)
	}
}

// A robust schedule's real figure is the real run's check of its metric.
func TestRobustReal(t *testing.T) {
	x := sweep.Robust{Metric: "max_overlap"}
	res := &verdict.Result{}
	res.Checks = []model.Check{{Metric: "max_gap", Measured: time.Second}, {Metric: "max_overlap", HasMin: true, Min: 2 * time.Second, Measured: 3 * time.Second, Verdict: model.Pass}}
	if v, how := x.Real(res); v != "3s" || how != " (pass against ≥ 2s)" {
		t.Errorf("Real = %q, %q", v, how)
	}
	if v, how := (sweep.Robust{Metric: "max_stale"}).Real(res); v != "not measured" || how != "" {
		t.Errorf("an unchecked metric: %q, %q", v, how)
	}
}

// The schedules to confirm on the real backend are the robust ones found,
// each as its scenario, in the search's order.
func TestConfirmable(t *testing.T) {
	e, _ := scenarios.Lookup("partition-blackhole")
	r, err := sweep.Explore(context.Background(), sweep.Space{Base: e.Scenario, Metrics: []string{"stale_leadership"}, Seeds: 1, Budget: 500}, sweep.ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	scs, robust, err := r.Confirmable()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Robust) != 1 || !r.Robust[0].Found || len(scs) != 1 || len(robust) != 1 || robust[0].Metric != r.Robust[0].Metric {
		t.Fatalf("robust %+v: confirmable %d scenarios, %+v", r.Robust, len(scs), robust)
	}
	want, err := r.RobustScenario(robust[0])
	if err != nil || scs[0].Name != want.Name || scs[0].Seed != want.Seed {
		t.Errorf("scenario %q seed %d, want RobustScenario's %q seed %d (%v)", scs[0].Name, scs[0].Seed, want.Name, want.Seed, err)
	}
}

// The confirmation: a heading, then per schedule its real figure beside
// the virtual ones and its report, or why it did not run.
func TestWriteConfirmation(t *testing.T) {
	res := &verdict.Result{}
	res.Checks = []model.Check{{Metric: "max_overlap", HasMin: true, Min: 2 * time.Second, Measured: 3 * time.Second, Verdict: model.Pass}}
	robust := []sweep.Robust{{Metric: "max_overlap", Measured: 3100 * time.Millisecond, Floor: 2900 * time.Millisecond, Delta: time.Millisecond}, {Metric: "max_gap"}}
	var b strings.Builder
	sweep.WriteConfirmation(&b, robust, []sweep.RealRun{{Result: res, Dir: "ex/real/x"}, {Err: errors.New("no redis-server")}})
	want := "real backend (the robust schedules, robust-*.yaml; same seeds):\n" +
		"  max_overlap       real 3s (pass against ≥ 2s); virtual 3.1s (≥ 2.9s within ±1ms); report ex/real/x\n" +
		"  max_gap           not run: no redis-server\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
