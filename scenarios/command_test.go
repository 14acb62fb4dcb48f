package scenarios

import (
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
		{builtin("pause"), 0, "real", "go run ./cmd/chaos run pause --seed 7 --time-scale 1"},
		{builtin("pause"), 0.2, "virtual", "go run ./cmd/chaos run pause --seed 7 --time-scale 0.2 --backend virtual"},
		{pause, 1, "real", "go run ./cmd/chaos run pause --seed 7 --time-scale 1 --safe on"},
		{pauseSafe, 1, "real", "go run ./cmd/chaos run pause-safe --seed 7 --time-scale 1 --safe off"},
		{builtin("pause-safe"), 1, "real", "go run ./cmd/chaos run pause-safe --seed 7 --time-scale 1"},
		{strict, 1, "real", "go run ./cmd/chaos run leader-crash --seed 7 --time-scale 1 --strict-claims"},
		{file, 1, "virtual", "go run ./cmd/chaos run mine.yaml --seed 7 --time-scale 1 --safe on --strict-claims"},
		// A file written for the virtual backend, run on the real one:
		// without --backend the command would run it virtually.
		{file, 1, "real", "go run ./cmd/chaos run mine.yaml --seed 7 --time-scale 1 --safe on --strict-claims --backend real"},
		{builtin("pause"), 1, "", "go run ./cmd/chaos run pause --seed 7 --time-scale 1"},
	} {
		if got := Command(tc.sc, 7, tc.scale, tc.backend); got != tc.want {
			t.Errorf("%s on %q:\n got %s\nwant %s", tc.sc.Name, tc.backend, got, tc.want)
		}
	}
}

// A result's command: its backend ("" is real); an observed fleet's none.
func TestCommandOf(t *testing.T) {
	res := &model.Result{Scenario: model.Scenario{Name: "pause"}, Seed: 3, TimeScale: 0.5, Backend: "wasm"}
	if got := CommandOf(res); got != "go run ./cmd/chaos run pause --seed 3 --time-scale 0.5 --backend wasm" {
		t.Errorf("wasm: %s", got)
	}
	res.Backend = ""
	if got := CommandOf(res); strings.Contains(got, "--backend") {
		t.Errorf("no backend recorded (a real run): %s", got)
	}
	res.Backend, res.Observed = "observe", &model.Observed{}
	if got := CommandOf(res); strings.Contains(got, "--backend") {
		t.Errorf("observed: %s", got)
	}
}

// A file's command names its path, quoted if need be, with the safe mode
// and strict claims it has.
func TestFileCommand(t *testing.T) {
	sc := model.Scenario{Name: "pause-worst-overlap", StrictClaims: true}
	if got, want := FileCommand("out/pause/worst-overlap.yaml", sc, 4, 0.5, "virtual"),
		"go run ./cmd/chaos run out/pause/worst-overlap.yaml --seed 4 --time-scale 0.5 --strict-claims --backend virtual"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := FileCommand("my dir/w.yaml", sc, 1, 1, "real"); !strings.Contains(got, "run 'my dir/w.yaml' --seed") {
		t.Errorf("unquoted path: %s", got)
	}
}
