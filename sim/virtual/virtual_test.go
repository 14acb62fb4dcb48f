package virtual_test

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

// builtin returns a built-in scenario; runner-mode ones are switched to
// elector mode (the leadership they measure is the elector's).
func builtin(t testing.TB, name string) model.Scenario {
	t.Helper()
	e, ok := scenarios.Lookup(name)
	if !ok {
		t.Fatalf("no built-in %q", name)
	}
	return e.Scenario.AsElector()
}

func run(t testing.TB, sc model.Scenario, o virtual.Options) *verdict.Result {
	t.Helper()
	res, err := virtual.Run(sc, o)
	if err != nil {
		t.Fatalf("%s: %v", sc.Name, err)
	}
	return res
}

func TestDeterministic(t *testing.T) {
	for _, e := range scenarios.Builtin() {
		sc := builtin(t, e.Name)
		if virtual.Refuses(sc) != nil {
			continue // redis: replicated or cluster
		}
		for _, seed := range []int64{1, 7} {
			sc.Seed = seed
			a, _ := json.Marshal(run(t, sc, virtual.Options{}))
			b, _ := json.Marshal(run(t, sc, virtual.Options{}))
			if !bytes.Equal(a, b) {
				t.Errorf("%s seed %d: two runs differ", e.Name, seed)
			}
		}
	}
	// A different seed changes the ids and jitter, so the bytes.
	sc := builtin(t, "partition-blackhole")
	a, _ := json.Marshal(run(t, sc, virtual.Options{}))
	sc.Seed = 2
	b, _ := json.Marshal(run(t, sc, virtual.Options{}))
	if bytes.Equal(a, b) {
		t.Errorf("seeds 1 and 2 gave the same result")
	}
}

func TestBuiltinsPass(t *testing.T) {
	for _, e := range scenarios.Builtin() {
		if virtual.Refuses(e.Scenario) != nil {
			continue // runner mode (tasks and chores), replicated or cluster Redis
		}
		res := run(t, e.Scenario, virtual.Options{})
		if res.Verdict != model.Pass {
			t.Errorf("%s: %s: %s", e.Name, res.Verdict, strings.Join(res.Reasons, "; "))
		}
		if res.Versions.Redis == "" || !strings.Contains(res.Versions.Redis, "virtual") {
			t.Errorf("%s: Versions.Redis %q does not say virtual", e.Name, res.Versions.Redis)
		}
	}
}

// The model of a failover, as the real backend measures it
// (sim/topology_test.go): a clean one keeps the lease; a lossy one whose
// replica missed more than a TTL of writes loses it at the switch, and the
// old leader believes until its next renewal.
func TestFailover(t *testing.T) {
	fast := model.Params{TTL: 500 * time.Millisecond, Wait: 600 * time.Millisecond, JitterMS: 5}
	for _, topo := range []model.Topology{model.RedisReplicated, model.RedisCluster} {
		for _, lag := range []time.Duration{0, 600 * time.Millisecond} {
			sc := model.Scenario{Name: "failover", Redis: topo, Instances: 3, Params: fast, Duration: 3 * time.Second, Recovery: 2 * time.Second,
				Faults: []model.Fault{{At: 1500 * time.Millisecond, Kind: model.FaultRedisFailover, Lag: lag}}}
			res := run(t, sc, virtual.Options{})
			s := res.Analysis.Summary
			var lost bool
			for _, e := range res.Timeline {
				if e.Kind == model.RedisHolder && e.Holder == "" && e.Detail == "failover" {
					lost = true
				}
			}
			t.Logf("%s lag %v: gains %d, stale %v, overlap %v, lost %v", topo, lag, s.LeaderGains, s.MaxStale, s.MaxOverlap, lost)
			if lag == 0 && (lost || s.LeaderGains != 1 || s.MaxStale != 0) {
				t.Errorf("%s clean failover: lease lost %v, %d gains, stale %v; want kept, 1, 0", topo, lost, s.LeaderGains, s.MaxStale)
			}
			if lag > 0 && (!lost || s.LeaderGains < 2 || s.MaxStale == 0) {
				t.Errorf("%s lossy failover: lease lost %v, %d gains, stale %v; want lost at the switch, a new leader, a stale leader", topo, lost, s.LeaderGains, s.MaxStale)
			}
		}
	}
}

// Real is the real backend's range for one metric of one built-in at time
// scale 1: README.md's "Predicted vs measured" (four suite runs, seeds 1-4),
// widened by one suite run of 2026-11-30 on this machine.
type real struct {
	scenario, metric string
	lo, hi           time.Duration
	note             string // why a deviation is known, if any
}

var calibration = []real{
	{"partition-blackhole", "overlap", 5530 * ms, 5565 * ms, ""},
	{"partition-blackhole", "stale", 7530 * ms, 7552 * ms, ""},
	{"partition-blackhole-tuned", "gap", 3989 * ms, 4000 * ms, ""},
	{"partition-one-way", "overlap", 2040 * ms, 2060 * ms, ""},
	{"partition-one-way", "stale", 5030 * ms, 5050 * ms, ""},
	// Since the gated connection is health-checked as a plain TCP one is
	// (issue 24: a refused renewal dials four rounds, not three): seeds 1-2,
	// one run at a time, 2026-12-01; 3.13-3.22 s before.
	{"partition-refuse", "gap", 2733 * ms, 2784 * ms, ""},
	{"partition-reset", "gap", 4040 * ms, 4130 * ms, ""},
	// pause is SIGSTOP's meaning: real backend 2.241/2.246 s and 4.232/4.233 s
	// (seeds 1, 2, 2026-12-01), process backend 2.222/2.224 s and 4.217/4.213 s.
	{"pause", "overlap", 2220 * ms, 2250 * ms, ""},
	{"pause", "stale", 4210 * ms, 4235 * ms, ""},
	{"suspend", "overlap", 3500 * ms, 3511 * ms, ""},
	{"suspend", "stale", 5500 * ms, 5504 * ms, ""},
	{"redis-restart", "gap", 4480 * ms, 4497 * ms, ""},
	{"renew-blip", "gap", 6000 * ms, 6002 * ms, ""},
	{"flapping-network", "gap", 6000 * ms, 6003 * ms, ""},
	{"thundering-herd", "gap", 5800 * ms, 5870 * ms, ""},
	{"slow-redis", "overlap", 4 * ms, 15 * ms, ""},
	// Runner mode in the real backend: runners start ~40 ms apart (their
	// setup precedes the first election), which moves the followers' phase.
	{"leader-crash", "gap", 5875 * ms, 5940 * ms, "runner mode in the real backend: runners start ~40 ms apart"},
	{"leader-stop", "gap", 5730 * ms, 5880 * ms, ""},
	{"rolling-restart", "gap", 2850 * ms, 2990 * ms, ""},
	// The leader's clock at 0.2× magnifies its renewal phase at the fault 5×:
	// the real backend's start-up (10-140 ms under a parallel suite) moves
	// the overlap by up to 0.7 s.
	{"clock-drift", "overlap", 820 * ms, 1180 * ms, "start-up phase × 5 (clock at 0.2×)"},
	// Three real suite runs of 2026-11-30 (seeds 1, 2 and 1 again).
	{"replica-failover-lossy", "overlap", 512 * ms, 524 * ms, ""},
	{"replica-failover-lossy", "stale", 1282 * ms, 1289 * ms, ""},
}

const ms = time.Millisecond

func metric(a analysis.Analysis, m string) time.Duration {
	s := a.Summary
	switch m {
	case "gap":
		return s.MaxGap
	case "overlap":
		return s.MaxOverlap
	case "stale":
		return s.MaxStale
	}
	panic(m)
}

// TestCalibration compares the virtual backend with the real one on the
// built-ins: within 5% or 100 ms (whichever is larger) of the real range,
// the criterion. Known deviations are logged, not failed.
func TestCalibration(t *testing.T) {
	for _, c := range calibration {
		// Seeds 1-4, as the README's four suite runs.
		lo, hi := time.Duration(1<<62), time.Duration(-1)
		for seed := int64(1); seed <= 4; seed++ {
			sc := builtin(t, c.scenario)
			sc.Seed = seed
			v := metric(run(t, sc, virtual.Options{}).Analysis, c.metric)
			lo, hi = min(lo, v), max(hi, v)
		}
		tol := max(100*ms, c.hi/20)
		ok := lo >= c.lo-tol && hi <= c.hi+tol
		t.Logf("%-26s %-8s virtual %v–%v  real %v–%v  %s", c.scenario, c.metric, lo.Round(ms), hi.Round(ms), c.lo, c.hi, map[bool]string{true: "ok", false: "DIFFERS"}[ok])
		if !ok {
			if c.note != "" {
				t.Logf("    known deviation: %s", c.note)
				continue
			}
			t.Errorf("%s %s: virtual %v–%v, real %v–%v (± %v)", c.scenario, c.metric, lo, hi, c.lo, c.hi, tol)
		}
	}
}

// TestClockDriftStartPhase explains clock-drift's deviation: replaying the
// start-up of the real run of 2026-11-30 (instances started at 84.4 ms,
// leader gained at 140.7 ms under a parallel suite) gives the real overlap
// (1.114 s) within 10 ms.
func TestClockDriftStartPhase(t *testing.T) {
	res := run(t, builtin(t, "clock-drift"), virtual.Options{StartAt: 84400 * time.Microsecond, StartStep: 100 * time.Microsecond, Warmup: 56 * time.Millisecond})
	if v, want := res.Analysis.Summary.MaxOverlap, 1114*ms; v < want-10*ms || v > want+10*ms {
		t.Errorf("overlap %v, real %v", v, want)
	}
}

// Removing a latency toxic lets what it holds through at once, as
// Toxiproxy's latency toxic does. In slow-redis-safe-elector the slow
// instance wins again 0.3 s before the heal and renews at once; its renewal,
// held by 2 s of latency, must land at the heal, before its guard would run
// out, so it keeps leading to the end (the real backend: failover 13.71 s,
// no second demotion). A model that kept the full latency demoted it at its
// guard and measured no failover at all.
func TestLatencyHealReleasesHeldMessages(t *testing.T) {
	e, ok := scenarios.Lookup("slow-redis-safe-elector")
	if !ok {
		t.Fatal("no slow-redis-safe-elector")
	}
	res, err := virtual.Run(e.Scenario, virtual.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := res.Analysis.Faults[0]
	if f.Failover == nil || (*f.Failover-13700*time.Millisecond).Abs() > 100*time.Millisecond {
		t.Fatalf("failover %v (%s), want ~13.7s as on the real backend", f.Failover, f.Note)
	}
	last := res.Analysis.Beliefs[len(res.Analysis.Beliefs)-1]
	if !last.Open || last.Start > 20*time.Second {
		t.Errorf("last belief %+v: want the leader won before the heal (20.25s) kept to the end", last.Window)
	}
}
