package scenarios

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/model"
)

// The reproducing command names a built-in as such and any other scenario
// as its file, quoted for a shell if need be.
func TestCommandNamesABuiltinOrAFile(t *testing.T) {
	for name, want := range map[string]string{
		"leader-crash":     "run leader-crash --seed",
		"partition-leader": "run partition-leader.yaml --seed",
		"my test; rm -r":   `run 'my test; rm -r.yaml' --seed`,
		"it's":             `run 'it'\''s.yaml' --seed`,
		"":                 "run <scenario>.yaml --seed",
	} {
		got := Command(model.Scenario{Name: name}, 1, 1, "real")
		if !strings.Contains(got, want) {
			t.Errorf("%q: %s; want %s", name, got, want)
		}
	}
}

// --safe and --strict-claims appear when the run's differ from what the
// command would run without them; --backend when it is not the scenario's
// own (or real).
func TestCommandFlags(t *testing.T) {
	builtin := func(name string) model.Scenario {
		e, ok := Lookup(name)
		if !ok {
			t.Fatalf("no built-in %s", name)
		}
		return e.Scenario
	}
	pause, pauseSafe := builtin("pause"), builtin("pause-safe")
	pause.Params.Safe = true
	pauseSafe.Params.Safe = false
	strict := builtin("leader-crash")
	strict.StrictClaims = true
	file := model.Scenario{Name: "mine", Backend: "virtual", StrictClaims: true}
	file.Params.Safe = true
	for _, tc := range []struct {
		sc      model.Scenario
		scale   float64
		backend string
		want    string
	}{
		{builtin("pause"), 0, "real", "chaos run pause --seed 7 --time-scale 1"},
		{builtin("pause"), 0.2, "virtual", "chaos run pause --seed 7 --time-scale 0.2 --backend virtual"},
		{pause, 1, "real", "chaos run pause --seed 7 --time-scale 1 --safe on"},
		{pauseSafe, 1, "real", "chaos run pause-safe --seed 7 --time-scale 1 --safe off"},
		{builtin("pause-safe"), 1, "real", "chaos run pause-safe --seed 7 --time-scale 1"},
		{strict, 1, "real", "chaos run leader-crash --seed 7 --time-scale 1 --strict-claims"},
		{file, 1, "virtual", "chaos run mine.yaml --seed 7 --time-scale 1 --safe on --strict-claims"},
		// A file written for the virtual backend, run on the real one:
		// without --backend the command would run it virtually.
		{file, 1, "real", "chaos run mine.yaml --seed 7 --time-scale 1 --safe on --strict-claims --backend real"},
		{builtin("pause"), 1, "", "chaos run pause --seed 7 --time-scale 1"},
	} {
		if got := Command(tc.sc, 7, tc.scale, tc.backend); got != tc.want {
			t.Errorf("%s on %q:\n got %s\nwant %s", tc.sc.Name, tc.backend, got, tc.want)
		}
	}
}

// A result's command: its backend ("" is real); an observed fleet's, the
// observe command kept with it, or observe --from its recording beside
// the report (a result kept without one).
func TestCommandOf(t *testing.T) {
	res := &verdict.Result{Scenario: model.Scenario{Name: "pause"}, Seed: 3, TimeScale: 0.5, Backend: "wasm"}
	if got := CommandOf(res); got != "chaos run pause --seed 3 --time-scale 0.5 --backend wasm" {
		t.Errorf("wasm: %s", got)
	}
	res.Backend = ""
	if got := CommandOf(res); strings.Contains(got, "--backend") {
		t.Errorf("no backend recorded (a real run): %s", got)
	}
	res.Backend, res.Observed = "observe", &analysis.Observed{}
	if got := CommandOf(res); got != "chaos observe --from observed.jsonl" {
		t.Errorf("observed, no command kept: %s", got)
	}
	res.Observed.Command = "chaos observe --from day/observed.jsonl --max-overlap 1s"
	if got := CommandOf(res); got != res.Observed.Command {
		t.Errorf("observed: %s", got)
	}
}

// A file's command names its path, quoted if need be, with the safe mode
// and strict claims it has.
func TestFileCommand(t *testing.T) {
	sc := model.Scenario{Name: "pause-worst-overlap", StrictClaims: true}
	if got, want := FileCommand("out/pause/worst-overlap.yaml", sc, 4, 0.5, "virtual"),
		"chaos run out/pause/worst-overlap.yaml --seed 4 --time-scale 0.5 --strict-claims --backend virtual"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := FileCommand("my dir/w.yaml", sc, 1, 1, "real"); !strings.Contains(got, "run 'my dir/w.yaml' --seed") {
		t.Errorf("unquoted path: %s", got)
	}
}

// A user's file named like a built-in (chaos init writes leader-crash.yaml)
// is rerun from its path, not as the built-in, with the safe mode it ran.
func TestCommandRerunsTheUsersFileNamedLikeABuiltin(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "leader-crash.yaml")
	if err := os.WriteFile(path, []byte("name: leader-crash\ninstances: 2\nelector: {ttl: 2s, wait: 3s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	res := &verdict.Result{Scenario: sc, Seed: 1, TimeScale: 1, Backend: "real"}
	if got, want := CommandOf(res), "chaos run "+path+" --seed 1 --time-scale 1 --safe off"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	rel := &verdict.Result{Scenario: model.Scenario{Name: "leader-crash", Source: "my suite/leader-crash.yaml"}, Seed: 2}
	if got := CommandOf(rel); !strings.Contains(got, "run 'my suite/leader-crash.yaml' --seed 2") {
		t.Errorf("a path with a space: %s", got)
	}
}

// The agent a caller gave (--agent) is in the line, quoted for a shell as
// one argument; the scenario's own or the default agent is not.
func TestCommandQuotesTheAgent(t *testing.T) {
	res := &verdict.Result{Scenario: model.Scenario{Name: "pause"}, Seed: 3, TimeScale: 1, Backend: "process",
		Agent: &verdict.RunAgent{Command: []string{"/usr/bin/python3", "x.py"}, Override: true}}
	if got, want := CommandOf(res), "chaos run pause --seed 3 --time-scale 1 --backend process --agent '/usr/bin/python3 x.py'"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	res.Agent.Command = []string{"./agent", "it's"}
	if got := CommandOf(res); !strings.HasSuffix(got, `--agent './agent it'\''s'`) {
		t.Errorf("a quote in the agent: %s", got)
	}
	res.Agent.Override = false
	if got := CommandOf(res); strings.Contains(got, "--agent") {
		t.Errorf("the default agent: %s", got)
	}
}

// go run ./cmd/chaos only where it works: leaselab's own build, run in its
// checkout; chaos as installed elsewhere (and for these tests, which run in
// a package directory).
func TestProgram(t *testing.T) {
	for _, tc := range []struct{ main, dir, want string }{
		{modulePath, modulePath, "go run ./cmd/chaos"},
		{modulePath, "", "chaos"},
		{modulePath, "example.com/theirs", "chaos"},
		{"example.com/theirs", modulePath, "chaos"},
	} {
		if got := programFor(tc.main, tc.dir); got != tc.want {
			t.Errorf("built from %q in %q: %s", tc.main, tc.dir, got)
		}
	}
	if got := goModModule("../go.mod"); got != modulePath {
		t.Errorf("../go.mod declares %q", got)
	}
	if got := Program(); got != "chaos" {
		t.Errorf("in a package directory: %s", got)
	}
}
