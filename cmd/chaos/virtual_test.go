package main

import (
	"github.com/leaselab/leaselab/model/bounds"

	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
)

// --backend virtual runs a built-in in virtual time and writes the same
// reports, which name the backend.
func TestVirtualRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := chaos(t, "run", "partition-blackhole", "--backend", "virtual", "--seed", "3", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	latest := filepath.Join(dir, "partition-blackhole", "latest")
	res, err := reports.ReadResult(filepath.Join(latest, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Backend != "virtual" || res.Seed != 3 {
		t.Fatalf("stored result: backend %q seed %d", res.Backend, res.Seed)
	}
	md, _ := os.ReadFile(filepath.Join(latest, "report.md"))
	for _, want := range []string{"| Backend | virtual", "--seed 3 --time-scale 1 --backend virtual"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	junit, _ := os.ReadFile(filepath.Join(latest, "junit.xml"))
	if !strings.Contains(string(junit), "backend virtual, seed 3") {
		t.Errorf("junit.xml does not name the backend:\n%s", junit)
	}
	// A failing expectation fails on the virtual backend too.
	if code, out, _ := chaos(t, "run", "testdata/impossible.yaml", "--backend", "virtual", "--out", t.TempDir(), "--quiet"); code != exitFailed || !strings.Contains(out, "leader_changes") {
		t.Errorf("impossible.yaml on the virtual backend: exit %d, want 1 naming leader_changes\n%s", code, out)
	}
}

// Flags that cannot apply to the virtual backend are usage errors, with
// the reason.
func TestVirtualRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "partition-blackhole", "--runs", "10"}, "a real run takes"},
		{[]string{"run", "partition-blackhole", "--backend", "real", "--runs", "3"}, "--backend virtual"},
		{[]string{"run", "partition-blackhole", "--backend", "virtual", "--runs", "0"}, "at least 1"},
		{[]string{"run", "partition-blackhole", "--backend", "virtual", "--redis-addr", "127.0.0.1:1"}, "--redis-addr"},
		{[]string{"run", "partition-blackhole", "--backend", "simulated"}, "none of real, virtual, process"},
		{[]string{"suite", "--backend", "virtual", "--runs", "3"}, "-runs"},
		{[]string{"run", "partition-blackhole", "--backend", "virtual", "--safe", "maybe"}, "want on or off"},
	} {
		code, _, errOut := chaos(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("chaos %v: exit %d, want 2 saying %q\n%s", c.args, code, c.want, errOut)
		}
	}
}

// The whole built-in suite on the virtual backend: every built-in runs,
// runner mode included (none refused, none skipped in JUnit), and the exit
// code is 0 exactly when every scenario passed (whether each built-in
// passes on the virtual backend is virtual's TestBuiltinsPass).
func TestVirtualSuite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	code, out, errOut := chaos(t, "suite", "--backend", "virtual", "--out", dir, "--quiet")
	t.Logf("virtual suite: %v\n%s", time.Since(start).Round(time.Millisecond), out)
	all := len(scenarios.Builtin())
	failed := strings.Count(out, ": FAIL ") + strings.Count(out, ": UNKNOWN ")
	switch {
	case failed == 0 && code != exitOK:
		t.Fatalf("every virtual run passed: exit %d, want 0\n%s\n%s", code, out, errOut)
	case failed > 0 && code != exitFailed:
		t.Fatalf("%d virtual runs did not pass: exit %d, want 1\n%s", failed, code, errOut)
	case failed > 0:
		t.Logf("%d built-ins did not pass on the virtual backend (virtual's TestBuiltinsPass says which)", failed)
	}
	if n := strings.Count(out, "report: "); n != all {
		t.Errorf("%d reports written, want one per built-in (%d)", n, all)
	}
	if !strings.Contains(out, "on the virtual backend") || strings.Contains(out, "REFUSED") {
		t.Errorf("output does not name the backend, or refuses a built-in:\n%s", out)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	for _, want := range []string{"Backend: virtual.", "[steady-state](steady-state/"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	var j struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Skipped  int `xml:"skipped,attr"`
			Failures int `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if s := j.Suites[0]; s.Skipped != 0 || s.Failures != failed || s.Tests != all {
		t.Errorf("junit: tests %d skipped %d failures %d; want %d, 0, %d", s.Tests, s.Skipped, s.Failures, all, failed)
	}
}

// --runs N prints the distribution's table and writes it (sweep.Seeds,
// whose tests hold its determinism and files) where the table says.
func TestRunsDistribution(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, out, errOut := chaos(t, "run", "partition-blackhole", "--backend", "virtual", "--runs", "300", "--seed", "11", "--out", dir)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "max_overlap") || !strings.Contains(out, "300 runs on the virtual backend") {
		t.Errorf("no distribution table:\n%s", out)
	}
	run := filepath.Join(dir, "partition-blackhole", "runs-11-310")
	if !strings.Contains(out, "distribution: "+filepath.Join(run, reports.FileDistHTML)) {
		t.Errorf("the table does not say where the distribution is:\n%s", out)
	}
	b, err := os.ReadFile(filepath.Join(run, reports.FileDistJSON))
	if err != nil {
		t.Fatal(err)
	}
	var d reports.Distribution
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	for _, m := range d.Metrics {
		if m.Name == "max_overlap" && (!strings.Contains(m.ReproduceReal, "--seed") || strings.Contains(m.ReproduceReal, "virtual")) {
			t.Errorf("max_overlap: real replay %q", m.ReproduceReal)
		}
	}
	// Runs that fail make the sweep exit 1 and are counted per expectation.
	dir = t.TempDir()
	code, out, _ = chaos(t, "run", "testdata/impossible.yaml", "--backend", "virtual", "--runs", "20", "--out", dir, "--quiet")
	if code != exitFailed || !strings.Contains(out, "expectation leader_changes") {
		t.Errorf("failing sweep: exit %d, want 1 naming the expectation\n%s", code, out)
	}
}

// BenchmarkRuns10k is the speed target through the CLI: 10,000
// seeded runs of partition-blackhole with the distribution files written
// (target < 10 s on 2 cores). A benchmark, not a test: a timed assertion
// would only measure how busy the machine is.
//
//	go test -run '^$' -bench Runs10k -benchtime 1x ./cmd/chaos
func BenchmarkRuns10k(b *testing.B) {
	for b.Loop() {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"run", "partition-blackhole", "--backend", "virtual", "--runs", "10000", "--out", b.TempDir(), "--quiet"}, &out, &errOut); code != exitOK {
			b.Fatalf("exit %d\n%s", code, errOut.String())
		}
	}
}

// run and suite --check-bounds search each scenario's schedule: a check
// whose predicted bound the search beat is unknown, naming the explored
// worst and the schedule it wrote, never a pass against a bound the tool
// itself just broke. The bound is made too low here (the blackhole's
// overlap at 1 s, which the run measures 5.5 s against the real 7.565 s):
// the sound formulas have no schedule known to beat them.
func TestCheckBoundsDistrustsABeatenBound(t *testing.T) {
	searchPredict = func(p model.Params, s model.FaultSize) []bounds.Prediction {
		preds := bounds.Predict(p, s)
		for i := range preds {
			if preds[i].Mode == model.ModePartitionBlackhole {
				preds[i].MaxOverlap, preds[i].OverlapFormula = time.Second, "too low: 1s"
			}
		}
		return preds
	}
	defer func() { searchPredict = nil }()
	for _, cmd := range []string{"run", "suite"} {
		out := t.TempDir()
		code, stdout, errOut := chaos(t, cmd, "partition-blackhole", "--backend", "virtual", "--check-bounds", "--out", out, "--quiet")
		if code != exitFailed {
			t.Fatalf("%s: exit %d, want %d (unknown)\n%s\n%s", cmd, code, exitFailed, stdout, errOut)
		}
		res, err := reports.ReadResult(filepath.Join(out, "partition-blackhole", "latest", "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != model.Unknown {
			t.Errorf("%s: verdict %s, want unknown", cmd, res.Verdict)
		}
		for _, c := range res.Checks {
			if c.Metric != "max_overlap" {
				continue
			}
			file := filepath.Join(out, "partition-blackhole", res.RunID, "search", "worst-overlap.yaml")
			if c.Verdict != model.Unknown || !strings.Contains(c.Detail, "the tool's own search beat this bound") || !strings.Contains(c.Detail, file) {
				t.Errorf("%s: %s", cmd, c)
			}
			if _, err := scenarios.Load(file); err != nil {
				t.Errorf("%s: the schedule: %v", cmd, err)
			}
		}
	}
	// Without the flag nothing is searched: the run passes.
	code, stdout, _ := chaos(t, "run", "partition-blackhole", "--backend", "virtual", "--out", t.TempDir(), "--quiet")
	if code != exitOK {
		t.Errorf("without --check-bounds: exit %d\n%s", code, stdout)
	}
}
