package reports

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/scenarios"
)

// virtualAbout is what the virtual backend says of itself (sim.Describer).
const virtualAbout = "discrete-event model of Redis, the network and go-redis around the production election.Machine, virtual time"

// A report says which backend made the run: in its facts (Markdown and
// HTML), its JUnit system-out and its reproducing command.
func TestBackendLabel(t *testing.T) {
	res := passing()
	res.Backend, res.BackendAbout, res.VirtualTime = "virtual", virtualAbout, true
	var md bytes.Buffer
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| Backend | virtual (discrete-event model", "--backend virtual"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	var page bytes.Buffer
	if err := HTML(&page, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "virtual (discrete-event model") {
		t.Error("report.html does not name the virtual backend")
	}
	var j bytes.Buffer
	if err := writeJUnit(&j, []junitInput{{res: res}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), "backend virtual, seed 7") {
		t.Errorf("JUnit system-out does not name the backend:\n%s", j.String())
	}
	// A backend reports have never heard of is named with its own words,
	// and its reproducing command names it.
	res.Backend, res.BackendAbout = "wasm", "instances as WebAssembly modules, wall-clock time"
	if f := factOf(build(res, Options{}).Facts, "Backend"); f != "wasm (instances as WebAssembly modules, wall-clock time)" {
		t.Errorf("fact of an unknown backend: %q", f)
	}
	if cmd := scenarios.CommandOf(res); !strings.HasSuffix(cmd, " --backend wasm") {
		t.Errorf("reproducing command of an unknown backend: %q", cmd)
	}
	// A result from before results named their backend was a real run.
	res.Backend, res.BackendAbout = "", ""
	if f := build(res, Options{}).Facts; !strings.Contains(factOf(f, "Backend"), "real") {
		t.Errorf("no backend recorded: fact %q, want real", factOf(f, "Backend"))
	}
}

func factOf(f [][2]string, name string) string {
	for _, kv := range f {
		if kv[0] == name {
			return kv[1]
		}
	}
	return ""
}

// A scenario the backend refused is listed as REFUSED with its reason and
// is a skipped JUnit testcase; the suite passes if every run that ran passed.
func TestSuiteRefused(t *testing.T) {
	dir := t.TempDir()
	ok := passing()
	ok.Backend, ok.VirtualTime = "virtual", true
	runs := []SuiteRun{
		{Result: ok, Dir: "leader-crash"},
		{Name: "steady-state", Refused: "virtual: runner mode is not modelled"},
	}
	if err := WriteSuite(dir, runs); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	for _, want := range []string{"**PASS**", "1 refused by the backend (not run)", "Backend: virtual.", "| steady-state | **REFUSED** |", "| exact |", // a run in virtual time measures its lateness exactly
		"not run: virtual: runner mode is not modelled"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if !strings.Contains(string(page), "REFUSED") || !strings.Contains(string(page), "Backend: virtual.") {
		t.Error("index.html does not show the refusal and the backend")
	}
	b, _ := os.ReadFile(filepath.Join(dir, FileJUnit))
	var j junitSuites
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	s := j.Suites[0]
	if s.Tests != 2 || s.Skipped != 1 || s.Failures != 0 || s.Errors != 0 {
		t.Fatalf("junit: tests %d skipped %d failures %d errors %d; want 2 1 0 0", s.Tests, s.Skipped, s.Failures, s.Errors)
	}
	if sk := s.Cases[1].Skipped; sk == nil || !strings.Contains(sk.Message, "runner mode is not modelled") {
		t.Errorf("refused case: skipped %+v", sk)
	}
	// Only refusals: nothing ran, nothing passed.
	if err := WriteSuite(dir, runs[1:]); err != nil {
		t.Fatal(err)
	}
	md, _ = os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(md), "**FAIL**") {
		t.Errorf("a suite in which nothing ran passed:\n%s", md)
	}
}

// --junit's file is JUnitRuns's XML; a path that cannot be written says
// what was being written.
func TestWriteJUnitRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := WriteJUnitRuns(path, []SuiteRun{{Result: passing()}, {Name: "steady-state", Refused: "not modelled"}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var j junitSuites
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if s := j.Suites[0]; s.Tests != 2 || s.Skipped != 1 || s.Failures != 0 {
		t.Errorf("junit: tests %d skipped %d failures %d; want 2 1 0", s.Tests, s.Skipped, s.Failures)
	}
	if err := WriteJUnitRuns(filepath.Join(t.TempDir(), "no", "such", "dir.xml"), nil); err == nil || !strings.HasPrefix(err.Error(), "writing JUnit: ") {
		t.Errorf("unwritable path: %v", err)
	}
}
