package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/bounds"

	"strings"
	"testing"
	"time"
)

// evaluateOn analyzes tl with the scenario's timings and evaluates sc's
// expectations against the faults it applied, as Run does.
func evaluateOn(sc model.Scenario, tl model.Timeline) (analysis.Analysis, Evaluation) {
	sc = sc.WithDefaults()
	a := analysis.Analyze(tl, sc.Params)
	return a, Evaluate(sc, a, bounds.Predict(sc.Params, bounds.AppliedFaultSize(sc, a)))
}

func checkOf(t *testing.T, ev Evaluation, metric model.Metric) model.Check {
	t.Helper()
	for _, c := range ev.Checks {
		if c.Metric == metric {
			return c
		}
	}
	t.Fatalf("no check of %s in %+v", metric, ev.Checks)
	return model.Check{}
}

var crashScenario = model.Scenario{
	Params: specTimings,
	Faults: []model.Fault{{At: 10 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}}},
	Expect: []model.Expectation{
		{Metric: "max_gap", Max: "predicted"},
		{Metric: "max_overlap", Max: "predicted"},
		{Metric: "overlap_windows", Max: "0"},
		{Metric: "failover", Max: "predicted"},
	},
}

// A timeline with nobody ever leading, or a fault that was skipped, must
// not pass: before verdicts had "unknown", three instance-started, one
// fault-skipped and run-ended passed every limit.
func TestEvaluateNoMeasurementNoPass(t *testing.T) {
	vacuous := new(analysisScript).start(0, 0, "a").start(0, 1, "b").start(0, 2, "c").
		add(model.Event{At: atSec(10), Kind: model.FaultSkipped, Instance: -1, Fault: "crash", FaultID: 0, Detail: "target leader matched no live instance"}).
		end(30)
	_, ev := evaluateOn(crashScenario, vacuous)
	if ev.Verdict != model.Unknown {
		t.Fatalf("verdict %s, want unknown; reasons %q", ev.Verdict, ev.Reasons)
	}
	for _, c := range ev.Checks {
		if c.Verdict == model.Pass {
			t.Errorf("%s passed on a run that measured nothing", c)
		}
	}
	if !strings.Contains(strings.Join(ev.Reasons, "\n"), "no instance ever led") ||
		!strings.Contains(strings.Join(ev.Reasons, "\n"), "fault 0 (crash) was skipped") {
		t.Errorf("reasons do not say why: %q", ev.Reasons)
	}

	// On a loaded machine (every first acquire timed out while the process
	// stood still 513 ms), the reason names the stall.
	loaded := append(model.Timeline{{At: atSec(0.915), Kind: model.StallKind, Instance: -1, Lateness: 513 * time.Millisecond}}, vacuous...)
	if _, ev := evaluateOn(crashScenario, loaded); !strings.Contains(strings.Join(ev.Reasons, "\n"), "was skipped at 10s: target leader matched no live instance; the run never created the situation it is about (allow_skipped: true accepts this); the machine was loaded before it (the harness's wake-up probe woke 513ms late at 915ms") {
		t.Errorf("a fault skipped on a loaded machine: %q; want the stall named", ev.Reasons)
	}

	// A leader, but the fault skipped: unknown, unless the scenario allows it.
	steady := new(analysisScript).gain(1, 0, "a").
		add(model.Event{At: atSec(10), Kind: model.FaultSkipped, Instance: -1, Fault: "crash", FaultID: 0, Detail: "no leader"}).
		end(30)
	sc := crashScenario
	sc.Expect = []model.Expectation{{Metric: "overlap_windows", Max: "0"}}
	if _, ev := evaluateOn(sc, steady); ev.Verdict != model.Unknown {
		t.Errorf("skipped fault: verdict %s, want unknown", ev.Verdict)
	}
	sc.Faults = []model.Fault{crashScenario.Faults[0]}
	sc.Faults[0].AllowSkipped = true
	if _, ev := evaluateOn(sc, steady); ev.Verdict != model.Pass {
		t.Errorf("skipped fault with allow_skipped: verdict %s (%q), want pass", ev.Verdict, ev.Reasons)
	}
}

// Missing measurements are not zero.
func TestEvaluateNotMeasuredFails(t *testing.T) {
	// The leader crashes and nobody takes over: failover is not measured.
	tl := new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").heal(10, 0).end(30)
	sc := crashScenario
	sc.Expect = []model.Expectation{{Metric: "failover", Max: "predicted"}, {Metric: "heal_to_stable", Max: "20s"}, {Metric: "stale_leadership", Max: "1s"}}
	_, ev := evaluateOn(sc, tl)
	for _, m := range []string{"failover", "heal_to_stable", "stale_leadership"} {
		c := checkOf(t, ev, model.Metric(m))
		if c.Verdict != model.Fail || !c.NotMeasured || !strings.Contains(c.Detail, "not measured") {
			t.Errorf("%s: %s (not measured %v); want a failure saying it was not measured", m, c, c.NotMeasured)
		}
	}

	// heal_to_stable with no fault healed at all.
	open := new(analysisScript).gain(0, 0, "a").fault(10, 0, "partition", "blackhole", 1).end(30)
	sc.Expect = []model.Expectation{{Metric: "heal_to_stable", Max: "20s"}}
	if c := checkOf(t, func() Evaluation { _, ev := evaluateOn(sc, open); return ev }(), "heal_to_stable"); c.Verdict != model.Fail || !strings.Contains(c.Detail, "no fault was healed") {
		t.Errorf("no heal: %s", c)
	}

	// A failover expectation when no fault demoted a leader: unknown.
	follower := new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 1).crash(10, 1, "b").heal(10, 0).end(30)
	sc.Expect = []model.Expectation{{Metric: "failover", Max: "predicted"}}
	if _, ev := evaluateOn(sc, follower); ev.Verdict != model.Unknown {
		t.Errorf("failover with no leader demoted: %s, want unknown", ev.Verdict)
	}
}

// A window still open when the run ended is a lower bound: it fails a max
// limit it could still exceed, and says so.
func TestEvaluateOpenWindow(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").end(12)
	sc := crashScenario
	sc.Expect = []model.Expectation{{Metric: "max_gap", Max: "ttl + wait"}}
	_, ev := evaluateOn(sc, tl)
	c := checkOf(t, ev, "max_gap")
	if c.Verdict != model.Fail || !c.Open || c.Value() != "≥ 2s, still open" {
		t.Errorf("open gap of 2s against 11s: %s; want a failure, shown as ≥ 2s, still open", c)
	}
}

// Count limits express findings: min, max, exactly.
func TestEvaluateCountLimits(t *testing.T) {
	one := new(analysisScript).gain(0, 0, "a").fault(5, 0, "pause", "", 0).gain(8, 1, "b").lose(9, 0, "a").heal(9, 0).end(30)
	none := new(analysisScript).gain(0, 0, "a").fault(5, 0, "pause", "", 0).heal(9, 0).end(30)
	for _, tt := range []struct {
		limit     model.Expectation
		one, none model.Verdict
		want      string
	}{
		{model.Expectation{Metric: "overlap_windows", Max: "1"}, model.Pass, model.Pass, "≤ 1"},
		{model.Expectation{Metric: "overlap_windows", Min: "1"}, model.Pass, model.Fail, "≥ 1"},
		{model.Expectation{Metric: "overlap_windows", Min: "1", Max: "1"}, model.Pass, model.Fail, "= 1"},
		{model.Expectation{Metric: "overlap_windows", Max: "0"}, model.Fail, model.Pass, "≤ 0"},
		{model.Expectation{Metric: "max_overlap", Min: "500ms"}, model.Pass, model.Fail, "≥ 500ms"},
	} {
		sc := model.Scenario{Params: specTimings, Faults: []model.Fault{{At: 5 * time.Second, For: 4 * time.Second, Kind: model.FaultPause}},
			Expect: []model.Expectation{tt.limit}}
		_, a := evaluateOn(sc, one)
		_, b := evaluateOn(sc, none)
		if a.Checks[0].Verdict != tt.one || b.Checks[0].Verdict != tt.none || a.Checks[0].Want() != tt.want {
			t.Errorf("%+v: with an overlap %s, without %s, want %q; want %s, %s, %q", tt.limit,
				a.Checks[0].Verdict, b.Checks[0].Verdict, a.Checks[0].Want(), tt.one, tt.none, tt.want)
		}
	}
}

// Predicted limits come from the faults the run applied, not from the
// schedule: a skipped pause must not lend its large overlap bound to a run
// in which only a crash happened.
func TestEvaluatePredictedFromAppliedFaults(t *testing.T) {
	sc := model.Scenario{
		Params: specTimings,
		Faults: []model.Fault{
			{At: 5 * time.Second, For: 20 * time.Second, Kind: model.FaultPause, Target: model.Target{Role: model.RoleFollower}, AllowSkipped: true},
			{At: 10 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}},
		},
		Expect: []model.Expectation{{Metric: "max_overlap", Max: "predicted"}},
	}
	// A 2 s overlap after the crash: the crash mode predicts none.
	tl := new(analysisScript).gain(0, 0, "a").
		add(model.Event{At: atSec(5), Kind: model.FaultSkipped, Instance: -1, Fault: "pause", FaultID: 0, Detail: "no follower"}).
		fault(10, 1, "crash", "", 0).gain(10, 1, "b").crash(12, 0, "a").heal(12, 1).end(40)
	_, ev := evaluateOn(sc, tl)
	c := checkOf(t, ev, "max_overlap")
	if c.Verdict != model.Fail || c.Max != bounds.DefaultSlack {
		t.Errorf("overlap after a crash with a skipped pause: %s (bound %v); want a failure against the crash bound 0 + slack", c, c.Max)
	}
}

// A predicted bound that does not exist proves nothing: unknown, not held.
func TestEvaluateUnboundedPredictionIsUnknown(t *testing.T) {
	p := specTimings
	p.Client.ReadTimeout = -1 // read_timeout: none
	sc := model.Scenario{Params: p,
		Faults: []model.Fault{{At: 10 * time.Second, For: 5 * time.Second, Kind: model.FaultPartition, Mode: model.PartitionBlackhole}},
		Expect: []model.Expectation{{Metric: "max_overlap", Max: "predicted"}}}
	tl := new(analysisScript).gain(0, 0, "a").fault(10, 0, "partition", "blackhole", 0).heal(15, 0).end(40)
	_, ev := evaluateOn(sc, tl)
	if c := checkOf(t, ev, "max_overlap"); c.Verdict != model.Unknown || !strings.Contains(c.Detail, "unbounded") {
		t.Errorf("unbounded prediction: %s; want unknown", c)
	}
	if ev.Verdict != model.Unknown {
		t.Errorf("run verdict %s, want unknown", ev.Verdict)
	}
}

// claims: held turns a claim that did not hold into a failure.
func TestEvaluateStrictClaims(t *testing.T) {
	// An 8 s overlap: split brain beyond the 5 s TTL.
	tl := new(analysisScript).gain(0, 0, "a").fault(10, 0, "partition", "blackhole", 0).gain(12, 1, "b").lose(20, 0, "a").heal(20, 0).end(40)
	sc := model.Scenario{Params: specTimings,
		Faults: []model.Fault{{At: 10 * time.Second, For: 10 * time.Second, Kind: model.FaultPartition, Mode: model.PartitionBlackhole}},
		Expect: []model.Expectation{{Metric: "overlap_windows", Min: "1"}}}
	if _, ev := evaluateOn(sc, tl); ev.Verdict != model.Pass {
		t.Fatalf("by default a claim not held is a finding, not a failure: %s %q", ev.Verdict, ev.Reasons)
	}
	sc.StrictClaims = true
	_, ev := evaluateOn(sc, tl)
	c := checkOf(t, ev, model.ClaimMetric(analysis.ClaimSplitBrain))
	if ev.Verdict != model.Fail || c.Verdict != model.Fail {
		t.Errorf("strict claims: run %s, %s; want both to fail", ev.Verdict, c)
	}
}

// An instant fault's reach ends at the next stable leader, or just before
// the next fault on the leader: a SCRIPT FLUSH must not explain an overlap
// 95 s later, nor be charged with a demotion.
func TestInstantFaultReach(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").
		add(model.Event{At: atSec(4), Kind: model.FaultApplied, Instance: -1, FaultID: 0, Fault: "script-flush", Instant: true}).heal(4, 0).
		gain(99, 1, "b").lose(102, 0, "a").end(120)
	a := analysis.Analyze(tl, specTimings)
	f := a.Faults[0]
	if f.Open || f.Reach != atSec(4) {
		t.Errorf("flush span: open %v, reach %v; want closed, reaching only to 4s (the leader was already stable)", f.Open, f.Reach)
	}
	if f.Demotion != nil {
		t.Errorf("the flush was charged with a demotion %v after it", *f.Demotion)
	}
	for _, cl := range a.Claims {
		if cl.Name == analysis.ClaimNoFaultlessSplit && cl.Verdict != analysis.NotHeld {
			t.Errorf("the overlap at 99s is away from any fault, yet %s: %s", cl.Verdict, cl.Detail)
		}
	}

	// A Redis restart with no stable leader afterwards reaches at most
	// TTL + Wait past its action.
	restart := new(analysisScript).gain(0, 0, "a").
		add(model.Event{At: atSec(10), Kind: model.FaultApplied, Instance: -1, FaultID: 0, Fault: "redis-restart", Instant: true}).heal(10.5, 0).
		lose(12, 0, "a").end(60)
	if f := analysis.Analyze(restart, specTimings).Faults[0]; f.Reach != atSec(21.5) {
		t.Errorf("restart reach %v, want 21.5s (heal + TTL + Wait)", f.Reach)
	}

	// A flush before the leader was stable, then a crash of that leader:
	// the crash's demotion and failover are the crash's, not the flush's
	// (before, the flush's failover ran from 0.15s: 13.79s).
	crash := new(analysisScript).gain(0, 0, "a").
		add(model.Event{At: atSec(0.15), Kind: model.FaultApplied, Instance: -1, FaultID: 0, Fault: "script-flush", Instant: true}).heal(0.15, 0).
		fault(5.09, 1, "crash", "", 0).lose(5.09, 0, "a").gain(13.94, 1, "b").end(60)
	a = analysis.Analyze(crash, specTimings)
	if f := a.Faults[0]; f.Reach != atSec(5.09)-1 || f.Demotion != nil || f.Failover != nil {
		t.Errorf("flush: reach %v, demotion %v, failover %v; want reach just before the crash's 5.09s, neither charged", f.Reach, f.Demotion, f.Failover)
	}
	if f := a.Faults[1]; f.Failover == nil || *f.Failover != atSec(13.94)-atSec(5.09) {
		t.Errorf("crash failover %v, want 8.85s", f.Failover)
	}
}

// The fault size assumed by the predictions is the one applied: the
// slowest clock, a pause as long as it lasted, pauses of one instance within
// one renewal interval added up.
func TestAppliedFaultSize(t *testing.T) {
	sc := model.Scenario{Params: specTimings, Faults: []model.Fault{
		{At: 1 * time.Second, For: 5 * time.Second, Kind: model.FaultClock, Rate: 0.3},
		{At: 7 * time.Second, For: 5 * time.Second, Kind: model.FaultClock, Rate: 0.9},
		{At: 20 * time.Second, Kind: model.FaultPause}, // no "for": until the end of the fault phase
		{At: 40 * time.Second, For: 2 * time.Second, Kind: model.FaultPause},
		{At: 43 * time.Second, For: 2 * time.Second, Kind: model.FaultPause},
	}}
	tl := new(analysisScript).gain(0, 0, "a").
		fault(1, 0, "clock", "", 0).heal(6, 0).fault(7, 1, "clock", "", 0).heal(12, 1).
		fault(20, 2, "pause", "", 1).heal(30, 2).
		fault(40, 3, "pause", "", 2).heal(42, 3).fault(43, 4, "pause", "", 2).heal(45, 4).
		end(60)
	a := analysis.Analyze(tl, specTimings)
	got := bounds.AppliedFaultSize(sc, a)
	if got.ClockRate != 0.3 {
		t.Errorf("clock rate %v, want the slowest, 0.3", got.ClockRate)
	}
	if got.Pause != 10*time.Second {
		t.Errorf("pause %v, want 10s: the unbounded pause lasted 10s", got.Pause)
	}
	restart := model.Scenario{Params: specTimings, Faults: []model.Fault{{At: 10 * time.Second, Kind: model.FaultRedisRestart}}}
	tl3 := new(analysisScript).gain(0, 0, "a").
		add(model.Event{At: atSec(10), Kind: model.FaultApplied, Instance: -1, FaultID: 0, Fault: "redis-restart", Instant: true}).heal(10.05, 0).end(30)
	if got := bounds.AppliedFaultSize(restart, analysis.Analyze(tl3, specTimings)); got.RedisDowntime != 50*time.Millisecond {
		t.Errorf("redis downtime %v, want the 50ms from the restart to Redis answering", got.RedisDowntime)
	}
	failover := model.Scenario{Redis: model.RedisCluster, Params: specTimings, Faults: []model.Fault{{At: 10 * time.Second, Kind: model.FaultRedisFailover, Lag: time.Second}}}
	tl4 := new(analysisScript).gain(0, 0, "a").
		add(model.Event{At: atSec(10), Kind: model.FaultApplied, Instance: -1, FaultID: 0, Fault: "redis-failover", Instant: true}).heal(11.02, 0).end(30)
	if got := bounds.AppliedFaultSize(failover, analysis.Analyze(tl4, specTimings)); got.Failover != 1020*time.Millisecond || got.FailoverLag != time.Second || got.FailoverSwitch != 20*time.Millisecond {
		t.Errorf("failover %v lag %v switch %v, want 1.02s from the fault to the switch, lag 1s, switch 20ms", got.Failover, got.FailoverLag, got.FailoverSwitch)
	}
	// A short lossy failover and a longer clean one: the lossy one decides
	// (any lag may lose the lease), the clean one's switch is the longest.
	two := model.Scenario{Redis: model.RedisCluster, Params: specTimings, Faults: []model.Fault{
		{At: 10 * time.Second, Kind: model.FaultRedisFailover, Lag: 200 * time.Millisecond},
		{At: 20 * time.Second, Kind: model.FaultRedisFailover}}}
	tl5 := new(analysisScript).gain(0, 0, "a").
		add(model.Event{At: atSec(10), Kind: model.FaultApplied, Instance: -1, FaultID: 0, Fault: "redis-failover", Instant: true}).heal(10.21, 0).
		add(model.Event{At: atSec(20), Kind: model.FaultApplied, Instance: -1, FaultID: 1, Fault: "redis-failover", Instant: true}).heal(20.3, 1).end(40)
	got = bounds.AppliedFaultSize(two, analysis.Analyze(tl5, specTimings))
	if got.FailoverLag != 200*time.Millisecond || got.FailoverSwitch != 300*time.Millisecond {
		t.Errorf("two failovers: lag %v switch %v, want 200ms (the lossy one's) and 300ms (the clean one's)", got.FailoverLag, got.FailoverSwitch)
	}
	if pr, _ := bounds.PredictMode(specTimings, model.ModeFailover, got); pr.MaxOverlap == 0 {
		t.Errorf("a lossy failover beside a clean one predicted no overlap (%s)", pr.OverlapFormula)
	}
	tl2 := new(analysisScript).gain(0, 0, "a").
		fault(40, 3, "pause", "", 2).heal(42, 3).fault(43, 4, "pause", "", 2).heal(45, 4).end(60)
	if got := bounds.AppliedFaultSize(sc, analysis.Analyze(tl2, specTimings)); got.Pause != 4*time.Second {
		t.Errorf("two 2s pauses 1s apart (renewal interval 2.5s): %v, want 4s", got.Pause)
	}
}

// Expression errors say what is wrong: a zero divisor, a sum that
// overflows a duration.
func TestEvalDurationErrors(t *testing.T) {
	for expr, want := range map[string]string{
		"ttl/0":               "division by zero",
		"ttl * 1e30":          "overflows",
		"2562047h + 2562047h": "overflows",
		"ttl + 0":             "plain number",
	} {
		if _, err := model.EvalDuration(expr, specTimings); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v; want an error saying %q", expr, err, want)
		}
	}
	if d, err := model.EvalDuration("ttl/2 + 250ms", specTimings); err != nil || d != 2750*time.Millisecond {
		t.Errorf("ttl/2 + 250ms = %v, %v", d, err)
	}
}

// A predicted bound has preconditions (Preconditions): a run that broke one
// is unknown with the reason, never a pass that measured nothing nor a
// fail the bound never claimed. Each case passed or failed before.
func TestPredictedPreconditionsUnknown(t *testing.T) {
	gapOnly := []model.Expectation{{Metric: "max_gap", Max: "predicted"}}
	both := []model.Expectation{{Metric: "max_gap", Max: "predicted"}, {Metric: "max_overlap", Max: "predicted"}}
	cases := []struct {
		name   string
		sc     model.Scenario
		tl     model.Timeline
		want   map[string]model.Verdict
		reason string
	}{{
		// A blackhole on a follower: the leader's bound was checked
		// (and passed) though no leader's fault happened.
		name: "follower only",
		sc: model.Scenario{Params: specTimings, Expect: both,
			Faults: []model.Fault{{At: 10 * time.Second, For: 5 * time.Second, Kind: model.FaultPartition, Mode: model.PartitionBlackhole, Target: model.Target{Role: model.RoleFollower}}}},
		tl: new(analysisScript).start(0, 0, "a").start(0, 1, "b").gain(1, 0, "a").
			fault(10, 0, "partition", "blackhole", 1).heal(15, 0).end(30),
		want:   map[string]model.Verdict{"max_gap": model.Unknown, "max_overlap": model.Unknown},
		reason: "hit no leader",
	}, {
		// A skip the scenario accepts still exercised nothing.
		name: "allowed skip",
		sc: model.Scenario{Params: specTimings, Expect: both,
			Faults: []model.Fault{{At: 10 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}, AllowSkipped: true}}},
		tl: new(analysisScript).start(0, 0, "a").start(0, 1, "b").gain(1, 0, "a").
			add(model.Event{At: atSec(10), Kind: model.FaultSkipped, Instance: -1, Fault: "crash", FaultID: 0, Detail: "no leader"}).end(30),
		want:   map[string]model.Verdict{"max_gap": model.Unknown, "max_overlap": model.Unknown},
		reason: "was skipped",
	}, {
		// Every instance crashed and restarted: the gap (15 s measured)
		// is not the leader-crash bound's case (11 s).
		name: "all crashed",
		sc: model.Scenario{Params: specTimings, Instances: 2, Expect: gapOnly,
			Faults: []model.Fault{{At: 10 * time.Second, For: 4 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleAll}, Restart: true}}},
		tl: new(analysisScript).start(0, 0, "a").start(0, 1, "b").gain(1, 0, "a").
			fault(10, 0, "crash", "", 0, 1).crash(10, 0, "a").crash(10, 1, "b").heal(14, 0).
			start(14, 0, "c").start(14, 1, "d").gain(25, 1, "d").end(40),
		want:   map[string]model.Verdict{"max_gap": model.Unknown},
		reason: "no healthy follower",
	}, {
		// One instance: nobody can take over.
		name: "one instance",
		sc: model.Scenario{Params: specTimings, Instances: 1, Expect: gapOnly,
			Faults: []model.Fault{{At: 10 * time.Second, For: 4 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}, Restart: true}}},
		tl: new(analysisScript).start(0, 0, "a").gain(1, 0, "a").
			fault(10, 0, "crash", "", 0).crash(10, 0, "a").heal(14, 0).start(14, 0, "c").gain(29, 0, "c").end(40),
		want:   map[string]model.Verdict{"max_gap": model.Unknown},
		reason: "1 instance",
	}, {
		// A slow clock on the follower stretches its Wait: the gap bound
		// assumes a follower on schedule, the overlap bound does not.
		name: "slow follower clock",
		sc: model.Scenario{Params: specTimings, Instances: 2, Expect: both,
			Faults: []model.Fault{
				{At: 10 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}},
				{At: 5 * time.Second, For: 20 * time.Second, Kind: model.FaultClock, Rate: 0.2, Target: model.Target{Indexes: []int{1}}}}},
		tl: new(analysisScript).start(0, 0, "a").start(0, 1, "b").gain(1, 0, "a").
			fault(5, 1, "clock", "", 1).fault(10, 0, "crash", "", 0).crash(10, 0, "a").heal(25, 1).gain(30, 1, "b").end(45),
		want:   map[string]model.Verdict{"max_gap": model.Unknown, "max_overlap": model.Pass},
		reason: "no healthy follower",
	}, {
		// The same crash with a healthy follower: the bound applies.
		name: "healthy follower",
		sc: model.Scenario{Params: specTimings, Instances: 2, Expect: both,
			Faults: []model.Fault{{At: 10 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}}}},
		tl: new(analysisScript).start(0, 0, "a").start(0, 1, "b").gain(1, 0, "a").
			fault(10, 0, "crash", "", 0).crash(10, 0, "a").gain(20, 1, "b").end(40),
		want: map[string]model.Verdict{"max_gap": model.Pass, "max_overlap": model.Pass},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, ev := evaluateOn(tc.sc, tc.tl)
			for metric, want := range tc.want {
				c := checkOf(t, ev, model.Metric(metric))
				if c.Verdict != want {
					t.Errorf("%s: %s, want %s", metric, c, want)
				}
				if want == model.Unknown && !strings.Contains(c.Detail, tc.reason) {
					t.Errorf("%s: detail %q does not say %q", metric, c.Detail, tc.reason)
				}
			}
		})
	}
}

// A follower paused between its SET NX landing and the reply holds the key
// without believing: the gap the leader's pause left runs on while it is
// stopped (b2-midacquire: the leader's 8 s pause, then the winning
// follower's 4.9 s one, a gap of 7.9 s over the 3.001 s of the leader's
// pause alone).
func TestFollowerStoppedMidAcquireChainsTheGap(t *testing.T) {
	s := time.Second
	sc := model.Scenario{Params: specTimings, Instances: 3, Faults: []model.Fault{
		{At: 5 * s, For: 8 * s, Kind: model.FaultPause, Target: model.Target{Role: model.RoleLeader}},
		{At: 16 * s, For: 4900 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Indexes: []int{1}}},
	}, Expect: []model.Expectation{{Metric: "max_gap", Max: "predicted"}, {Metric: "failover", Max: "predicted"}}}
	tl := new(analysisScript).gain(0, 0, "a").
		fault(5, 0, "pause", "", 0).pause(5, 0).resume(13, 0).heal(13, 0).lose(13, 0, "a").
		fault(16, 1, "pause", "", 1).pause(16, 1).resume(20.9, 1).heal(20.9, 1).gain(20.9, 1, "b").end(40)
	a, ev := evaluateOn(sc, tl)
	if size := bounds.AppliedFaultSize(sc.WithDefaults(), a); size.PauseMin != 8*s || size.PauseShortMax != 0 {
		t.Errorf("size %+v: the follower's pause is not the leader's", size)
	}
	for _, m := range []string{"max_gap", "failover"} {
		c := checkOf(t, ev, model.Metric(m))
		if c.Verdict != model.Pass || !strings.Contains(c.Detail, "mid-acquire") {
			t.Errorf("%s: %s (%s); want a pass chaining the stopped follower", m, c, c.Detail)
		}
	}
	if c := checkOf(t, ev, "max_gap"); c.Max < 7901*time.Millisecond {
		t.Errorf("gap bound %v, want at least 3.001s + 4.9s", c.Max)
	}
}

// StoppedAcquire: a stop too short for the resumed follower's renewal to
// lapse adds the stop; a longer one can also leave a second gap and a
// stale belief; safe mode abandons an acquire past its deadline (the key
// held unbelieved for a TTL, the next attempt within Wait).
func TestStoppedAcquire(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		p                      model.Params
		stop                   time.Duration
		extra, alone, failover time.Duration
	}{
		{specTimings, 2 * time.Second, 2001 * ms, 0, 2001 * ms},
		{specTimings, 4900 * ms, 4901 * ms, 3602 * ms, 11 * time.Second},
		{specTimings, 8 * time.Second, 8001 * ms, 502 * ms, 11 * time.Second},
		{specTimings, 20 * time.Second, 11001 * ms, 2 * ms, 22502 * ms},
		{model.Params{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: -1, Safe: true}, 4990 * ms, 11001 * ms, 0, 11 * time.Second},
	} {
		e, al, f, formula := bounds.StoppedAcquire(tt.p, tt.stop)
		if e != tt.extra || al != tt.alone || f != tt.failover || !strings.Contains(formula, bounds.BoundText(e)) {
			t.Errorf("%v (safe %v): %v %v %v, want %v %v %v (%s)", tt.stop, tt.p.Safe, e, al, f, tt.extra, tt.alone, tt.failover, formula)
		}
	}
}

// The pause sizes of several pauses: the longest (adding up on one
// instance within a renewal interval) for the overlap, of every instance;
// the shortest and the longest within a TTL for the gap, of the leaders'
// only (a follower's pause chains through StoppedAcquire). Scheduled, a
// follower-role target never hits a leader and every other may.
func TestPauseSizesOfLeadersAndFollowers(t *testing.T) {
	s := time.Second
	sc := model.Scenario{Params: specTimings, Instances: 3, Duration: 60 * s, Faults: []model.Fault{
		{At: 6 * s, For: 8 * s, Kind: model.FaultPause, Target: model.Target{Role: model.RoleLeader}},
		{At: 9 * s, For: s, Kind: model.FaultPause, Target: model.Target{Role: model.RoleFollower}},
		{At: 30 * s, For: 2450 * time.Millisecond, Kind: model.FaultSuspend, Target: model.Target{Role: model.RoleLeader}},
		{At: 40 * s, For: 4 * s, Kind: model.FaultPause, Target: model.Target{Role: model.RoleFollower}},
		{At: 50 * s, For: 9 * s, Kind: model.FaultSuspend, Target: model.Target{Role: model.RoleFollower}},
	}}.WithDefaults()
	tl := new(analysisScript).gain(0, 0, "a").
		fault(6, 0, "pause", "", 0).heal(14, 0).
		fault(9, 1, "pause", "", 1).heal(10, 1).
		fault(30, 2, "suspend", "", 0).heal(32.45, 2).
		fault(40, 3, "pause", "", 2).heal(44, 3).
		fault(50, 4, "suspend", "", 1).heal(59, 4).end(60)
	a := analysis.Analyze(tl, sc.Params)
	applied := bounds.AppliedFaultSize(sc, a)
	if applied.Pause != 9*s || applied.PauseMin != 2450*time.Millisecond || applied.PauseShortMax != 2450*time.Millisecond {
		t.Errorf("applied %+v: want Pause 9s (a follower's counts for the overlap), PauseMin and PauseShortMax 2.45s (the leaders')", applied)
	}
	// Scheduled, every role target may hit every instance: their pauses
	// add up for the overlap (Pause 15.45s here), never for the gap.
	if got := bounds.ScheduledFaultSize(sc); got.Pause < applied.Pause || got.PauseMin != 2450*time.Millisecond || got.PauseShortMax != 2450*time.Millisecond {
		t.Errorf("scheduled %+v: want Pause at least 9s, PauseMin and PauseShortMax 2.45s", got)
	}
}

// A window's limit within the measurement's uncertainty is neither held nor
// broken. An observed fleet's estimate is off either way (Uncertainty); an
// agent's line read L late says the agent acted up to L earlier, never later
// (Late), so a window it ends may be up to L shorter, never longer, and one
// it opens up to L longer, never shorter.
func TestEvaluateWithinUncertainty(t *testing.T) {
	bound := specTimings.TTL + specTimings.Wait + bounds.DefaultSlack // the crash's gap: 11.25 s
	for _, c := range []struct {
		gap, late, u float64
		want         model.Verdict
	}{
		// The gap runs from the harness's crash (exact) to a promotion
		// stamped late, so it really lasted within [gap − late, gap].
		{11.4, 0.2, 0, model.Unknown}, // 150 ms over, and may be up to 200 ms shorter
		{11.4, 0.1, 0, model.Fail},    // over however early the promotion came
		{11.2, 0.1, 0, model.Pass},    // at most 11.2 s: under however it came
		{11.2, 0, 0, model.Pass},
		// An estimate ± 0.1 s (chaos observe's) may be longer too.
		{11.2, 0, 0.1, model.Unknown},
		{11.4, 0, 0.1, model.Fail},
	} {
		tl := new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").heal(10, 0).
			add(model.Event{At: atSec(10 + c.gap), Kind: model.LeaderGained, Instance: 1, ID: "b", Late: atSec(c.late), Uncertainty: atSec(c.u)}).end(30)
		sc := crashScenario
		sc.Expect = []model.Expectation{{Metric: "max_gap", Max: "predicted"}}
		_, ev := evaluateOn(sc, tl)
		g := checkOf(t, ev, "max_gap")
		if g.Max != bound || g.Verdict != c.want || ev.Verdict != c.want {
			t.Errorf("gap %vs (late %vs, ± %vs) against %v: check %s, run %s; want %s", c.gap, c.late, c.u, g.Max, g.Verdict, ev.Verdict, c.want)
		}
		// An estimate is ± either way; a line read late leaves a range,
		// the gap at most as stamped.
		why := "within the measurement's uncertainty (± " + atSec(c.u).String() + ")"
		if c.late > 0 {
			why = "anywhere from " + atSec(c.gap-c.late).String() + " to " + atSec(c.gap).String()
		}
		if c.want == model.Unknown && !strings.Contains(g.Detail, why) {
			t.Errorf("detail %q does not say why (%q)", g.Detail, why)
		}
	}
}

// An overlap opened by a promotion read late began earlier than measured:
// it is at least as long as measured, so over its limit it fails.
func TestEvaluateLateOpenedOverlapFails(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").
		add(model.Event{At: atSec(5), Kind: model.LeaderGained, Instance: 1, ID: "b", Late: 500 * time.Millisecond}).lose(6.2, 0, "a").end(30)
	sc := crashScenario
	sc.Faults = nil
	sc.Expect = []model.Expectation{{Metric: "max_overlap", Max: "1s"}}
	_, ev := evaluateOn(sc, tl)
	if o := checkOf(t, ev, "max_overlap"); o.Measured != 1200*time.Millisecond || o.Verdict != model.Fail {
		t.Errorf("overlap 1.2s opened 0.5s late against 1s: %+v; want a fail", o)
	}
}

// A window still open at the run's end fails a max by policy, however late
// its start was stamped: an open 4.9 s overlap against 5 s, opened by a
// promotion read 0.2 s late, fails as it does with no lateness.
func TestEvaluateOpenWindowFailsWithLateness(t *testing.T) {
	for _, late := range []time.Duration{0, 200 * time.Millisecond} {
		tl := new(analysisScript).gain(0, 0, "a").
			add(model.Event{At: atSec(25.1), Kind: model.LeaderGained, Instance: 1, ID: "b", Late: late}).end(30)
		sc := crashScenario
		sc.Faults = nil
		sc.Expect = []model.Expectation{{Metric: "max_overlap", Max: "5s"}}
		_, ev := evaluateOn(sc, tl)
		if o := checkOf(t, ev, "max_overlap"); !o.Open || o.Verdict != model.Fail {
			t.Errorf("open overlap %v opened %v late against 5s: %+v; want an open window's fail", o.Measured, late, o)
		}
	}
}

// Every window counts, not only the longest: 2.1 s exactly is within 2.15 s,
// but a 2.0 s gap opened by a demotion read 0.2 s late may have been 2.2 s.
func TestEvaluateWithinUncertaintyEveryWindow(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").lose(10, 0, "a").gain(12.1, 1, "b").
		add(model.Event{At: atSec(20), Kind: model.LeaderLost, Instance: 1, ID: "b", Late: 200 * time.Millisecond}).gain(22, 2, "c").end(30)
	sc := crashScenario
	sc.Faults = nil
	sc.Expect = []model.Expectation{{Metric: "max_gap", Max: "2.15s"}}
	_, ev := evaluateOn(sc, tl)
	if g := checkOf(t, ev, "max_gap"); g.Measured != 2100*time.Millisecond || g.Verdict != model.Unknown {
		t.Errorf("gaps 2.1s and 2.0s (+0.2s) against 2.15s: %+v; want unknown", g)
	}
	ws := []model.Window{{Duration: 2100 * time.Millisecond}, {Duration: 2 * time.Second, Longer: 200 * time.Millisecond}}
	if v, spread := analysis.LongestWithin(ws, 2150*time.Millisecond); v != model.Unknown || spread != 200*time.Millisecond {
		t.Errorf("longestWithin against 2.15s: %s ± %v, want unknown ± 200ms", v, spread)
	}
	if v, _ := analysis.LongestWithin(ws, 1950*time.Millisecond); v != model.Fail {
		t.Errorf("longestWithin against 1.95s: %s, want fail (2.1s exactly is over)", v)
	}
}

// One measurement has one verdict: an overlap over the split-brain bound by
// less than its end's lateness makes max_overlap unknown, and the claim
// too, which is then no finding; over by more, both fail.
func TestClaimWithinUncertainty(t *testing.T) {
	_, split := model.ClaimBounds(specTimings)
	limit := split + analysis.ClaimSlack
	for _, c := range []struct {
		late  time.Duration
		check model.Verdict
		claim analysis.ClaimVerdict
	}{
		{200 * time.Millisecond, model.Unknown, analysis.ClaimUnknown}, // a's demotion read late: the overlap may have been 100 ms under
		{50 * time.Millisecond, model.Fail, analysis.NotHeld},
	} {
		tl := new(analysisScript).gain(0, 0, "a").gain(5, 1, "b").
			add(model.Event{At: atSec(5) + limit + 100*time.Millisecond, Kind: model.LeaderLost, Instance: 0, ID: "a", Late: c.late}).end(30)
		sc := crashScenario
		sc.Faults, sc.StrictClaims = nil, true
		sc.Expect = []model.Expectation{{Metric: "max_overlap", Max: limit.String()}}
		a, ev := evaluateOn(sc, tl)
		if o := checkOf(t, ev, "max_overlap"); o.Verdict != c.check {
			t.Errorf("late %v: max_overlap %s, want %s", c.late, o.Verdict, c.check)
		}
		if cl := checkOf(t, ev, model.ClaimMetric(analysis.ClaimSplitBrain)); cl.Verdict != c.check {
			t.Errorf("late %v: the split-brain claim's check %s, want %s", c.late, cl.Verdict, c.check)
		}
		var got analysis.ClaimVerdict
		for _, cl := range a.Claims {
			if cl.Name == analysis.ClaimSplitBrain {
				got = cl.Verdict
			}
		}
		found := false // no overlap here has a fault: no-faultless-split is a finding anyway
		findings := (&Result{Analysis: a}).Findings()
		for _, f := range findings {
			found = found || f.Name == analysis.ClaimSplitBrain
		}
		if got != c.claim || found != (c.claim == analysis.NotHeld) {
			t.Errorf("late %v: split-brain %q, findings %+v; want %q", c.late, got, findings, c.claim)
		}
	}
}

// A min is judged against the uncertainty too, the roles flipped: met for
// certain if some window reaches it however its ends came, failed if none
// could have, unknown otherwise; with a max too, either side's fail fails
// and only both sides' pass passes. The gap runs from the harness's crash
// (exact) to a promotion stamped late: it really lasted [gap − late, gap].
func TestEvaluateMinWithinUncertainty(t *testing.T) {
	for _, c := range []struct {
		gap, late float64
		min, max  string
		want      model.Verdict
	}{
		{11.4, 0.2, "11.3s", "", model.Unknown}, // may have been 11.2 s
		{11.4, 0.05, "11.3s", "", model.Pass},
		{11.2, 0.2, "11.3s", "", model.Fail}, // short of it however it came
		{11.45, 0.1, "11.3s", "11.5s", model.Pass},
		{11.45, 0.2, "11.3s", "11.5s", model.Unknown}, // the min's side is unknown
		{11.6, 0.2, "11.3s", "11.5s", model.Unknown},  // the max's side is unknown
		{11.2, 0.1, "11.3s", "11.5s", model.Fail},
		{11.7, 0.1, "11.3s", "11.5s", model.Fail},
	} {
		tl := new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").heal(10, 0).
			add(model.Event{At: atSec(10 + c.gap), Kind: model.LeaderGained, Instance: 1, ID: "b", Late: atSec(c.late)}).end(30)
		sc := crashScenario
		sc.Expect = []model.Expectation{{Metric: "max_gap", Min: c.min, Max: c.max}}
		_, ev := evaluateOn(sc, tl)
		if g := checkOf(t, ev, "max_gap"); g.Verdict != c.want {
			t.Errorf("gap %vs (late %vs) against min %s max %q: %s (%s); want %s", c.gap, c.late, c.min, c.max, g.Verdict, g.Detail, c.want)
		}
	}
}

// One measurement has one verdict: a failover and a heal_to_stable run from
// the harness's crash and heal (exact) to the promotion the gap ends at, so
// that promotion's lateness makes them unknown, failed or passed as it does
// the gap.
func TestEvaluateFailoverWithinUncertainty(t *testing.T) {
	for _, c := range []struct {
		gap, late float64
		want      model.Verdict
	}{
		{11.4, 0.2, model.Unknown}, // may have been 11.2 s
		{11.4, 0.05, model.Fail},
		{11.2, 0.2, model.Pass},
	} {
		tl := new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").heal(10, 0).
			add(model.Event{At: atSec(10 + c.gap), Kind: model.LeaderGained, Instance: 1, ID: "b", Late: atSec(c.late)}).end(30)
		sc := crashScenario
		sc.Expect = nil
		for _, m := range []string{"max_gap", "failover", "heal_to_stable"} {
			sc.Expect = append(sc.Expect, model.Expectation{Metric: model.Metric(m), Max: "11.3s"})
		}
		_, ev := evaluateOn(sc, tl)
		for _, m := range []string{"max_gap", "failover", "heal_to_stable"} {
			if g := checkOf(t, ev, model.Metric(m)); g.Measured != atSec(c.gap) || g.Verdict != c.want {
				t.Errorf("%s %v (promotion %vs late) against 11.3s: %s %v (%s); want %s", m, c.gap, c.late, g.Verdict, g.Measured, g.Detail, c.want)
			}
		}
	}
}

// A window end stamped more than MaxStampUncertainty late makes its check
// unknown, the run too loaded to judge, unless the check fails however the
// ends came: a gap of 11.4 s ended by a promotion read 1.5 s late passes no
// limit, but over 5 s even at its shortest (9.9 s) it fails.
func TestEvaluateTooLateIsUnknown(t *testing.T) {
	for _, c := range []struct {
		max, min string
		want     model.Verdict
	}{
		{"20s", "", model.Unknown},
		{"", "1s", model.Unknown},
		{"5s", "", model.Fail},
		{"", "12s", model.Fail}, // short of it even at its longest
	} {
		tl := new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").heal(10, 0).
			add(model.Event{At: atSec(21.4), Kind: model.LeaderGained, Instance: 1, ID: "b", Late: 1500 * time.Millisecond}).end(40)
		sc := crashScenario
		sc.Expect = []model.Expectation{{Metric: "max_gap", Max: c.max, Min: c.min}}
		_, ev := evaluateOn(sc, tl)
		g := checkOf(t, ev, "max_gap")
		if g.Verdict != c.want {
			t.Errorf("gap 11.4s read 1.5s late against max %q min %q: %s (%s); want %s", c.max, c.min, g.Verdict, g.Detail, c.want)
		}
		if c.want == model.Unknown && !strings.Contains(g.Detail, "too loaded to judge") {
			t.Errorf("detail %q does not say the run was too loaded", g.Detail)
		}
	}
}

// A claim is no surer than its check: an overlap under the split-brain
// bound, ended by a demotion read 1.5 s late, is unknown for both, where
// the claim had held.
func TestClaimTooLateIsUnknown(t *testing.T) {
	_, split := model.ClaimBounds(specTimings)
	limit := split + analysis.ClaimSlack
	tl := new(analysisScript).gain(0, 0, "a").gain(5, 1, "b").
		add(model.Event{At: atSec(5) + limit - 200*time.Millisecond, Kind: model.LeaderLost, Instance: 0, ID: "a", Late: 1500 * time.Millisecond}).end(30)
	sc := crashScenario
	sc.Faults, sc.StrictClaims = nil, true
	sc.Expect = []model.Expectation{{Metric: "max_overlap", Max: limit.String()}}
	a, ev := evaluateOn(sc, tl)
	if o := checkOf(t, ev, "max_overlap"); o.Verdict != model.Unknown {
		t.Errorf("max_overlap %s, want unknown", o.Verdict)
	}
	for _, cl := range a.Claims {
		if cl.Name == analysis.ClaimSplitBrain && cl.Verdict != analysis.ClaimUnknown {
			t.Errorf("split-brain %q, want unknown", cl.Verdict)
		}
	}
}

// duplicate_tasks: a maximum that only at-least-once redeliveries exceed (each
// extra completion followed a reclaim by its incarnation, each by another
// incarnation) is unknown, with what was counted; a repeat without a reclaim,
// or by one incarnation twice, fails it; a minimum is judged on the count
// alone.
func TestEvaluateRepeatedTasks(t *testing.T) {
	redelivered := func(s *analysisScript, task string) *analysisScript {
		return s.task(1, model.TaskDispatched, task).
			add(model.Event{At: atSec(2), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: task}).
			add(model.Event{At: atSec(2), Kind: model.TaskReclaimed, Instance: 2, ID: "c", Task: task}).
			add(model.Event{At: atSec(3), Kind: model.TaskCompleted, Instance: 2, ID: "c", Task: task})
	}
	twice := func(s *analysisScript, task string) *analysisScript {
		return s.task(1, model.TaskDispatched, task).
			add(model.Event{At: atSec(2), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: task}).
			add(model.Event{At: atSec(3), Kind: model.TaskCompleted, Instance: 2, ID: "c", Task: task})
	}
	base := func() *analysisScript { return new(analysisScript).gain(0, 0, "a") }
	for _, tt := range []struct {
		name   string
		tl     model.Timeline
		limit  model.Expectation
		want   model.Verdict
		detail string
	}{
		{"none", base().task(1, model.TaskDispatched, "t").task(2, model.TaskCompleted, "t").end(10), model.Expectation{Metric: "duplicate_tasks", Max: "0"}, model.Pass, ""},
		{"redelivered", redelivered(base(), "t").end(10), model.Expectation{Metric: "duplicate_tasks", Max: "0"}, model.Unknown,
			"1 re-ran after a reclaim (at-least-once redelivery: a live instance held the entry unacknowledged for ClaimIdle), 0 without one"},
		{"delivered twice", twice(base(), "t").end(10), model.Expectation{Metric: "duplicate_tasks", Max: "0"}, model.Fail, "0 re-ran after a reclaim"},
		{"both", twice(redelivered(base(), "t1"), "t2").end(10), model.Expectation{Metric: "duplicate_tasks", Max: "0"}, model.Fail, "1 re-ran after a reclaim"},
		{"delivered twice within the max", twice(redelivered(base(), "t1"), "t2").end(10), model.Expectation{Metric: "duplicate_tasks", Max: "1"}, model.Unknown, "1 without one"},
		{"a minimum", redelivered(base(), "t").end(10), model.Expectation{Metric: "duplicate_tasks", Min: "2"}, model.Fail, "1 re-ran after a reclaim"},
		// b took over its own entry and ran it again: a runner bug, not a
		// redelivery.
		{"one incarnation twice", base().task(1, model.TaskDispatched, "t").
			add(model.Event{At: atSec(2), Kind: model.TaskReclaimed, Instance: 1, ID: "b", Task: "t"}).
			add(model.Event{At: atSec(2), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: "t"}).
			add(model.Event{At: atSec(3), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: "t"}).end(10),
			model.Expectation{Metric: "duplicate_tasks", Max: "0"}, model.Fail, "0 re-ran after a reclaim"},
		// c's reclaim began a run that failed; its later completion is of
		// another delivery, which the reclaim does not account for.
		{"reclaim of a failed attempt", base().task(1, model.TaskDispatched, "t").
			add(model.Event{At: atSec(2), Kind: model.TaskReclaimed, Instance: 2, ID: "c", Task: "t"}).
			add(model.Event{At: atSec(3), Kind: model.TaskFailed, Instance: 2, ID: "c", Task: "t"}).
			add(model.Event{At: atSec(5), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: "t"}).
			add(model.Event{At: atSec(6), Kind: model.TaskCompleted, Instance: 2, ID: "c", Task: "t"}).end(10),
			model.Expectation{Metric: "duplicate_tasks", Max: "0"}, model.Fail, "0 re-ran after a reclaim"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := model.Scenario{Mode: model.ModeRunner, Params: specTimings, Expect: []model.Expectation{tt.limit}}
			_, ev := evaluateOn(sc, tt.tl)
			c := checkOf(t, ev, "duplicate_tasks")
			if c.Verdict != tt.want || !strings.Contains(c.Detail, tt.detail) {
				t.Errorf("%s: %s; want %s with %q", tt.name, c, tt.want, tt.detail)
			}
		})
	}
}
