package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
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

// A runner-mode scenario asked for by name is a usage error on the virtual
// backend, with the reason; so are flags that cannot apply.
func TestVirtualRefusals(t *testing.T) {
	t.Parallel()
	code, _, errOut := chaos(t, "run", "steady-state", "--backend", "virtual", "--out", t.TempDir())
	if code != exitUsage || !strings.Contains(errOut, "runner mode is not modelled") || !strings.Contains(errOut, "steady-state") {
		t.Errorf("runner mode: exit %d, want 2 with the reason\n%s", code, errOut)
	}
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

// The whole built-in suite on the virtual backend: elector-mode scenarios
// run, runner-mode ones are listed as refused with the reason (skipped in
// JUnit, neither pass nor failure), and the exit code is 0 exactly when
// every scenario that ran passed (whether each built-in passes on the
// virtual backend is virtual's TestBuiltinsPass).
func TestVirtualSuite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	code, out, errOut := chaos(t, "suite", "--backend", "virtual", "--out", dir, "--quiet")
	t.Logf("virtual suite: %v\n%s", time.Since(start).Round(time.Millisecond), out)
	runner, elector := 0, 0
	for _, e := range scenarios.Builtin() {
		if virtual.Refuses(e.Scenario) != nil {
			runner++
		} else {
			elector++
		}
	}
	failed := strings.Count(out, ": FAIL ") + strings.Count(out, ": UNKNOWN ")
	switch {
	case failed == 0 && code != exitOK:
		t.Fatalf("every virtual run passed: exit %d, want 0\n%s\n%s", code, out, errOut)
	case failed > 0 && code != exitFailed:
		t.Fatalf("%d virtual runs did not pass: exit %d, want 1\n%s", failed, code, errOut)
	case failed > 0:
		t.Logf("%d built-ins did not pass on the virtual backend (virtual's TestBuiltinsPass says which)", failed)
	}
	if n := strings.Count(out, "report: "); n != elector {
		t.Errorf("%d reports written, want one per elector-mode built-in (%d)", n, elector)
	}
	nRefused := fmt.Sprintf("%d refused", runner)
	for _, want := range []string{"steady-state: REFUSED, not run: virtual: runner mode is not modelled", nRefused, "on the virtual backend"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	for _, want := range []string{"Backend: virtual.", "| steady-state | **REFUSED** |", nRefused + " by the backend"} {
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
	if s := j.Suites[0]; s.Skipped != runner || s.Failures != failed || s.Tests != runner+elector {
		t.Errorf("junit: tests %d skipped %d failures %d; want %d, %d, %d", s.Tests, s.Skipped, s.Failures, runner+elector, runner, failed)
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
