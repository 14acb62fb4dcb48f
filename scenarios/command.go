package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/leaselab/leaselab/model"
)

// backendReal is the backend `chaos run` uses when neither --backend nor
// the scenario names one.
const backendReal = "real"

// Command is the `chaos run` command that re-runs sc with seed and time
// scale (0: 1) on backend, the one every report shows under "How to
// reproduce". A built-in is named as such; any other scenario as the file
// <name>.yaml (its name quoted for a shell if need be), as `chaos explore`
// and a user's file name it; an unnamed one as the placeholder
// <scenario>.yaml. --safe is added when the run's safe mode is not the
// built-in's (for a file, when it is on), --strict-claims likewise, and
// --backend when backend is not the one the command would run without it
// (the scenario's own, or real); backend "" adds none.
func Command(sc model.Scenario, seed int64, timeScale float64, backend string) string {
	if e, ok := Lookup(sc.Name); ok && sc.Name != "" {
		safe := sc.Params.Safe != e.Scenario.Params.Safe
		strict := sc.StrictClaims && !e.Scenario.StrictClaims
		return command(sc.Name, sc, safe, strict, seed, timeScale, backend)
	}
	if sc.Name == "" {
		return command("<scenario>.yaml", sc, sc.Params.Safe, sc.StrictClaims, seed, timeScale, backend)
	}
	return FileCommand(sc.Name+".yaml", sc, seed, timeScale, backend)
}

// FileCommand is Command of sc read from the file at path (as `chaos
// explore` writes its worst schedules): the path quoted for a shell if
// need be, --safe on and --strict-claims when sc has them.
func FileCommand(path string, sc model.Scenario, seed int64, timeScale float64, backend string) string {
	return command(shellQuote(path), sc, sc.Params.Safe, sc.StrictClaims, seed, timeScale, backend)
}

// command is the command line of arg with the flags it needs.
func command(arg string, sc model.Scenario, safe, strict bool, seed int64, timeScale float64, backend string) string {
	if timeScale == 0 {
		timeScale = 1
	}
	cmd := fmt.Sprintf("go run ./cmd/chaos run %s --seed %d --time-scale %s", arg, seed, strconv.FormatFloat(timeScale, 'g', -1, 64))
	if safe {
		cmd += " --safe " + map[bool]string{true: "on", false: "off"}[sc.Params.Safe]
	}
	if strict {
		cmd += " --strict-claims"
	}
	if backend != "" && backend != nonEmpty(sc.Backend, backendReal) {
		cmd += " --backend " + backend
	}
	return cmd
}

// CommandOf is Command of the run res: its scenario, seed, time scale and
// backend ("": real). An observed fleet's result, which no backend made,
// gets no --backend.
func CommandOf(res *model.Result) string {
	backend := nonEmpty(res.Backend, backendReal)
	if res.Observed != nil {
		backend = ""
	}
	return Command(res.Scenario, res.Seed, res.TimeScale, backend)
}

// shellQuote quotes s for a POSIX shell unless it is made only of
// characters no shell treats specially.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func nonEmpty(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
