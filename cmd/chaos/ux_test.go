package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/leaselab/leaselab/sim/env"
)

// ansi matches the escape sequences of the live area.
var ansi = regexp.MustCompile("\033\\[[0-9;]*[A-Za-z]")

// The live area as the suite draws it on a (pretend) 80-column terminal.
func TestSuiteLiveAt80Columns(t *testing.T) {
	var out, errOut syncBuffer
	f := []string{"suite", "--backend", "virtual", "--out", t.TempDir()}
	code := runWithSize(context.Background(), f, &out, &errOut, func() (int, int) { return 80, 24 })
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	// The lines redrawn in place: the running scenarios' and the overall
	// line. (Lines printed once above the area, such as verdicts and report
	// paths, may wrap: they are never redrawn.)
	live := 0
	for _, l := range strings.Split(ansi.ReplaceAllString(out.String(), ""), "\n") {
		l = strings.TrimPrefix(l, "\r")
		if !strings.Contains(l, " leader ") && !strings.Contains(l, " done: ") {
			continue
		}
		live++
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	if live == 0 {
		t.Error("no live area drawn")
	}
}

// runWithSize is run with the live area forced for a terminal of size.
func runWithSize(ctx context.Context, args []string, stdout, stderr *syncBuffer, size func() (int, int)) int {
	testSize = size
	defer func() { testSize = nil }()
	return run(ctx, args, stdout, stderr)
}

// chaos suite DIR and FILE... run the user's scenarios, in the order given,
// with the same index, summary and JUnit, and end with the counts and the
// findings.
func TestUserSuite(t *testing.T) {
	out := t.TempDir()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, stdout, stderr := chaos(t, "suite", "testdata/usersuite", "--backend", "virtual", "--out", out, "--junit", junit)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"index.html", "summary.md", "junit.xml", "a-latency/latest/report.html", "b-blackhole/latest/report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	if !strings.Contains(stdout, "2 scenarios: 2 passed, 0 failed, 0 unknown, 0 incomplete; 1 with findings") {
		t.Errorf("no counts line:\n%s", stdout)
	}
	i := strings.Index(stdout, "findings (1 spec claims not held):")
	if i < 0 || !strings.Contains(stdout[i:], "b-blackhole  split brain ≤ TTL (5s) not held: overlap 5.5") {
		t.Errorf("no findings block at the end:\n%s", stdout)
	}
	if !strings.Contains(stdout, "b-blackhole: PASS · 1 finding") {
		t.Errorf("a pass with a finding is shown as a plain PASS:\n%s", stdout)
	}
	md, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	if !strings.Contains(string(md), "[b-blackhole](b-blackhole/") {
		t.Errorf("summary.md:\n%s", md)
	}
	j, _ := os.ReadFile(junit)
	if strings.Count(string(j), "<testcase") != 2 {
		t.Errorf("--junit:\n%s", j)
	}

	// Files and built-in names, started in the order given (one at a time
	// here so that the order is what is printed).
	code, stdout, stderr = chaos(t, "suite", "steady-state", "testdata/usersuite/b-blackhole.yaml", "partition-one-way",
		"--backend", "virtual", "--out", t.TempDir(), "--parallel", "1")
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var order []string
	for _, l := range strings.Split(stdout, "\n") {
		if name, ok := strings.CutSuffix(l, " of virtual time)"); ok {
			order = append(order, strings.Split(name, ":")[0])
		}
	}
	if got := strings.Join(order, " "); got != "steady-state b-blackhole partition-one-way" {
		t.Errorf("started in the order %q", got)
	}

	// Invalid files are usage errors, all named, before anything runs; a
	// name used twice would share a report directory.
	for _, args := range [][]string{
		{"suite", "testdata/invalid.yaml", "testdata/quick.yaml"},
		{"suite", "testdata/usersuite/b-blackhole.yaml", "testdata/usersuite/b-blackhole.yaml"},
		{"suite", t.TempDir()},
	} {
		code, _, stderr := chaos(t, append(args, "--backend", "virtual", "--out", t.TempDir())...)
		if code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, want 2: %s", args, code, stderr)
		}
	}
}

// A suite interrupted before its scenarios start lists them as NOT
// STARTED, in the output and in JUnit (skipped), and exits 130.
func TestInterruptedSuiteListsNotStarted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut syncBuffer
	junit := filepath.Join(t.TempDir(), "junit.xml")
	dir := t.TempDir()
	code := run(ctx, []string{"suite", "steady-state", "pause", "--backend", "virtual", "--out", dir, "--junit", junit}, &out, &errOut)
	if code != exitCanceled {
		t.Fatalf("exit %d, want 130\n%s\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"steady-state: NOT STARTED (interrupted)", "pause: NOT STARTED (interrupted)", "2 not started"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output does not say %q:\n%s", want, out.String())
		}
	}
	for _, f := range []string{junit, filepath.Join(dir, "junit.xml")} {
		j, _ := os.ReadFile(f)
		if !strings.Contains(string(j), `skipped="2"`) || strings.Count(string(j), `type="not-started"`) != 2 {
			t.Errorf("%s does not list the scenarios as not started:\n%s", f, j)
		}
	}
}

// Inputs that used to crash or run forever are usage errors.
func TestBadInputsRefused(t *testing.T) {
	long := filepath.Join(t.TempDir(), "long-name.yaml")
	data, _ := os.ReadFile("testdata/quick.yaml")
	os.WriteFile(long, append([]byte("name: "+strings.Repeat("n", 5000)+"\n"), data...), 0o644)
	huge := filepath.Join(t.TempDir(), "huge.yaml")
	os.WriteFile(huge, []byte("duration: 1000000h\ntime_scale: 100\n"), 0o644)
	for _, args := range [][]string{
		{"run", "steady-state", "--time-scale", "1e-300"},
		{"run", "steady-state", "--time-scale", "NaN"},
		{"run", "steady-state", "--time-scale", "Inf"},
		{"run", "steady-state", "--time-scale", "1000"},
		{"run", "steady-state", "--time-scale", "-1"},
		{"run", "steady-state", "--time-scale", "0"},
		{"run", long},
		{"run", huge}, // overflowed when scaled: ran forever, then a stack overflow on Ctrl-C
		{"suite", "--parallel", "-1"},
	} {
		code, stdout, stderr := chaos(t, append(args, "--backend", "virtual", "--out", t.TempDir())...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want 2\n%s\n%s", args, code, stdout, stderr)
		}
		if strings.Contains(stdout, "PASS") || len(stderr) > 400 {
			t.Errorf("%v: ran or printed too much:\n%s\n%s", args, stdout, stderr)
		}
	}
}

// Environment errors: one precise message, printed once.
func TestEnvironmentErrorOnce(t *testing.T) {
	t.Setenv("LEASELAB_REDIS_ADDR", "")
	t.Setenv("LEASELAB_REDIS_URL", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--redis-server", "/nonexistent/redis-server"}, "no redis-server at /nonexistent/redis-server"},
		{[]string{"--redis-addr", "127.0.0.1:1"}, "Redis at 127.0.0.1:1"},
	} {
		args := append([]string{"suite", "testdata/quick.yaml", "testdata/split.yaml", "--out", t.TempDir(), "--quiet"}, tc.args...)
		code, _, stderr := chaos(t, args...)
		if code != exitEnv {
			t.Fatalf("%v: exit %d, want 3: %s", tc.args, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if len(lines) != 1 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "on PATH") {
			t.Errorf("%v: want one line saying %q:\n%s", tc.args, tc.want, stderr)
		}
	}
}

// The README's way to keep the exit codes: a built binary (go run turns
// every code into 1). Usage errors exit 2, environment errors 3.
func TestExitCodesOfTheBuiltBinary(t *testing.T) {
	bin := buildChaos(t)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"run", "no-such-scenario"}, exitUsage},
		{[]string{"run", "testdata/quick.yaml", "--redis-server", "/nonexistent/redis-server", "--out", t.TempDir()}, exitEnv},
	} {
		cmd := exec.Command(bin, tc.args...)
		cmd.Env = append(os.Environ(), "LEASELAB_REDIS_ADDR=", "LEASELAB_REDIS_URL=")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
			t.Errorf("%v: %v, want exit %d\n%s", tc.args, err, tc.code, out)
		}
	}
}

// bounds says "not given" for a fault size nobody passed, with the flag
// that gives it; the help texts have examples and flags, each default once.
func TestBoundsAndHelp(t *testing.T) {
	code, out, _ := chaos(t, "bounds")
	if code != exitOK {
		t.Fatal(code)
	}
	for _, mode := range []string{"pause", "suspend", "latency", "clock-drift"} {
		re := regexp.MustCompile(`(?m)^` + mode + `\s+not given \(--`)
		if !re.MatchString(out) {
			t.Errorf("bounds without --%s does not say \"not given\":\n%s", mode, out)
		}
	}
	if code, out, _ := chaos(t, "bounds", "--pause", "8s"); code != exitOK || regexp.MustCompile(`(?m)^(pause|suspend)\s+not given`).MatchString(out) {
		t.Errorf("bounds --pause 8s:\n%s", out)
	}
	// The failover bound (the "failover: predicted" limit runs are judged
	// by) is shown with the others, with its formula: the crash's is
	// TTL + hop + Wait + jitter at the defaults.
	if !regexp.MustCompile(`(?m)^leader-crash\s+11s\s+0s\s+11\.006s\s`).MatchString(out) || !strings.Contains(out, "  failover: ") {
		t.Errorf("bounds does not show leader-crash's failover bound (11.006s) and the failover formulas:\n%s", out)
	}
	for _, cmd := range []string{"bounds", "list", "report", "run", "suite", "validate"} {
		_, _, help := chaos(t, cmd, "--help")
		if !strings.Contains(help, "Example") {
			t.Errorf("%s --help has no example", cmd)
		}
		if strings.Contains(help, "  -") && !strings.Contains(help, "Flags:") {
			t.Errorf("%s --help lists flags without \"Flags:\"", cmd)
		}
		for _, l := range strings.Split(help, "\n") {
			if strings.Count(l, "(default") > 1 {
				t.Errorf("%s --help: a default given twice: %q", cmd, l)
			}
		}
	}
	_, _, help := chaos(t, "bounds", "--help")
	if i := strings.Index(help, "-jitter"); i < 0 || strings.Count(strings.SplitN(help[i:], "\n  -", 2)[0], "default") != 1 || strings.Contains(help, "default -1") {
		t.Errorf("bounds --help shows the jitter default twice or as -1:\n%s", help)
	}
}

// No redis-server and nothing given, but a Docker Engine answers: the
// container environment, said in one line. With redis-server, or a Redis
// given, the embedded one.
func TestDockerFallback(t *testing.T) {
	t.Setenv("LEASELAB_REDIS_ADDR", "")
	t.Setenv("LEASELAB_REDIS_URL", "")
	ctx := context.Background()
	f := runFlags{env: "embedded"}
	var stderr syncBuffer
	if p, err := f.provider(ctx, &stderr); err != nil || fmt.Sprintf("%T", p) != "env.Embedded" {
		t.Errorf("with redis-server on PATH: %T, %v", p, err)
	}
	t.Setenv("PATH", t.TempDir())
	if err := env.DockerAvailable(ctx); err != nil {
		t.Skipf("no Docker: %v", err)
	}
	p, err := f.provider(ctx, &stderr)
	if err != nil || fmt.Sprintf("%T", p) != "env.Containers" {
		t.Fatalf("no redis-server, Docker answers: %T, %v", p, err)
	}
	if s := stderr.String(); strings.Count(s, "\n") != 1 || !strings.Contains(s, "no redis-server on PATH") || !strings.Contains(s, "containers") {
		t.Errorf("the fallback is not said in one line:\n%s", s)
	}
	f.redisAddr = "127.0.0.1:6379"
	if p, _ := f.provider(ctx, &stderr); fmt.Sprintf("%T", p) != "env.Embedded" {
		t.Errorf("--redis-addr given: %T", p)
	}
}

// --md-inline and --md-image-base reach report.md.
func TestMarkdownImageFlags(t *testing.T) {
	out := t.TempDir()
	if code, _, stderr := chaos(t, "run", "partition-blackhole", "--backend", "virtual", "--out", out, "--md-image-base", "https://ci.example/a/", "--quiet"); code != exitOK {
		t.Fatal(stderr)
	}
	md, _ := os.ReadFile(filepath.Join(out, "partition-blackhole", "latest", "report.md"))
	if !strings.Contains(string(md), "](https://ci.example/a/partition-blackhole/virtual-partition-blackhole-1/timeline.png)") {
		t.Errorf("--md-image-base:\n%.2000s", md)
	}
	if code, _, stderr := chaos(t, "run", "partition-blackhole", "--backend", "virtual", "--out", out, "--md-inline", "--quiet"); code != exitOK {
		t.Fatal(stderr)
	}
	md, _ = os.ReadFile(filepath.Join(out, "partition-blackhole", "latest", "report.md"))
	if !strings.Contains(string(md), "](data:image/png;base64,") {
		t.Error("--md-inline: no data URI")
	}
	if code, _, _ := chaos(t, "run", "steady-state", "--backend", "virtual", "--md-inline", "--md-image-base", "x"); code != exitUsage {
		t.Errorf("both: exit %d", code)
	}
}

// A file of thousands of unknown keys prints a bounded error, not one
// line per key.
func TestErrorOutputCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("instances: 3\nduration: 2s\n")
	for i := range 5000 {
		fmt.Fprintf(&b, "unknown_key_%d: %s\n", i, strings.Repeat("x", 100))
	}
	if b.Len() > 1<<20 {
		t.Fatalf("the file is %d bytes, over the scenario file limit: its errors would not be listed", b.Len())
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte(b.String()), 0o644)
	for _, args := range [][]string{{"validate", bad}, {"run", bad}, {"suite", bad}} {
		code, _, stderr := chaos(t, append(args, "--backend", "virtual")...)
		if args[0] == "validate" {
			code, _, stderr = chaos(t, args...)
		}
		if code != exitUsage || !strings.Contains(stderr, "unknown_key_") || len(stderr) > 10000 || strings.Count(stderr, "\n") > 25 {
			t.Errorf("%v: exit %d, %d bytes, %d lines of errors", args[0], code, len(stderr), strings.Count(stderr, "\n"))
		}
	}
}

// A replicated or cluster scenario given a Redis of the user's is refused,
// not failed: it needs servers the harness spawns to fail them over.
func TestTopologyRefusedOnOwnRedis(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	junit := filepath.Join(dir, "junit.xml")
	code, out, errOut := chaos(t, "suite", "replica-failover-lossy", "slot-migration", "--redis-addr", "127.0.0.1:1",
		"--out", dir, "--junit", junit, "--quiet")
	if code != exitFailed || !strings.Contains(errOut, "every scenario was refused") {
		t.Fatalf("exit %d, want %d (nothing ran)\n%s\n%s", code, exitFailed, out, errOut)
	}
	for _, want := range []string{"replica-failover-lossy: REFUSED", "slot-migration: REFUSED", "servers the harness spawns", "2 refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if j, _ := os.ReadFile(junit); strings.Count(string(j), "<skipped") != 2 {
		t.Errorf("JUnit: want 2 skipped testcases:\n%s", j)
	}
}
