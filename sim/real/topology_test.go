package real_test

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leaselab/leaselab/internal/rediscluster"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/real"
)

// holderEvents are the truth lane's records after at.
func holderEvents(res *verdict.Result, after time.Duration) []model.Event {
	var out []model.Event
	for _, e := range res.Timeline {
		if e.Kind == model.RedisHolder && e.At > after {
			out = append(out, e)
		}
	}
	return out
}

func faultHeal(t *testing.T, res *verdict.Result, kind model.FaultKind) model.Event {
	t.Helper()
	for _, e := range res.Timeline {
		if e.Kind == model.FaultHealed && e.Fault == string(kind) {
			return e
		}
	}
	t.Fatalf("no %s heal in the timeline", kind)
	return model.Event{}
}

// cleanFailover are the clean failovers' params: fast with a 2 s TTL. A
// clean failover keeps the lease only while its span A + backoff(1) <
// TTL/2 - jitter (model's predictFailover); the switch that takes ~40 ms
// on an idle machine took 290 ms on a loaded CI one (2026-12-01), past
// fast's 245 ms, and the model then rightly predicted no clean failover.
// 2 s leaves 995 ms: 25 times the idle switch, over 3 times the loaded one.
var cleanFailover = model.Params{TTL: 2 * time.Second, Wait: fast.Wait, JitterMS: fast.JitterMS}

// A clean failover keeps the lease; a lossy one (the replica missed more
// than a TTL of writes) loses it at the switch, which the truth lane, now
// on the promoted node, records at once; the old leader believes until its
// next renewal, within the predicted bound.
func TestFailover(t *testing.T) {
	rediscluster.NeedTools(t)
	for _, topo := range []model.Topology{model.RedisReplicated, model.RedisCluster} {
		for _, lag := range []time.Duration{0, 600 * time.Millisecond} {
			name := string(topo) + "-" + map[bool]string{true: "clean", false: "lossy"}[lag == 0]
			params := fast
			if lag == 0 {
				params = cleanFailover
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				at := 1500 * time.Millisecond
				res := runScenario(t, model.Scenario{Redis: topo, Instances: 3, Params: params, Duration: 3 * time.Second, Recovery: 2 * time.Second,
					Faults: []model.Fault{{At: at, Kind: model.FaultRedisFailover, Lag: lag}}})
				heal := faultHeal(t, res, model.FaultRedisFailover)
				if !strings.HasPrefix(heal.Detail, "promoted ") {
					t.Errorf("heal detail %q, want the promoted node", heal.Detail)
				}
				s := res.Analysis.Summary
				pr := prediction(t, res, model.ModeFailover)
				t.Logf("switch %v after the fault (lag %v); predicted overlap %v (%s), measured %v; stale %v",
					heal.At-at, lag, pr.MaxOverlap, pr.OverlapFormula, s.MaxOverlap, s.MaxStale)
				if lag == 0 {
					for _, e := range holderEvents(res, at) {
						if e.Holder == "" && e.At < heal.At+params.TTL {
							t.Errorf("the lease vanished at %v in a clean failover (%q)", e.At, e.Detail)
						}
					}
					if s.LeaderGains != 1 || s.Overlaps != 0 || s.Gaps != 0 {
						t.Errorf("clean failover: %d gains, %d overlaps, %d gaps; want 1, 0, 0", s.LeaderGains, s.Overlaps, s.Gaps)
					}
					if pr.MaxOverlap != 0 || pr.MaxGap != 0 {
						t.Errorf("clean failover predicted overlap %v, gap %v; want 0, 0 (%s)", pr.MaxOverlap, pr.MaxGap, pr.GapFormula)
					}
					return
				}
				// Recorded by the move to the new primary (Detail
				// "failover"): inside the switch, after the promotion (lag
				// after the fault) and before the heal, which waits for the
				// truth lane's own hand-over (216 ms on a loaded machine);
				// or by a poll of the old one resyncing from it, which
				// starts after the promotion too, and comes up to a poll
				// after the heal's record. (A fixed ±100 ms around the heal
				// failed in CI beside other runs: -102.7 ms, the heal
				// recorded 207 ms after the promotion.)
				lost := false
				for _, e := range holderEvents(res, at) {
					if e.Holder == "" && !lost {
						lost = true
						d := e.At - heal.At
						lo, hi := at+lag-heal.At, 100*time.Millisecond
						if e.Detail == "failover" {
							hi = 0
						}
						t.Logf("the lease's loss recorded %v from the switch (%q), want [%v, %v]", d, e.Detail, lo, hi)
						if d < lo || d > hi {
							t.Errorf("the lease's loss recorded %v from the switch (%q); want at the switch, in [%v, %v]", d, e.Detail, lo, hi)
						}
					}
				}
				if !lost {
					t.Fatalf("no lease loss recorded at the lossy failover; holders after it: %+v", holderEvents(res, at))
				}
				if s.LeaderGains < 2 {
					t.Errorf("%d leader gains: the lost lease must be taken again", s.LeaderGains)
				}
				if s.MaxStale > pr.MaxOverlap+slack || s.MaxOverlap > pr.MaxOverlap+slack {
					t.Errorf("stale %v / overlap %v beyond the prediction %v + %v", s.MaxStale, s.MaxOverlap, pr.MaxOverlap, slack)
				}
			})
		}
	}
}

// The truth lane follows the lease's slot to its new primary: after the
// migration, the leader's crash and the key's expiry there are recorded.
func TestSlotMigrationFollowed(t *testing.T) {
	rediscluster.NeedTools(t)
	t.Parallel()
	res := runScenario(t, model.Scenario{Redis: model.RedisCluster, Instances: 3, Params: fast, Duration: 3 * time.Second, Recovery: 2 * time.Second,
		Faults: []model.Fault{
			{At: time.Second, Kind: model.FaultSlotMigration},
			{At: 2 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}},
		}})
	heal := faultHeal(t, res, model.FaultSlotMigration)
	s := res.Analysis.Summary
	if s.LeaderGains < 2 {
		t.Fatalf("%d leader gains; the crash must hand the lease over", s.LeaderGains)
	}
	var gone, taken bool
	for _, e := range holderEvents(res, 2*time.Second) {
		switch {
		case e.Holder == "":
			gone = true
		case gone:
			taken = true
		}
	}
	if !gone || !taken {
		t.Errorf("after the migration (done at %v) the truth lane missed the key's expiry (%v) or its new holder (%v): %+v",
			heal.At, gone, taken, holderEvents(res, heal.At))
	}
	for _, e := range holderEvents(res, time.Second) {
		if e.Holder == "" && e.At < 2*time.Second {
			t.Errorf("the lease vanished at %v during the migration", e.At)
		}
	}
}

// A run cancelled in the middle of a lossy failover's lag (the replica
// held back) releases the hold, stops every node it spawned and every
// goroutine, and says the failover was cut short.
func TestCancelledFailoverLeavesNothing(t *testing.T) {
	rediscluster.NeedTools(t)
	for _, topo := range []model.Topology{model.RedisReplicated, model.RedisCluster} {
		t.Run(string(topo), func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var once sync.Once
			res, err := real.Run(ctx, model.Scenario{Name: "cancelled-failover-" + string(topo), Redis: topo, Instances: 3, Params: fast, Duration: time.Minute,
				Faults: []model.Fault{{At: 500 * time.Millisecond, Kind: model.FaultRedisFailover, Lag: 30 * time.Second}}},
				real.Options{Observe: func(e model.Event) {
					if e.Kind == model.FaultApplied {
						once.Do(func() { time.AfterFunc(300*time.Millisecond, cancel) }) // in the middle of the lag
					}
				}})
			if err == nil || res == nil || res.Complete {
				t.Fatalf("want a partial result and an error after cancel; got %v, %+v", err, res)
			}
			cut := false
			for _, e := range res.Timeline {
				if e.Kind == model.FaultHealed && e.Fault == string(model.FaultRedisFailover) {
					cut = strings.Contains(e.Err, context.Canceled.Error())
					t.Logf("failover ended at %v: %q", e.At, e.Err)
				}
			}
			if !cut {
				t.Errorf("the failover's end does not say it was cancelled in its lag")
			}
			if out, _ := exec.Command("pgrep", "-P", strconv.Itoa(os.Getpid()), "redis-server").Output(); len(out) > 0 {
				t.Fatalf("redis-server still running: pids %s", out)
			}
			if err := goleak.Find(before); err != nil {
				t.Fatal(err)
			}
		})
	}
}
