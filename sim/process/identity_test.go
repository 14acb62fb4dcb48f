package process_test

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/process"
	"github.com/leaselab/leaselab/sim/realtime"
)

// TestMain makes the test binary an agent when a test starts it as one
// (LEASELAB_IDTEST set: idAgent).
func TestMain(m *testing.M) {
	if style := os.Getenv("LEASELAB_IDTEST"); style != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := idAgent(ctx, style); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// idAgent is an elector agent whose ids the test chooses, as services
// outside leaselab choose theirs (LEASELAB_IDTEST):
//   - stable: "pod-<index>", the same across restarts (a pod or host name);
//   - shared: one id for every instance (a time-seeded id drawn by
//     electors started in the same microsecond);
//   - random-value: the hello announces "agent-<index>.<incarnation>" but
//     the key gets a fresh random value (redislock's and redsync's
//     defaults);
//   - fresh: a new random id per incarnation, announced and written
//     (leaselab's own elector).
func idAgent(ctx context.Context, style string) error {
	var sc model.Scenario
	if err := json.Unmarshal([]byte(os.Getenv("LEASELAB_SCENARIO")), &sc); err != nil {
		return fmt.Errorf("LEASELAB_SCENARIO: %w", err)
	}
	index, life := os.Getenv("LEASELAB_INSTANCE"), os.Getenv("LEASELAB_INCARNATION")
	ro := realtime.RedisOptions(sc.Params.Client, os.Getenv("LEASELAB_REDIS_ADDR"))
	ro.Username, ro.Password = os.Getenv("LEASELAB_REDIS_USERNAME"), os.Getenv("LEASELAB_REDIS_PASSWORD")
	ro.DB, _ = strconv.Atoi(os.Getenv("LEASELAB_REDIS_DB"))
	rdb := redis.NewClient(ro)
	defer rdb.Close()
	eo := realtime.ElectionOpts(sc.Params, rdb)
	eo.Key = os.Getenv("LEASELAB_GROUP")
	announce := ""
	switch style {
	case "stable":
		eo.ID = "pod-" + index
	case "shared":
		eo.ID = "shared-id"
	case "random-value":
		announce = "agent-" + index + "." + life
	case "fresh":
	default:
		return fmt.Errorf("LEASELAB_IDTEST=%q: want stable, shared, random-value or fresh", style)
	}
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	a := agent.New(agent.Options{Name: "id test agent (" + style + ")", OnStop: stop})
	e, promote, demote, errs := election.NewElector(eo)
	promote, demote, errs = a.Elector(e, promote, demote, errs)
	if err := a.Hello(cmpOr(announce, e.ID()), e.Key()); err != nil {
		return err
	}
	e.Start()
	// The signals are read throughout, the graceful stop's included, so
	// the elector is never blocked on them (agent.RunElector's loop).
	var stopped chan error
	done := stopCtx.Done()
	for {
		select {
		case <-promote:
		case <-demote:
		case <-errs:
		case <-a.Gone():
			if stopped == nil {
				return nil
			}
		case <-done:
			done = nil
			a.Stopping()
			stopped = make(chan error, 1)
			go func() { stopped <- e.Stop() }()
		case err := <-stopped:
			a.Stopped()
			return err
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// idBackend runs every instance as idAgent with ids of the given style.
func idBackend(t *testing.T, style string) process.Backend {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return process.Backend{Agent: []string{self, "-test.run=^$"}, Env: map[string]string{"LEASELAB_IDTEST": style}}
}

// runIDs runs sc with agents whose ids are of the given style; a harness
// error fails the test.
func runIDs(t *testing.T, sc model.Scenario, style string) *verdict.Result {
	t.Helper()
	res, err := runWithin(t, 30*time.Second, sc, idBackend(t, style))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("harness errors: %v", res.Errors)
	}
	return res
}

// Two instances; the leader crashes and restarts, then the new leader
// crashes: the restarted instance takes over. With ids stable across
// restarts the restarted process's hello and promotion count as they do
// with fresh ids: no gap left open, the spec's gap claim held.
func TestStableIDsAcrossRestarts(t *testing.T) {
	sc := model.Scenario{Name: "stable-ids", Instances: 2, Duration: 4 * time.Second, Recovery: 2 * time.Second,
		Params: model.Params{TTL: 600 * time.Millisecond, Wait: 300 * time.Millisecond, JitterMS: 5},
		Faults: []model.Fault{
			{At: 800 * time.Millisecond, For: 400 * time.Millisecond, Kind: model.FaultCrash, Target: model.Target{Role: "leader"}, Restart: true},
			{At: 2500 * time.Millisecond, Kind: model.FaultCrash, Target: model.Target{Role: "leader"}},
		}}
	for _, style := range []string{"fresh", "stable"} {
		t.Run(style, func(t *testing.T) {
			res := runIDs(t, sc, style)
			starts, lastCrash := map[int]int{}, time.Duration(0)
			for _, e := range res.Timeline {
				switch e.Kind {
				case model.InstanceStarted:
					starts[e.Instance]++
				case model.InstanceCrashed:
					lastCrash = e.At
				}
			}
			if starts[0]+starts[1] != 3 {
				t.Errorf("starts per index %v, want 3 in all (the restart's hello recorded)", starts)
			}
			led := false
			for _, b := range res.Analysis.Beliefs {
				led = led || b.Start > lastCrash
			}
			if !led {
				t.Errorf("no promotion after the last crash at %v: beliefs %+v", lastCrash, res.Analysis.Beliefs)
			}
			for _, g := range res.Analysis.Gaps {
				if g.Open {
					t.Errorf("gap %v still open at the end", g.Window)
				}
			}
			for _, c := range res.Analysis.Claims {
				if c.Name == analysis.ClaimGap && c.Verdict == analysis.NotHeld {
					t.Errorf("gap claim not held: %s", c.Detail)
				}
			}
			t.Logf("%s ids: max gap %v, gaps %d", style, res.Analysis.Summary.MaxGap, len(res.Analysis.Gaps))
		})
	}
}

// Agents sharing one id (shared) or writing a value their hello did not
// announce (random-value), on real processes: the leader crashes, the
// others' events all count (the crash silences only its own index), and
// the report names the shared or unannounced value, with stale leadership
// unknown rather than passed or failed.
func TestSharedAndUnannouncedIDsNamed(t *testing.T) {
	sc := model.Scenario{Name: "ids", Instances: 3, Duration: 3 * time.Second, Recovery: time.Second,
		Params: model.Params{TTL: 600 * time.Millisecond, Wait: 300 * time.Millisecond, JitterMS: 5},
		Faults: []model.Fault{{At: time.Second, Kind: model.FaultCrash, Target: model.Target{Role: "leader"}}},
		Expect: []model.Expectation{{Metric: "stale_leadership", Max: "10s"}}}
	for _, style := range []string{"shared", "random-value"} {
		t.Run(style, func(t *testing.T) {
			res := runIDs(t, sc, style)
			crashed, at := -1, time.Duration(0)
			for _, e := range res.Timeline {
				if e.Kind == model.InstanceCrashed {
					crashed, at = e.Instance, e.At
				}
			}
			after := 0
			for _, e := range res.Timeline {
				if e.At > at && e.Instance >= 0 && e.Instance != crashed {
					after++
				}
			}
			if crashed < 0 || after == 0 {
				t.Errorf("crash of %d at %v, then %d events of the others: want some", crashed, at, after)
			}
			id := res.Analysis.Identity
			switch style {
			case "shared":
				if len(id.Shared) != 1 || id.Shared[0].Value != "shared-id" || len(id.Shared[0].Instances) != 3 {
					t.Errorf("shared ids %+v, want shared-id named for instances 0, 1 and 2", id.Shared)
				}
			case "random-value":
				if len(id.Unannounced) == 0 || len(res.Analysis.Redis.Unknown) == 0 {
					t.Errorf("unannounced %+v, unknown %+v: want the key's values named and the leadership unjudged", id.Unannounced, res.Analysis.Redis.Unknown)
				}
			}
			if c := res.Checks[0]; c.Verdict != model.Unknown {
				t.Errorf("stale_leadership: %s (%s), want unknown", c.Verdict, c.Detail)
			}
			t.Logf("%s: %q; overlaps %d (max %v); stale %d (max %v); check: %s", style, id.Findings(), res.Analysis.Summary.Overlaps,
				res.Analysis.Summary.MaxOverlap, res.Analysis.Summary.StaleWindows, res.Analysis.Summary.MaxStale, res.Checks[0].Detail)
		})
	}
}

// Under a real SIGSTOP with a shared id, the twin takes the lease with the
// value both announced and the resumed leader renews it as its own: two
// leaders to the end. The overlap is measured (beliefs are per
// incarnation), the shared id named with it, and stale leadership, which
// cannot tell the twins' leases apart, is unknown, not a pass.
func TestSharedIDUnderPause(t *testing.T) {
	sc := model.Scenario{Name: "shared-pause", Instances: 2, Duration: 3 * time.Second, Recovery: time.Second,
		Params: model.Params{TTL: 600 * time.Millisecond, Wait: 300 * time.Millisecond, JitterMS: 5},
		Faults: []model.Fault{{At: 800 * time.Millisecond, For: 1500 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Role: "leader"}}},
		Expect: []model.Expectation{{Metric: "stale_leadership", Max: "10s"}}}
	res := runIDs(t, sc, "shared")
	id := res.Analysis.Identity
	if len(id.Shared) != 1 || id.Shared[0].Overlap == 0 || len(res.Analysis.Overlaps) == 0 {
		t.Errorf("shared %+v, overlaps %+v: want the twins' overlap measured and named", id.Shared, res.Analysis.Overlaps)
	}
	if c := res.Checks[0]; c.Verdict != model.Unknown {
		t.Errorf("stale_leadership: %s (%s), want unknown", c.Verdict, c.Detail)
	}
	t.Logf("%q; overlaps %d (max %v)", id.Findings(), res.Analysis.Summary.Overlaps, res.Analysis.Summary.MaxOverlap)
}
