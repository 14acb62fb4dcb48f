package sweep_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sweep"
)

// TestKindAxesAreParams: every size a kind offers a grid is a parameter a
// grid takes, and a grid that sizes it on a base without such a fault
// says which kinds it sizes.
func TestKindAxesAreParams(t *testing.T) {
	for _, k := range model.Kinds() {
		for _, x := range k.Axes {
			if !slices.Contains(sweep.Params, x.Param) {
				t.Errorf("%s's axis %q is not one of sweep.Params", k.Kind, x.Param)
			}
			g := sweep.Grid{Base: model.Scenario{Name: "b"}, Axes: []sweep.Axis{{Param: x.Param, Values: []string{"1"}}}}
			if err := g.Check(); err == nil || !strings.Contains(err.Error(), "no ") || !strings.Contains(err.Error(), string(k.Kind)) {
				t.Errorf("%s: a base without faults: %v; want it to say it has no %s fault", x.Param, err, k.Kind)
			}
		}
	}
}

// TestRedisPauseAxis: the redis_pause axis sizes a redis-pause's For, and
// stretches the fault phase to hold it.
func TestRedisPauseAxis(t *testing.T) {
	base := model.Scenario{Name: "rp", Duration: 10 * time.Second, Faults: []model.Fault{
		{At: 2 * time.Second, For: time.Second, Kind: model.FaultRedisPause},
		{At: 3 * time.Second, For: time.Second, Kind: model.FaultPause, Target: model.Target{Role: model.RoleLeader}},
	}}
	g := sweep.Grid{Base: base, Axes: []sweep.Axis{sweep.Durations(sweep.ParamRedisPause, 500*time.Millisecond, 9*time.Second)}}
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []time.Duration{500 * time.Millisecond, 9 * time.Second} {
		sc, err := g.Scenario(i, 1)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Faults[0].For != want || sc.Faults[1].For != time.Second {
			t.Errorf("cell %d: fors %v and %v, want %v and the pause's 1s", i, sc.Faults[0].For, sc.Faults[1].For, want)
		}
		if end := sc.Faults[0].At + want; sc.Duration < end {
			t.Errorf("cell %d: duration %v, before the pause's end %v", i, sc.Duration, end)
		}
		if err := sc.Validate(); err != nil {
			t.Errorf("cell %d: %v", i, err)
		}
	}
}

// TestRedisPauseMode: advise's scenario for the redis-pause mode pauses
// Redis for the size given, and there is none without a size.
func TestRedisPauseMode(t *testing.T) {
	p := model.Params{}.WithDefaults()
	if _, ok := sweep.ModeScenario(model.ModeRedisPause, p, model.FaultSize{}); ok {
		t.Error("a redis-pause scenario without a size")
	}
	sc, ok := sweep.ModeScenario(model.ModeRedisPause, p, model.FaultSize{RedisPause: 2 * time.Second})
	if !ok {
		t.Fatal("no redis-pause scenario")
	}
	if f := sc.Faults[0]; f.Kind != model.FaultRedisPause || f.For != 2*time.Second || f.At != p.TTL || f.Target.Role != "" || len(f.Target.Indexes) > 0 {
		t.Errorf("fault %+v, want a 2s redis-pause a TTL in", f)
	}
	if err := sc.Validate(); err != nil {
		t.Error(err)
	}
}
