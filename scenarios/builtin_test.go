package scenarios

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// required are the built-ins the suite must have.
var required = []string{
	"steady-state", "leader-crash", "follower-crash", "leader-stop", "renew-blip",
	"partition-blackhole", "partition-refuse", "partition-reset", "partition-one-way",
	"latency", "slow-redis", "clock-drift", "pause", "redis-restart", "script-flush",
	"rolling-restart", "thundering-herd", "flapping-network",
}

func TestBuiltinSuite(t *testing.T) {
	entries := Builtin()
	files, _ := filepath.Glob("builtin/*.yaml")
	if len(entries) != len(files) {
		t.Fatalf("%d entries for %d files", len(entries), len(files))
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
		t.Run(e.Name, func(t *testing.T) {
			onDisk, err := os.ReadFile(strings.TrimPrefix(e.File, "scenarios/"))
			if err != nil || string(onDisk) != string(e.Raw) {
				t.Errorf("%s is not the embedded file (%v)", e.File, err)
			}
			if e.Scenario.Name != e.Name || filepath.Base(e.File) != e.Name+".yaml" {
				t.Errorf("name %q, file %s", e.Scenario.Name, e.File)
			}
			if len(e.Description) < 100 || e.Description != e.Scenario.Description {
				t.Errorf("description too short or inconsistent: %q", e.Description)
			}
			if len(e.Scenario.Expect) == 0 {
				t.Error("no expectations: the run would pass whatever happened")
			}
			if !strings.Contains(string(readme), "| `"+e.Name+"` |") {
				t.Errorf("README.md's suite table does not list %s", e.Name)
			}
			checkPredictable(t, e.Scenario)
		})
	}
	for _, n := range required {
		if !slices.Contains(names, n) {
			t.Errorf("missing built-in %s", n)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("Builtin is not sorted by name: %v", names)
	}
}

// checkPredictable makes sure a "predicted" limit has a failure mode to be
// predicted from: without one the prediction is 0 and the limit is just the
// slack, which is never what the writer meant.
func checkPredictable(t *testing.T, sc model.Scenario) {
	t.Helper()
	modes := 0
	for _, f := range sc.Faults {
		if model.ModeOf(f.Kind, f.Mode) != "" {
			modes++
		}
	}
	for _, x := range sc.Expect {
		if x.Max == predicted && modes == 0 && len(sc.Faults) > 0 {
			t.Errorf("%s: predicted, but no fault maps to a failure mode of the bound calculator", x.Metric)
		}
	}
}

// TestBuiltinBudget keeps the suite within its time budget: at default
// settings it must finish within 5 minutes on 2 cores with 4 runs in
// parallel, setup included.
func TestBuiltinBudget(t *testing.T) {
	var total time.Duration
	for _, e := range Builtin() {
		sc := e.Scenario
		w := sc.WithDefaults()
		d, r := w.Duration, w.Recovery
		if sc.TimeScale != 0 {
			t.Errorf("%s sets time_scale; the suite's budget assumes real time", e.Name)
		}
		if d+r > 45*time.Second {
			t.Errorf("%s runs %v; keep each built-in within 45s", e.Name, d+r)
		}
		total += d + r
	}
	if total > 16*time.Minute {
		t.Errorf("the suite runs %v in all; with --parallel 4 on 2 cores it must stay well under 5 minutes (the default runs them all at once)", total)
	}
	t.Logf("suite: %v of run time", total)
}

// TestBuiltinTimings checks the suite uses the spec's timings and go-redis's
// defaults, except where changing them is the point.
func TestBuiltinTimings(t *testing.T) {
	spec := model.Params{JitterMS: model.DefaultJitterMS}
	for _, e := range Builtin() {
		p := e.Scenario.Params
		if e.Name == "partition-blackhole-tuned" {
			p.Client = model.ClientParams{}
		}
		if e.Name == "renew-blip" && p.Client.MaxRetries == 1 {
			// One retry, so that the blip fails the renewal at every time
			// scale: go-redis's three outlast it below about a third.
			p.Client.MaxRetries = 0
		}
		if strings.HasSuffix(e.Name, "-safe") || strings.HasSuffix(e.Name, "-safe-elector") {
			// Safe mode is the point of these; nothing else may change.
			if !p.Safe {
				t.Errorf("%s does not turn safe mode on", e.Name)
			}
			p.Safe = false
		}
		if p != spec {
			t.Errorf("%s changes the timings: %+v", e.Name, p)
		}
		sc := e.Scenario
		if sc.Mode == model.ModeRunner && (sc.Workload.DispatchRate <= 0 || sc.Workload.DelayedRate <= 0) {
			t.Errorf("%s runs runners without dispatched and delayed tasks", e.Name)
		}
	}
	for _, n := range []string{"leader-crash", "leader-stop", "rolling-restart"} {
		if e, _ := Lookup(n); e.Scenario.Mode != model.ModeRunner {
			t.Errorf("%s should run task runners", n)
		}
	}
}

func TestLookup(t *testing.T) {
	e, ok := Lookup("pause")
	if !ok || e.Name != "pause" || e.Scenario.Faults[0].Kind != model.FaultPause {
		t.Fatalf("Lookup(pause) = %+v, %v", e, ok)
	}
	if _, ok := Lookup("no-such"); ok {
		t.Error("Lookup(no-such) found something")
	}
	// Entries are copies.
	e.Scenario.Faults[0].Kind = model.FaultCrash
	e.Raw[0] = 'X'
	again, _ := Lookup("pause")
	if again.Scenario.Faults[0].Kind != model.FaultPause || again.Raw[0] == 'X' {
		t.Error("changing an entry changed the suite")
	}
}

func TestOpen(t *testing.T) {
	if sc, err := Open("leader-crash"); err != nil || sc.Name != "leader-crash" {
		t.Errorf("Open(name): %v %q", err, sc.Name)
	}
	if sc, err := Open("builtin/pause.yaml"); err != nil || sc.Name != "pause" {
		t.Errorf("Open(path): %v %q", err, sc.Name)
	}
	// A typo of a built-in's name: the name meant, and where all are
	// listed, in one line no cap cuts (the list of 32 was cut mid-word).
	for _, typo := range []string{"leader-krash", "leader-crsh", "partiton-blackhole"} {
		_, err := Open(typo)
		if err == nil || !strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "'chaos list'") ||
			Capped(err).Error() != err.Error() {
			t.Errorf("Open(%s): %v", typo, err)
		}
	}
	if _, err := Open("leader-krash"); err == nil || !strings.Contains(err.Error(), `did you mean "leader-crash"?`) {
		t.Errorf("Open(leader-krash): %v", err)
	}
	if _, err := Open("zzzz"); err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "'chaos list'") {
		t.Errorf("Open(zzzz): %v", err)
	}
	// A path: the file is not there, whatever built-in it resembles.
	for _, path := range []string{"./nope.yaml", "nope.yml", "ci/leader-crash", "leader-crash.yaml"} {
		if _, err := Open(path); err == nil || err.Error() != path+": scenario file not found" {
			t.Errorf("Open(%s): %v", path, err)
		}
	}
}

// TestBuiltinNoVacuousPass runs every built-in's expectations against
// timelines that measured nothing: an empty one, and one where the
// instances started, the scenario's targeted faults were skipped (no leader
// to hit) and the run ended. None may pass.
func TestBuiltinNoVacuousPass(t *testing.T) {
	for _, e := range Builtin() {
		t.Run(e.Name, func(t *testing.T) {
			sc := e.Scenario
			eff := sc
			eff.Params = sc.Params.WithDefaults()
			started := model.Timeline{}
			for i := range max(sc.Instances, 3) {
				started = append(started, model.Event{Kind: model.InstanceStarted, Instance: i, ID: fmt.Sprintf("id-%d", i)})
			}
			for i, f := range sc.Faults {
				ev := model.Event{At: f.At, Kind: model.FaultSkipped, Instance: -1, Fault: string(f.Kind), FaultID: i, Detail: "no leader"}
				started = append(started, ev)
			}
			end := model.Event{At: time.Minute, Kind: model.RunEnded, Instance: -1, Detail: "complete"}
			for name, tl := range map[string]model.Timeline{
				"empty":   {end},
				"skipped": append(started, end),
			} {
				a := analysis.Analyze(tl, eff.Params)
				ev := verdict.Evaluate(eff, a, bounds.Predict(eff.Params, bounds.AppliedFaultSize(eff, a)))
				if ev.Verdict == model.Pass {
					t.Errorf("%s timeline: the expectations pass a run that measured nothing", name)
				}
			}
		})
	}
}

// A listing's line is the description's first sentence, spaces collapsed;
// a description of one sentence is itself.
func TestEntrySummary(t *testing.T) {
	for desc, want := range map[string]string{
		"The leader\n  crashes. Then a follower takes over.": "The leader crashes.",
		"One sentence, no full stop":                         "One sentence, no full stop",
		"Ends here.":                                         "Ends here.",
		"v1.2 of it. Next.":                                  "v1.2 of it.",
	} {
		if got := (Entry{Description: desc}).Summary(); got != want {
			t.Errorf("%q: %q, want %q", desc, got, want)
		}
	}
}

// TestBuiltinsValidWithDefaults: a scenario with its defaults filled is as
// valid as it was (a run's result keeps it so, and `chaos run --runs N`
// runs it so), and bare electors made of it (as the virtual backend's tests
// run the runner-mode built-ins) are valid too.
func TestBuiltinsValidWithDefaults(t *testing.T) {
	for _, e := range Builtin() {
		if err := e.Scenario.WithDefaults().Validate(); err != nil {
			t.Errorf("%s with its defaults: %v", e.Name, err)
		}
		if err := e.Scenario.WithDefaults().AsElector().Validate(); err != nil {
			t.Errorf("%s as bare electors: %v", e.Name, err)
		}
	}
}
