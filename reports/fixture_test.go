package reports

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"errors"
	"time"

	"github.com/leaselab/leaselab/model"
)

// The fixture is a hand-made result, not the output of a run or of
// analysis.Analyze: the golden files must change only when the renderers change,
// not when a teammate refines the analysis. It tells one consistent story:
//
//	i0 leads from 0.012s. At 10s a blackhole partition cuts i0 off Redis. Its
//	key expires at 12.51s (i0 goes stale), i1 wins at 18.001s, and i0 keeps
//	believing until its renewal times out at 23.75s: a 5.749s overlap, more
//	than the TTL the spec says bounds split brain. The partition heals at
//	25s. At 30s i1's renewal errors and it demotes while its key lives on
//	(a phantom lease until 35s); i2 wins at 36.2s: a 6.2s gap, within TTL +
//	Wait but above the blackhole model's prediction. The run ends at 45s.

const (
	idA = "aaaaaaaa000000000000000000000001"
	idB = "bbbbbbbb000000000000000000000002"
	idC = "cccccccc000000000000000000000003"
)

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func dp(d time.Duration) *time.Duration { return &d }

func fixture() *verdict.Result {
	m0 := model.Member{Instance: 0, ID: idA}
	m1 := model.Member{Instance: 1, ID: idB}
	m2 := model.Member{Instance: 2, ID: idC}
	params := model.Params{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: 5, ChoreInterval: time.Second,
		Client: model.ClientParams{ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second, DialTimeout: 5 * time.Second, MaxRetries: 3}}
	fault := model.Fault{At: 10 * time.Second, For: 15 * time.Second, Kind: model.FaultPartition, Target: model.Target{Indexes: []int{0}}, Mode: model.PartitionBlackhole}

	tl := model.Timeline{
		{At: 0, Kind: model.InstanceStarted, Instance: 0, ID: idA},
		{At: 0, Kind: model.InstanceStarted, Instance: 1, ID: idB},
		{At: 0, Kind: model.InstanceStarted, Instance: 2, ID: idC},
		{At: ms(11), Kind: model.RedisHolder, Instance: -1, Holder: idA},
		{At: ms(12), Kind: model.LeaderGained, Instance: 0, ID: idA},
		{At: ms(10000), Kind: model.FaultApplied, Instance: -1, Fault: "partition", Mode: model.PartitionBlackhole, FaultID: 0, Target: []int{0}, Detail: "blackhole both ways"},
		{At: ms(12510), Kind: model.RedisHolder, Instance: -1, Holder: "", Lateness: ms(4), Detail: "expired"},
		{At: ms(18000), Kind: model.RedisHolder, Instance: -1, Holder: idB},
		{At: ms(18001), Kind: model.LeaderGained, Instance: 1, ID: idB},
		{At: ms(23750), Kind: model.LeaderLost, Instance: 0, ID: idA},
		{At: ms(23750), Kind: model.ElectorError, Instance: 0, ID: idA, Err: "i/o timeout"},
		{At: ms(25000), Kind: model.FaultHealed, Instance: -1, Fault: "partition", FaultID: 0, Target: []int{0}},
		{At: ms(30000), Kind: model.LeaderLost, Instance: 1, ID: idB},
		{At: ms(30000), Kind: model.ElectorError, Instance: 1, ID: idB, Err: "EOF"},
		{At: ms(35000), Kind: model.RedisHolder, Instance: -1, Holder: "", Lateness: ms(2), Detail: "expired"},
		{At: ms(36199), Kind: model.RedisHolder, Instance: -1, Holder: idC},
		{At: ms(36200), Kind: model.LeaderGained, Instance: 2, ID: idC},
		{At: ms(45000), Kind: model.RunEnded, Instance: -1, Detail: "complete"},
	}
	win := func(from, to int64, open bool) model.Window {
		return model.Window{Start: ms(from), End: ms(to), Duration: ms(to - from), Open: open}
	}
	span := model.FaultSpan{ID: 0, Kind: "partition", Mode: model.ModePartitionBlackhole, Target: []int{0}, Detail: "blackhole both ways", Applied: ms(10000), Healed: ms(25000), Reach: ms(36000)}
	a := analysis.Analysis{
		Params: params, End: ms(45000), Ended: "complete", StabilityWindow: 5 * time.Second,
		Beliefs: []analysis.Belief{
			{Member: m0, Window: win(12, 23750, false), EndedBy: model.LeaderLost},
			{Member: m1, Window: win(18001, 30000, false), EndedBy: model.LeaderLost},
			{Member: m2, Window: win(36200, 45000, true), EndedBy: model.RunEnded},
		},
		Overlaps: []analysis.Overlap{{Window: win(18001, 23750, false), Leaders: []model.Member{m0, m1}}},
		Gaps:     []analysis.Gap{{Window: win(30000, 36200, false), After: &analysis.FaultRef{ID: 0, Kind: "partition", Applied: ms(10000)}}},
		Handovers: []analysis.Handover{
			{At: ms(18001), From: m0, To: m1},
			{At: ms(36200), From: m1, To: m2},
		},
		Redis: analysis.RedisLane{
			Observed:             true,
			Stale:                []analysis.Stale{{Member: m0, Window: win(12510, 23750, false), Holder: ""}},
			Phantom:              []analysis.Phantom{{Member: m1, Window: win(30000, 35000, false)}},
			NotificationLateness: analysis.DurationStats{Count: 2, Min: ms(2), Median: ms(3), Max: ms(4)},
			BelowResolution:      3,
			Holders: []analysis.Holding{
				{Window: win(11, 12510, false), Holder: idA, Instance: 0}, {Window: win(12510, 18000, false), Holder: "", Instance: -1},
				{Window: win(18000, 35000, false), Holder: idB, Instance: 1}, {Window: win(35000, 36199, false), Holder: "", Instance: -1},
				{Window: win(36199, 45000, true), Holder: idC, Instance: 2},
			},
		},
		Faults: []model.FaultOutcome{{
			FaultSpan: span, LeadersAtInjection: []model.Member{m0}, LeaderHit: true,
			Demotion: dp(ms(13750)), Failover: dp(ms(13750)), NewLeader: &m1, Recovery: dp(0),
			Overlaps: []int{0}, MaxOverlap: ms(5749), Gaps: []int{0}, MaxGap: ms(6200),
		}},
		LeaderCount: []analysis.CountStep{
			{Window: win(0, 12, false), Leaders: 0}, {Window: win(12, 18001, false), Leaders: 1},
			{Window: win(18001, 23750, false), Leaders: 2}, {Window: win(23750, 30000, false), Leaders: 1},
			{Window: win(30000, 36200, false), Leaders: 0}, {Window: win(36200, 45000, true), Leaders: 1},
		},
		Claims: []analysis.Claim{
			{Name: analysis.ClaimGap, Statement: "worst-case leadership gap <= TTL + Wait", Verdict: analysis.Held, Measured: ms(6200), Bound: 11 * time.Second, Slack: analysis.ClaimSlack,
				Detail: "longest gap 6.2s from 30s, after fault 0 (partition)"},
			{Name: analysis.ClaimSplitBrain, Statement: "split-brain (overlap) window <= TTL", Verdict: analysis.NotHeld, Measured: ms(5749), Bound: 5 * time.Second, Slack: analysis.ClaimSlack,
				Detail: "1 overlaps, longest 5.749s, total 5.749s"},
			{Name: analysis.ClaimNoFaultlessSplit, Statement: "no overlap without a fault", Verdict: analysis.Held, Slack: analysis.ClaimSlack,
				Detail: "0 overlaps away from any fault, total 0s"},
		},
		Summary: analysis.Summary{
			LeaderGains: 3, Handovers: 2, ElectorErrors: 2, Overlaps: 1, MaxOverlap: ms(5749), TotalOverlap: ms(5749),
			Gaps: 1, MaxGap: ms(6200), Failover: analysis.DurationStats{Count: 1, Min: ms(13750), Median: ms(13750), Max: ms(13750)},
			Faults: 1, StaleWindows: 1, MaxStale: ms(11240), PhantomWindows: 1, MaxPhantom: ms(5000),
		},
	}
	res := &verdict.Result{
		RunID:   "20250102-030405-abcdef",
		Backend: "real", BackendAbout: "redis-server through Toxiproxy, wall-clock time", // as sim/real says
		Scenario: model.Scenario{
			Name: "partition-leader", Description: "Cut the leader off Redis (blackhole) for 15s and watch the takeover.",
			Seed: 42, Instances: 3, Mode: model.ModeElector, Params: params,
			Duration: 30 * time.Second, Recovery: 13 * time.Second, TimeScale: 1,
			Faults: []model.Fault{fault},
			Expect: []model.Expectation{{Metric: "max_overlap", Max: "predicted"}, {Metric: "max_gap", Max: "ttl + wait"}, {Metric: "overlap_windows", Max: "0"}},
		},
		Params: params, Seed: 42, TimeScale: 1,
		Versions: verdict.Versions{Go: "go1.26.0", Redis: "7.2.4", Toxiproxy: "2.12.0", Leaselab: "devel"},
		Started:  time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Elapsed:  45 * time.Second, Complete: true,
		Timeline: tl, Analysis: a,
		Predictions: []bounds.Prediction{{
			Mode: model.ModePartitionBlackhole, MaxGap: ms(3500), MaxOverlap: ms(7535),
			GapFormula:     "max(0, TTL/2 + Wait - Cmin) = max(0, 2.5s + 6s - 5s) = 3.5s",
			OverlapFormula: "max(0, TTL/2 + jitter + C - TTL) = max(0, 2.5s + 5ms + 10.03s - 5s) = 7.535s",
			Call:           ms(10030), CallFormula: "(min(MaxRetries, 1) + 1) × ReadTimeout + backoff(1) = 2 × 5s + 30ms = 10.03s",
			Note: "The leader's next renewal hangs until the client gives up (C).",
		}},
		Setup: ms(850),
		Cost:  verdict.Cost{CPU: 1250 * time.Millisecond, CPUPerInstancePercent: 0.93},
	}
	res.Scenario.Expect[2].Line = 14
	res.Evaluation = verdict.Evaluate(res.Scenario, res.Analysis, res.Predictions)
	return res
}

// passing is the fixture turned into a clean pass: every check held and
// no finding.
func passing() *verdict.Result {
	r := fixture()
	r.Scenario.Name = "leader-crash"
	r.Seed = 7
	r.Scenario.Expect[2].Max = "1"
	r.Analysis.Claims[1].Verdict = analysis.Held
	r.Evaluation = verdict.Evaluate(r.Scenario, r.Analysis, r.Predictions)
	return r
}

// incomplete is the fixture cut short by a cancelled context with a
// harness error.
func incomplete() *verdict.Result {
	r := fixture()
	r.Scenario.Name = "latency-leader"
	r.Complete, r.Incomplete = false, "context canceled"
	r.Errors = []string{"healing fault 0: toxiproxy: connection refused"}
	r.Verdict = model.Fail
	return r
}

// skipped is a run whose fault was skipped (no leader to hit): unknown,
// whatever its figures say.
func skipped() *verdict.Result {
	r := passing()
	r.Scenario.Name = "follower-pause"
	r.Analysis.Skipped = []analysis.SkippedFault{{ID: 1, Kind: "pause", At: ms(20000), Detail: "target follower matched no live instance"}}
	r.Scenario.Faults = append(r.Scenario.Faults, model.Fault{At: 20 * time.Second, Kind: model.FaultPause, Target: model.Target{Role: model.RoleFollower}})
	r.Evaluation = verdict.Evaluate(r.Scenario, r.Analysis, r.Predictions)
	return r
}

// suiteRuns are four runs of a suite: a pass, a failure, an incomplete run
// and one that could not start.
func suiteRuns() []SuiteRun {
	return []SuiteRun{
		{Result: passing(), Dir: "leader-crash"},
		{Result: fixture(), Dir: "partition-leader"},
		{Result: incomplete(), Dir: "latency-leader", Err: errors.New("context canceled")},
		{Name: "redis-restart", Err: errors.New("environment: redis-server not found in PATH")},
	}
}
