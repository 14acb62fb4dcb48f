package scenarios

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/leaselab/leaselab/model"
)

// backendReal is the backend `chaos run` uses when neither --backend nor
// the scenario names one.
const backendReal = "real"

// modulePath is leaselab's module: a chaos built from it and run in its
// checkout is reproduced with `go run ./cmd/chaos`.
const modulePath = "github.com/leaselab/leaselab"

// Program is how a reproduce line names the chaos command: "go run
// ./cmd/chaos" when this program was built from leaselab's module and runs
// in the root of its checkout (the working directory's go.mod is
// leaselab's), where that command works; "chaos", as installed, anywhere
// else.
var Program = sync.OnceValue(func() string {
	main := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		main = bi.Main.Path
	}
	return programFor(main, goModModule("go.mod"))
})

// programFor is Program of a program built from the module mainPath, run
// where go.mod declares the module dirModule ("" without one).
func programFor(mainPath, dirModule string) string {
	if mainPath == modulePath && dirModule == modulePath {
		return "go run ./cmd/chaos"
	}
	return "chaos"
}

// goModModule is the module path the go.mod at path declares, "" if none.
func goModModule(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// Command is the `chaos run` command that re-runs sc with seed and time
// scale (0: 1) on backend, the one every report shows under "How to
// reproduce" (CommandOf). A scenario read from a file (its Source) is
// named by that path, with --safe as it ran; a built-in is named as such;
// any other scenario as the file <name>.yaml (its name quoted for a shell
// if need be), as `chaos explore` and a user's file name it; an unnamed
// one as the placeholder <scenario>.yaml. For a built-in, --safe is added
// when the run's safe mode is not the built-in's (for a file without a
// Source, when it is on), --strict-claims likewise, and --backend when
// backend is not the one the command would run without it (the scenario's
// own, or real); backend "" adds none. The program is Program's.
func Command(sc model.Scenario, seed int64, timeScale float64, backend string) string {
	return commandOf(sc, seed, timeScale, backend, nil)
}

func commandOf(sc model.Scenario, seed int64, timeScale float64, backend string, agent *verdict.RunAgent) string {
	c := line{sc: sc, seed: seed, timeScale: timeScale, backend: backend, agent: agent}
	switch e, builtin := Lookup(sc.Name); {
	case sc.Source != "":
		// The file as it was named: its safe mode may have been
		// overridden either way, which only the flag says.
		c.arg, c.safe, c.strict = ShellQuote(sc.Source), true, sc.StrictClaims
	case builtin && sc.Name != "":
		c.arg, c.safe, c.strict = sc.Name, sc.Params.Safe != e.Scenario.Params.Safe, sc.StrictClaims && !e.Scenario.StrictClaims
	case sc.Name == "":
		c.arg, c.safe, c.strict = "<scenario>.yaml", sc.Params.Safe, sc.StrictClaims
	default:
		c.arg, c.safe, c.strict = ShellQuote(sc.Name+".yaml"), sc.Params.Safe, sc.StrictClaims
	}
	return c.String()
}

// FileCommand is Command of sc read from the file at path (as `chaos
// explore` writes its worst schedules): the path quoted for a shell if
// need be, --safe on and --strict-claims when sc has them.
func FileCommand(path string, sc model.Scenario, seed int64, timeScale float64, backend string) string {
	return line{arg: ShellQuote(path), sc: sc, safe: sc.Params.Safe, strict: sc.StrictClaims, seed: seed, timeScale: timeScale, backend: backend}.String()
}

// line is a reproduce command: the scenario argument and the flags it needs.
type line struct {
	arg          string
	sc           model.Scenario
	safe, strict bool // give --safe, --strict-claims
	seed         int64
	timeScale    float64
	backend      string
	agent        *verdict.RunAgent
}

// String is the command line: the one place a reproduce line is made.
func (c line) String() string {
	ts := c.timeScale
	if ts == 0 {
		ts = 1
	}
	cmd := fmt.Sprintf("%s run %s --seed %d --time-scale %s", Program(), c.arg, c.seed, strconv.FormatFloat(ts, 'g', -1, 64))
	if c.safe {
		cmd += " --safe " + map[bool]string{true: "on", false: "off"}[c.sc.Params.Safe]
	}
	if c.strict {
		cmd += " --strict-claims"
	}
	if c.backend != "" && c.backend != nonEmpty(c.sc.Backend, backendReal) {
		cmd += " --backend " + c.backend
	}
	if c.agent != nil && c.agent.Override {
		cmd += " --agent " + ShellQuote(strings.Join(c.agent.Command, " "))
	}
	return cmd
}

// CommandOf is Command of the run res: its scenario, seed, time scale and
// backend ("": real), and --agent when the run's agent was the caller's
// (verdict.RunAgent.Override). An observed fleet's result, which no scenario
// ran, gets the command that rebuilds it from its recording
// (analysis.Observed.Command), or, kept by an older version without one,
// observe --from its recording beside the report.
func CommandOf(res *verdict.Result) string {
	if o := res.Observed; o != nil {
		return nonEmpty(o.Command, Program()+" observe --from "+analysis.ObservedRecording)
	}
	return commandOf(res.Scenario, res.Seed, res.TimeScale, nonEmpty(res.Backend, backendReal), res.Agent)
}

// ShellQuote quotes s for a POSIX shell unless it is made only of
// characters no shell treats specially.
func ShellQuote(s string) string {
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
