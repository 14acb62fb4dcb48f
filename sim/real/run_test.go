package real_test

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/real"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Short timings for integration tests: TTL 500ms, Wait 600ms.
var fast = model.Params{TTL: 500 * time.Millisecond, Wait: 600 * time.Millisecond, JitterMS: 5}

// slack is the measurement slack the tests allow on top of predictions:
// notification lateness, scheduling on a loaded 2-core machine.
const slack = 300 * time.Millisecond

func runScenario(t *testing.T, sc model.Scenario) *verdict.Result {
	t.Helper()
	return runScenarioWith(t, sc, real.Options{})
}

// runScenarioWith is runScenario with o's options (an Observe callback).
func runScenarioWith(t *testing.T, sc model.Scenario, o real.Options) *verdict.Result {
	t.Helper()
	if sc.Name == "" {
		sc.Name = strings.ReplaceAll(t.Name(), "/", "-")
	}
	res, err := real.Run(context.Background(), sc, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("harness errors: %v", res.Errors)
	}
	s := res.Analysis.Summary
	t.Logf("%s: gains %d, overlaps %d (max %v), gaps %d (max %v), stale %d (max %v), errors %d, failover %+v",
		sc.Name, s.LeaderGains, s.Overlaps, s.MaxOverlap, s.Gaps, s.MaxGap, s.StaleWindows, s.MaxStale, s.ElectorErrors, s.Failover)
	for _, f := range res.Analysis.Faults {
		t.Logf("  fault %d %s: demotion %v failover %v recovery %v %s", f.ID, f.Kind, ptr(f.Demotion), ptr(f.Failover), ptr(f.Recovery), f.Note)
	}
	return res
}

func ptr(d *time.Duration) string {
	if d == nil {
		return "-"
	}
	return d.String()
}

func prediction(t *testing.T, res *verdict.Result, mode string) bounds.Prediction {
	t.Helper()
	for _, p := range res.Predictions {
		if p.Mode == mode {
			return p
		}
	}
	t.Fatalf("no prediction for %s", mode)
	return bounds.Prediction{}
}

func TestSteadyState(t *testing.T) {
	t.Parallel()
	res := runScenario(t, model.Scenario{Instances: 3, Params: fast, Duration: 3 * time.Second, Recovery: time.Second})
	s := res.Analysis.Summary
	if s.LeaderGains != 1 {
		t.Errorf("leader gained %d times, want 1", s.LeaderGains)
	}
	if s.Overlaps != 0 || s.Gaps != 0 {
		t.Errorf("overlaps %d, gaps %d; want none", s.Overlaps, s.Gaps)
	}
	if !res.Complete {
		t.Errorf("incomplete: %s", res.Incomplete)
	}
}

func TestLeaderCrash(t *testing.T) {
	t.Parallel()
	res := runScenario(t, model.Scenario{Instances: 3, Params: fast, Duration: 3 * time.Second, Recovery: 2 * time.Second,
		Faults: []model.Fault{{At: time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}}}})
	s := res.Analysis.Summary
	p := prediction(t, res, model.ModeLeaderCrash)
	t.Logf("leader crash: measured gap %v, predicted ≤ %v (%s)", s.MaxGap, p.MaxGap, p.GapFormula)
	if s.Gaps != 1 {
		t.Fatalf("gaps = %d, want 1", s.Gaps)
	}
	if s.MaxGap > p.MaxGap+slack {
		t.Errorf("gap %v beyond the prediction %v + slack", s.MaxGap, p.MaxGap)
	}
	if s.MaxGap < fast.TTL/2-slack/2 {
		t.Errorf("gap %v is implausibly short: the crashed leader's lease lives up to TTL after its last renewal", s.MaxGap)
	}
	if s.Overlaps != 0 {
		t.Errorf("overlaps = %d after a crash", s.Overlaps)
	}
}

// TestPartitionWithDefaultClientTimeouts partitions the leader with the
// go-redis defaults (ReadTimeout 5s, 3 retries) in two ways, in parallel:
// a blackhole, whose renew hangs until the read timeout, and a refusal,
// whose renew fails within the dial retries.
func TestPartitionWithDefaultClientTimeouts(t *testing.T) {
	t.Parallel()
	results := map[string]*verdict.Result{}
	var mu sync.Mutex
	t.Run("modes", func(t *testing.T) {
		for _, mode := range []string{model.PartitionBlackhole, model.PartitionRefuse} {
			t.Run(mode, func(t *testing.T) {
				t.Parallel()
				res := runScenario(t, model.Scenario{Instances: 3, Params: fast, Duration: 14 * time.Second, Recovery: 2 * time.Second,
					Faults: []model.Fault{{At: time.Second, For: 12 * time.Second, Kind: model.FaultPartition, Mode: mode, Target: model.Target{Role: model.RoleLeader}}}})
				mu.Lock()
				results[mode] = res
				mu.Unlock()
			})
		}
	})
	bh, rf := results[model.PartitionBlackhole], results[model.PartitionRefuse]
	if bh == nil || rf == nil {
		t.Fatal("a run failed")
	}

	s := bh.Analysis.Summary
	p := prediction(t, bh, model.ModePartitionBlackhole)
	t.Logf("blackhole, go-redis defaults: measured overlap %v, predicted ≤ %v (%s)", s.MaxOverlap, p.MaxOverlap, p.OverlapFormula)
	if p.MaxOverlap <= fast.TTL {
		t.Fatalf("prediction %v does not exceed the TTL; the model is wrong", p.MaxOverlap)
	}
	if s.MaxOverlap <= fast.TTL {
		t.Errorf("measured overlap %v: the blackholed leader should keep believing well past the TTL", s.MaxOverlap)
	}
	if s.MaxOverlap > p.MaxOverlap+slack {
		t.Errorf("overlap %v beyond the prediction %v + slack", s.MaxOverlap, p.MaxOverlap)
	}
	if claimHeld(bh, analysis.ClaimSplitBrain) {
		t.Errorf("the spec's split-brain claim is reported held although the overlap exceeded the TTL")
	}

	demotion := func(res *verdict.Result) time.Duration {
		f := res.Analysis.Faults[0]
		if f.Demotion == nil {
			t.Fatalf("no demotion measured: %s", f.Note)
		}
		return *f.Demotion
	}
	refuse, blackhole := demotion(rf), demotion(bh)
	t.Logf("demotion after injection: refuse %v, blackhole %v", refuse, blackhole)
	if refuse >= blackhole {
		t.Errorf("refuse demoted after %v, blackhole after %v: a refused connection fails fast, a blackhole waits out the read timeout", refuse, blackhole)
	}
}

func claimHeld(res *verdict.Result, name string) bool {
	for _, c := range res.Analysis.Claims {
		if c.Name == name {
			return c.Verdict == analysis.Held
		}
	}
	return false
}

func TestBlackholeWithShortTimeouts(t *testing.T) {
	t.Parallel()
	p := fast
	p.Client = model.ClientParams{ReadTimeout: 100 * time.Millisecond, MaxRetries: -1}
	res := runScenario(t, model.Scenario{Instances: 3, Params: p, Duration: 4 * time.Second, Recovery: 2 * time.Second,
		Faults: []model.Fault{{At: time.Second, For: 2 * time.Second, Kind: model.FaultPartition, Mode: model.PartitionBlackhole, Target: model.Target{Role: model.RoleLeader}}}})
	s := res.Analysis.Summary
	if s.Overlaps != 0 {
		t.Errorf("overlaps = %d (max %v), want none with ReadTimeout 100ms < TTL/2 and no retries", s.Overlaps, s.MaxOverlap)
	}
	if got := prediction(t, res, model.ModePartitionBlackhole).MaxOverlap; got != 0 {
		t.Errorf("predicted overlap %v, want 0", got)
	}
}

func TestRedisRestartLeavesStaleLeader(t *testing.T) {
	t.Parallel()
	// The leader renews every ~TTL/2 = 1s from ~0s, so at 1.5s its next
	// renew is ~500ms away: that is how long it leads a lease Redis lost.
	// With fast's 250ms the restart had ~150ms of a renewal on one side and
	// ~100ms on the other, and a loaded machine's renewal drift ate them
	// (30.6ms stale, 2026-12-01); here it must run ~450ms late for that.
	p := fast
	p.TTL = 2 * time.Second
	res := runScenario(t, model.Scenario{Instances: 3, Params: p, Duration: 3 * time.Second, Recovery: 2 * time.Second,
		Faults: []model.Fault{{At: 1500 * time.Millisecond, Kind: model.FaultRedisRestart}}})
	s := res.Analysis.Summary
	if s.StaleWindows == 0 || s.MaxStale < 50*time.Millisecond {
		t.Fatalf("stale leadership %v after Redis lost the key; want the time to the leader's next renew", s.MaxStale)
	}
	if s.MaxStale > p.TTL/2+slack {
		t.Errorf("stale for %v: the leader's next renew (≤ TTL/2 + jitter) returns 0 and demotes it", s.MaxStale)
	}
}

func TestPauseLongerThanTTL(t *testing.T) {
	t.Parallel()
	res := runScenario(t, model.Scenario{Instances: 3, Params: fast, Duration: 4 * time.Second, Recovery: 2 * time.Second,
		Faults: []model.Fault{{At: time.Second, For: 1500 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Role: model.RoleLeader}}}})
	s := res.Analysis.Summary
	if s.StaleWindows == 0 {
		t.Fatal("no stale leadership after a pause longer than the TTL")
	}
	if s.MaxStale < time.Second {
		t.Errorf("stale for %v; the paused leader believed for the whole pause beyond the TTL (≥ 1s)", s.MaxStale)
	}
	if s.Overlaps == 0 {
		t.Error("no overlap: a follower takes the expired lease while the paused leader still believes")
	}
}

func TestCancelledRunLeavesNothing(t *testing.T) {
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(1500 * time.Millisecond); cancel() }()
	res, err := real.Run(ctx, model.Scenario{Name: "cancelled", Instances: 5, Params: fast, Duration: time.Minute,
		Faults: []model.Fault{{At: time.Second, Kind: model.FaultPartition, Target: model.Target{Role: model.RoleLeader}}}}, real.Options{})
	if err == nil {
		t.Fatal("Run returned no error after cancel")
	}
	if res == nil || res.Complete || res.Incomplete == "" {
		t.Fatalf("want a partial result marked incomplete, got %+v", res)
	}
	if last := res.Timeline[len(res.Timeline)-1]; last.Kind != model.RunEnded || !strings.HasPrefix(last.Detail, "incomplete") {
		t.Fatalf("last event %+v, want run-ended incomplete", last)
	}
	// The run's redis-server is a child of this test process.
	if out, _ := exec.Command("pgrep", "-P", strconv.Itoa(os.Getpid()), "redis-server").Output(); len(out) > 0 {
		t.Fatalf("redis-server still running: pids %s", out)
	}
	if err := goleak.Find(before); err != nil {
		t.Fatal(err)
	}
}

func TestLatencyWithJitterIsTolerated(t *testing.T) {
	t.Parallel()
	res := runScenario(t, model.Scenario{Instances: 3, Params: fast, Duration: 3 * time.Second, Recovery: time.Second,
		Faults: []model.Fault{{At: 500 * time.Millisecond, For: 2 * time.Second, Kind: model.FaultLatency, Latency: 60 * time.Millisecond,
			Jitter: 30 * time.Millisecond, Target: model.Target{Role: model.RoleAll}}}})
	s := res.Analysis.Summary
	// A renewal round trip of at most 2 × 90ms stays far inside TTL/2.
	if s.LeaderGains != 1 || s.Gaps != 0 || s.Overlaps != 0 {
		t.Errorf("latency 60ms±30ms disturbed leadership: gains %d gaps %d overlaps %d", s.LeaderGains, s.Gaps, s.Overlaps)
	}
}

func TestSeedReproducesFaultSchedule(t *testing.T) {
	t.Parallel()
	targets := func() []string {
		sc := model.Scenario{Name: "seeded", Seed: 42, Instances: 5, Params: fast, Duration: 1500 * time.Millisecond, Recovery: 200 * time.Millisecond,
			Faults: []model.Fault{
				{At: 300 * time.Millisecond, For: 300 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Role: model.RoleRandom}},
				{At: 700 * time.Millisecond, For: 300 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Role: model.RoleRandom}},
				{At: 1100 * time.Millisecond, For: 300 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Role: model.RoleRandom}},
			}}
		res, err := real.Run(context.Background(), sc, real.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range res.Timeline {
			if e.Kind == model.FaultApplied {
				got = append(got, fmt.Sprint(e.FaultID, e.Target))
			}
		}
		return got
	}
	a, b := targets(), targets()
	t.Logf("random targets with seed 42: %v", a)
	if len(a) != 3 || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("same seed, different schedules: %v vs %v", a, b)
	}
}

// Tasks still in Redis at the end of a run are unfinished, not lost: a
// backlog (1,000 one-second tasks a second for 2 s) that the 2 s recovery
// cannot drain.
func TestBacklogIsUnfinishedNotLost(t *testing.T) {
	t.Parallel()
	res := runScenario(t, model.Scenario{Mode: model.ModeRunner, Instances: 3, Params: fast,
		Duration: 2 * time.Second, Recovery: 2 * time.Second,
		Workload: model.Workload{DispatchRate: 1000, TaskDuration: time.Second}})
	s := res.Analysis.Summary
	t.Logf("dispatched %d, lost %d, unfinished %d", s.TasksDispatched, s.TasksLost, s.TasksUnfinished)
	if s.TasksUnfinished == 0 {
		t.Fatalf("no unfinished task: the backlog should outlast the run (dispatched %d)", s.TasksDispatched)
	}
	if s.TasksLost != 0 {
		t.Errorf("%d tasks lost: every task not completed is still in Redis", s.TasksLost)
	}
}

// TestRedisPauseHoldsWrites: under CLIENT PAUSE WRITE the elector's scripts
// wait at Redis while the truth lane's reads answer: nobody sets the key
// during the pause, its expiry is read during it, the leader believes past
// it (its renewal waits, within the 5 s read timeout), and the scripts run
// at the end, when someone takes the key again.
func TestRedisPauseHoldsWrites(t *testing.T) {
	t.Parallel()
	at, end := time.Second, 2500*time.Millisecond
	res := runScenario(t, model.Scenario{Instances: 3, Params: fast, Duration: 4 * time.Second, Recovery: 2 * time.Second,
		Faults: []model.Fault{{At: at, For: end - at, Kind: model.FaultRedisPause}}})
	var expired, setAfter, healed time.Duration
	for _, e := range res.Timeline {
		switch {
		case e.Kind == model.FaultHealed:
			healed = e.At
		case e.Kind != model.RedisHolder || e.At <= at:
		case e.Holder == "" && expired == 0:
			expired = e.At
		case e.Holder != "" && e.At < end:
			t.Errorf("the key was set at %v, during the pause (%v to %v)", e.At, at, end)
		case e.Holder != "" && setAfter == 0:
			setAfter = e.At
		}
	}
	if expired == 0 || expired >= end {
		t.Errorf("the key's expiry read at %v; want during the pause (reads answer)", expired)
	}
	// The held scripts run the instant Redis unpauses, which may be
	// stamped before the heal's own record (CI: set at 2.501615 s, the heal
	// recorded 2.501743 s): the pause's end is the mark, not the record.
	if healed < end || setAfter == 0 {
		t.Errorf("healed at %v, the key set again at %v; want the heal at %v, then a new holder", healed, setAfter, end)
	}
	if s := res.Analysis.Summary; s.MaxStale < end-at-fast.TTL/2-slack {
		t.Errorf("stale for %v; the leader's renewal waits at Redis to the pause's end", s.MaxStale)
	}
}

// TestCancelUnpausesRedis: a run cancelled (Ctrl-C) during a write pause
// of a Redis given to it leaves that Redis answering writes: the early
// end's heal unpauses it, with the instances killed first. (An all pause
// cannot be ended early: it blocks CLIENT UNPAUSE too; Redis ends it at
// its planned heal.)
func TestCancelUnpausesRedis(t *testing.T) {
	addr := redistest.Start(t).Addr
	admin := redistest.ClientAt(t, addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sc := model.Scenario{Name: "cancel-unpause", Instances: 3, Params: fast, Duration: time.Minute,
		Faults: []model.Fault{{At: 500 * time.Millisecond, For: 30 * time.Second, Kind: model.FaultRedisPause, Mode: model.RedisPauseWrite}}}
	var once sync.Once
	res, err := real.Run(ctx, sc, real.Options{Provider: env.Embedded{RedisAddr: addr}, Observe: func(e model.Event) {
		if e.Kind == model.FaultApplied {
			// Recorded before the pause is sent: cancelled a moment after.
			once.Do(func() { time.AfterFunc(500*time.Millisecond, cancel) })
		}
	}})
	if err == nil {
		t.Fatal("Run returned no error after cancel")
	}
	if len(res.Errors) > 0 {
		t.Fatalf("harness errors %q (the pause not applied?)", res.Errors)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := admin.Set(wctx, "leaselab-after-cancel", "1", 0).Err(); err != nil {
		t.Errorf("a write to the Redis after the cancelled run: %v (still paused)", err)
	}
}
