package process_test

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/process"
	"github.com/leaselab/leaselab/sim/real"
)

// errorsNaming returns the run's errors that contain every one of subs.
func errorsNaming(res *verdict.Result, subs ...string) []string {
	var out []string
next:
	for _, e := range res.Errors {
		for _, s := range subs {
			if !strings.Contains(e, s) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// TestSilentDelayedStartIsAnError: a delayed start whose agent never says
// hello is in the run's errors, naming it, and the run does not pass. The
// recovery waits for its start-up (up to the hello timeout, 15 s), so it
// is the timeout that ends it. Before, the run's end killed it and threw
// its error away: errors [], complete, the instance never ran.
func TestSilentDelayedStartIsAnError(t *testing.T) {
	sc := short()
	sc.Starts = []time.Duration{0, 0, 1500 * time.Millisecond}
	b := process.Backend{Agent: []string{"sh", "-c", `if [ "$LEASELAB_INSTANCE" = 2 ]; then exec sleep 30; fi; ` + shHello + `; exec sleep 30`}}
	res, err := runWithin(t, 40*time.Second, sc, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(errorsNaming(res, "instance 2", "no hello within 15s", "is its stdout buffered?", "flush=True")) != 1 {
		t.Errorf("errors %q: want instance 2's missing hello, asking whether its stdout is buffered", res.Errors)
	}
	if res.Verdict == model.Pass {
		t.Errorf("verdict %s: an instance that never ran measured nothing", res.Verdict)
	}
	assertNoAgents(t)
	assertNoZombies(t)
}

// TestFailedDelayedHelloIsAnError: a delayed start whose agent fails at
// its hello (a line that is not one; a hello lacking the clock capability
// the scenario's clock fault needs) is in the run's errors naming it, and
// the run goes on with the others: complete, electing, a harness error
// failing it.
func TestFailedDelayedHelloIsAnError(t *testing.T) {
	clockHello := `echo "{\"type\":\"hello\",\"protocol\":1,\"id\":\"sh-$LEASELAB_INSTANCE-$$\",\"key\":\"$LEASELAB_KEY\",\"capabilities\":[\"clock\"]}"`
	for _, c := range []struct {
		name, agent, want string
		faults            []model.Fault
	}{
		{"not a hello", `if [ "$LEASELAB_INSTANCE" = 2 ]; then echo 'not a hello'; exec sleep 30; fi; ` + shHello + `; exec sleep 30`, "hello", nil},
		{"missing capability", `if [ "$LEASELAB_INSTANCE" = 2 ]; then ` + shHello + `; exec sleep 30; fi; ` + clockHello + `; exec sleep 30`, `does not declare the "clock" capability`,
			[]model.Fault{{At: 2500 * time.Millisecond, For: 200 * time.Millisecond, Kind: model.FaultClock, Rate: 0.5, Target: model.Target{Indexes: []int{2}}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := short(c.faults...)
			sc.Starts = []time.Duration{0, 0, time.Second}
			res, err := runWithin(t, 30*time.Second, sc, process.Backend{Agent: []string{"sh", "-c", c.agent}})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) != 1 || len(errorsNaming(res, "instance 2", c.want)) != 1 {
				t.Errorf("errors %q: want instance 2's failed hello (%s), only", res.Errors, c.want)
			}
			if !res.Complete || res.Verdict != model.Fail {
				t.Errorf("complete %v, verdict %s: want the run gone on, failed by the harness error", res.Complete, res.Verdict)
			}
			for _, e := range res.Timeline {
				if e.Instance == 2 && e.Kind == model.InstanceStarted {
					t.Errorf("instance 2 recorded started: %+v", e)
				}
				if e.FaultID == 0 && e.Kind == model.FaultApplied {
					t.Errorf("the clock fault was applied to an instance not running: %+v", e)
				}
			}
			assertNoAgents(t)
			assertNoZombies(t)
		})
	}
}

// TestFaultsOnAStartingAgent: a crash or stop of an index whose agent is
// still starting (launched, no hello) kills it, records nothing of it and
// reports nothing (the fault ended it); a pause or clock fault of it is
// skipped, the timeline saying why. Before, the pause was recorded applied
// while nothing was paused.
func TestFaultsOnAStartingAgent(t *testing.T) {
	for _, kind := range []model.FaultKind{model.FaultCrash, model.FaultStop} {
		t.Run(string(kind), func(t *testing.T) {
			sc := short(
				model.Fault{At: 1200 * time.Millisecond, For: 200 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Indexes: []int{2}}},
				model.Fault{At: 1600 * time.Millisecond, Kind: kind, Target: model.Target{Indexes: []int{2}}},
			)
			sc.Starts = []time.Duration{0, 0, time.Second}
			b := process.Backend{Agent: []string{"sh", "-c", `if [ "$LEASELAB_INSTANCE" = 2 ]; then exec sleep 30; fi; ` + shHello + `; exec sleep 30`}}
			res, err := runWithin(t, 30*time.Second, sc, b)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) > 0 {
				t.Errorf("errors %q: want none (the fault ended the starting agent)", res.Errors)
			}
			skipped := false
			for _, e := range res.Timeline {
				switch {
				case e.Instance == 2:
					t.Errorf("instance 2 never started, yet %+v", e)
				case e.FaultID == 0 && e.Kind == model.FaultApplied:
					t.Errorf("the pause was recorded applied to a starting agent: %+v", e)
				case e.FaultID == 0 && e.Kind == model.FaultSkipped:
					skipped = strings.Contains(e.Detail, "instance [2] not running")
				}
			}
			if !skipped {
				t.Error("no fault-skipped for the pause saying instance 2 is not running")
			}
			assertNoAgents(t)
			assertNoZombies(t)
		})
	}
}

// overlapping is the schedule of two restarts of one index overlapping:
// the first heals (restarts it) at 1.5 s, the second at 1.6 s, while the
// first's restarted agent is still starting (0.5 s to say hello).
// Validate refuses it on fixed indexes (a crash cannot hit an instance a
// restart has down), so it is run unvalidated: role targets resolved at
// run time can still make it.
func overlapping() model.Scenario {
	return short(
		model.Fault{At: 500 * time.Millisecond, For: time.Second, Kind: model.FaultCrash, Restart: true, Target: model.Target{Indexes: []int{2}}},
		model.Fault{At: time.Second, For: 600 * time.Millisecond, Kind: model.FaultCrash, Restart: true, Target: model.Target{Indexes: []int{2}}},
	)
}

// TestOverlappingRestarts: the second restart of an index already started
// again is not done (its heal says why), on agent processes as in-process:
// one restarted incarnation, recorded, and nothing left running. Before,
// the second start overwrote the first's incarnation, which ran on past
// the run, unrecorded and never reaped.
func TestOverlappingRestarts(t *testing.T) {
	b := process.Backend{Agent: []string{"sh", "-c", `if [ "$LEASELAB_INCARNATION" -gt 1 ]; then sleep 0.5; fi; ` + shHello + `; exec sleep 30`}}
	for _, c := range []struct {
		name string
		b    sim.Backend
	}{{"process", b}, {"in-process", real.Backend{}}} {
		t.Run(c.name, func(t *testing.T) {
			res, err := sim.RunUnvalidated(context.Background(), overlapping(), c.b, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) > 0 {
				t.Errorf("errors %q", res.Errors)
			}
			starts, noted := 0, false
			for _, e := range res.Timeline {
				switch {
				case e.Instance == 2 && e.Kind == model.InstanceStarted:
					starts++
				case e.FaultID == 1 && e.Kind == model.FaultHealed:
					noted = strings.Contains(e.Detail, "instance [2] not restarted")
				}
			}
			if starts != 2 {
				t.Errorf("instance 2 started %d times, want 2 (at the start, one restart)", starts)
			}
			if !noted {
				t.Error("the second restart's heal does not say it did not restart instance 2")
			}
			assertNoAgents(t)
			assertNoZombies(t)
		})
	}
}

// TestRecoveryAfterTheLastStartUp: the recovery is counted from when a
// restart healed at the end began running, not from its launch: an agent
// 1.5 s to say hello, restarted at the end of a run with 2 s of recovery,
// still has 2 s of it. Before, its start-up ate 1.5 s of the recovery.
func TestRecoveryAfterTheLastStartUp(t *testing.T) {
	// No For: healed at the end of the fault phase (3 s).
	sc := short(model.Fault{At: 2 * time.Second, Kind: model.FaultCrash, Restart: true, Target: model.Target{Indexes: []int{2}}})
	b := process.Backend{Agent: []string{"sh", "-c", `if [ "$LEASELAB_INCARNATION" -gt 1 ]; then sleep 1.5; fi; ` + shHello + `; exec sleep 30`}}
	res, err := runWithin(t, 30*time.Second, sc, b)
	if err != nil {
		t.Fatal(err)
	}
	var started, ended time.Duration = -1, -1
	for _, e := range res.Timeline {
		switch {
		case e.Instance == 2 && e.Kind == model.InstanceStarted:
			started = e.At
		case e.Kind == model.RunEnded:
			ended = e.At
		}
	}
	if started < sc.Duration || ended-started < sc.Recovery {
		t.Errorf("instance 2 restarted at %v, the run ended at %v: want its restart after %v, then the whole %v of recovery", started, ended, sc.Duration, sc.Recovery)
	}
}

// TestCancelDuringStartUpKeepsAFailure: a Prestart that failed on its own
// (instance 1 exits before its hello) while another still starts (instance
// 0, silent) is in the run's error with the cancel that came after it.
// Before, ctx's error alone was returned.
func TestCancelDuringStartUpKeepsAFailure(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "pid1")
	b := process.Backend{
		Agent: []string{"sh", "-c", `case $LEASELAB_INSTANCE in 0) exec sleep 30;; 1) echo $$ > "$MARK.tmp"; mv "$MARK.tmp" "$MARK"; echo gone >&2; exit 3;; esac; ` + shHello + `; exec sleep 30`},
		Env:   map[string]string{"MARK": mark},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		// Cancelled once instance 1's agent was reaped (its /proc entry
		// gone): the harness read its failure.
		defer cancel()
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			pid, err := os.ReadFile(mark)
			if err != nil {
				continue
			}
			if _, err := os.Stat("/proc/" + strings.TrimSpace(string(pid))); os.IsNotExist(err) {
				return
			}
		}
	})
	_, err := runWithinCtx(ctx, t, 30*time.Second, short(), b, sim.Options{})
	if !errors.Is(err, context.Canceled) || err == nil || !strings.Contains(err.Error(), "instance 1") {
		t.Errorf("error %v: want ctx's and instance 1's", err)
	}
	assertNoAgents(t)
	assertNoZombies(t)
}

// TestRestartAfterAStopDoesNotDelayTheFaults: the heal of a stop with
// restart does not wait on the schedule for the stop to wind down. Instance
// 0 ignores SIGTERM (its stop lasts TTL + 5 s, until the harness kills it);
// the pause due at 1 s on instance 1 is applied on time, before instance 0
// is down, and instance 0 starts again only once it is down. Before, the
// heal at 0.8 s held the schedule until instance 0 was killed, and the
// pause came 5 s late.
func TestRestartAfterAStopDoesNotDelayTheFaults(t *testing.T) {
	sc := short(
		model.Fault{At: 500 * time.Millisecond, For: 300 * time.Millisecond, Kind: model.FaultStop, Restart: true, Target: model.Target{Indexes: []int{0}}},
		model.Fault{At: time.Second, For: 300 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Indexes: []int{1}}},
	)
	b := process.Backend{Agent: shAgent(`trap "" TERM; while :; do sleep 1; done`), Env: hostile(t)}
	res, err := runWithin(t, 30*time.Second, sc, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || len(errorsNaming(res, "instance 0", "after SIGTERM: killed")) != 1 {
		t.Errorf("errors %q: want instance 0's stop ended by the kill, only", res.Errors)
	}
	var healed, paused, stopped, restarted time.Duration = -1, -1, -1, -1
	starts := 0
	for _, e := range res.Timeline {
		switch {
		case e.Kind == model.FaultHealed && e.FaultID == 0:
			healed = e.At
		case e.Kind == model.FaultApplied && e.FaultID == 1:
			paused = e.At
		case e.Kind == model.InstanceStopped && e.Instance == 0:
			stopped = e.At
		case e.Kind == model.InstanceStarted && e.Instance == 0:
			if starts++; starts == 2 {
				restarted = e.At
			}
		}
	}
	if healed < 0 || paused < 0 || stopped < 0 || restarted < 0 {
		t.Fatalf("heal %v, pause %v, stopped %v, restarted %v: want each", healed, paused, stopped, restarted)
	}
	if !(healed < stopped && paused < stopped && stopped < restarted) {
		t.Errorf("stop's heal at %v, the pause at %v, instance 0 down at %v and restarted at %v: want the heal and the pause before it is down, the restart after",
			healed, paused, stopped, restarted)
	}
	assertNoZombies(t)
}
