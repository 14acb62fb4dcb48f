package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/scenarios"
)

// chaos prove: per metric the worst, where, the bound and the verdict; the
// witness files written, one reproduced by chaos run; a scenario it does
// not prove is refused with exit 2, naming why.
func TestProveCLI(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := chaos(t, "prove", "partition-blackhole", "--metric", "overlap,stale", "--out", dir)
	if code != exitOK {
		t.Fatalf("prove: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"max_overlap", "stale_leadership", "proven", "bound 7.565s", "segments", "TTL/2 + jitter + C - TTL"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "max_gap") {
		t.Errorf("--metric overlap,stale printed the gap too:\n%s", stdout)
	}
	out := filepath.Join(dir, "partition-blackhole")
	for _, f := range []string{"result.json", "witness-overlap.yaml", "witness-stale.yaml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	c, so, se := chaos(t, "run", "--backend", "virtual", "--out", filepath.Join(dir, "runs"), filepath.Join(out, "witness-overlap.yaml"))
	if c != exitOK || !strings.Contains(so, "max overlap 6.548s") {
		t.Errorf("chaos run witness-overlap.yaml: exit %d, want the proven 6.548s of overlap\n%s\n%s", c, so, se)
	}
	c, so, se = chaos(t, "prove", "partition-blackhole-safe-elector", "--out", dir, "--metric", "overlap")
	if c != exitOK || !strings.Contains(so, "safe mode") || !strings.Contains(so, "proven") {
		t.Errorf("prove of a safe-mode scenario: exit %d, want 0, its overlap proven in safe mode\n%s\n%s", c, so, se)
	}
	c, so, se = chaos(t, "prove", "clock-drift", "--out", dir, "--metric", "overlap")
	if c != exitOK || !strings.Contains(so, "5 classes") || !strings.Contains(so, "worst 6.708s") || !strings.Contains(so, "proven") {
		t.Errorf("prove of a clock fault: exit %d, want 0, its overlap proven class by class\n%s\n%s", c, so, se)
	}
	drift := filepath.Join(dir, "drift.yaml")
	if err := os.WriteFile(drift, []byte("instances: 3\nfaults:\n  - {at: 6s, for: 10s, kind: clock, rate: 0.99, target: leader}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, _, se = chaos(t, "prove", drift, "--out", dir)
	if c != exitUsage || !strings.Contains(se, "0.99 = 99/100") || !strings.Contains(se, "here 9.9µs") {
		t.Errorf("prove of a clock rate of 0.99: exit %d, %s: want 2, naming the lattice", c, se)
	}
	c, _, se = chaos(t, "prove", "partition-blackhole", "--vary", "latency=1s..2s", "--out", dir)
	if c != exitUsage || !strings.Contains(se, "at, for, startN, atK or forK") {
		t.Errorf("prove --vary latency: exit %d, %s: want 2, naming the axes", c, se)
	}
	c, so, se = chaos(t, "prove", "flapping-network", "--vary", "at2=11s..15s", "--metric", "gap", "--out", dir)
	if c != exitOK || !strings.Contains(so, "at2=11s..15s") || !strings.Contains(so, "the other faults") || !strings.Contains(so, "proven") {
		t.Errorf("prove of one fault of several: exit %d, want 0, the third flap's start walked, the other faults as the file has them\n%s\n%s", c, so, se)
	}
	c, so, se = chaos(t, "prove", "partition-blackhole", "--metric", "failover", "--out", dir)
	if c != exitOK || !strings.Contains(so, "failover") || !strings.Contains(so, "proven") {
		t.Errorf("prove --metric failover: exit %d, want 0, proven\n%s\n%s", c, so, se)
	}
	// Runs that end before a stable leader leave the failover's worst
	// unknown: incomplete, exit 1, though the walk covered the range.
	c, so, se = chaos(t, "prove", "slow-redis-safe-elector", "--metric", "failover", "--out", dir)
	if c != exitFailed || !strings.Contains(so, "measure no failover") || !strings.Contains(se, "incomplete") {
		t.Errorf("prove --metric failover with runs that see no stable leader: exit %d, want 1, incomplete\n%s\n%s", c, so, se)
	}
}

// chaos prove --seeds N: each seed's jitter and backoff draws proven in
// turn, each written under seed-K/, then the worst over them: the proof
// held one seed's draws only.
func TestProveSeeds(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := chaos(t, "prove", "partition-blackhole", "--metric", "overlap", "--seeds", "3", "--out", dir)
	if code != exitOK {
		t.Fatalf("prove --seeds 3: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, seed := range []string{"1", "2", "3"} {
		if !strings.Contains(stdout, "seed "+seed+", ") {
			t.Errorf("no proof for seed %s:\n%s", seed, stdout)
		}
		if _, err := os.Stat(filepath.Join(dir, "partition-blackhole", "seed-"+seed, "result.json")); err != nil {
			t.Errorf("seed %s's proof not written: %v", seed, err)
		}
	}
	// The worst over the seeds is seed 1's 6.548 s (TestProveCLI's
	// witness), proven under all three.
	if !strings.Contains(stdout, "over 3 seeds (1..3)") || !strings.Contains(stdout, "worst 6.548s (seed 1") || !strings.Contains(stdout, "proven under 3 of 3 seeds") {
		t.Errorf("the summary over the seeds is missing or wrong:\n%s", stdout)
	}
	// One seed's proof, then several: its report is gone from beside the
	// seeds' summary; several, then one: the summary is gone.
	if c, so, se := chaos(t, "prove", "partition-blackhole", "--out", dir); c != exitOK {
		t.Fatalf("prove: exit %d\n%s\n%s", c, so, se)
	}
	if _, err := os.Stat(filepath.Join(dir, "partition-blackhole", "seeds.md")); err == nil {
		t.Errorf("seeds.md left beside one seed's proof")
	}
	if c, so, se := chaos(t, "prove", "partition-blackhole", "--seeds", "3", "--out", dir); c != exitOK {
		t.Fatalf("prove --seeds 3: exit %d\n%s\n%s", c, so, se)
	}
	for _, f := range []string{"prove.md", "result.json", "witness-overlap.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, "partition-blackhole", f)); err == nil {
			t.Errorf("one seed's %s left beside the seeds' summary", f)
		}
	}
	// The same summary as a file, linking each seed's report.
	sum, err := os.ReadFile(filepath.Join(dir, "partition-blackhole", "seeds.md"))
	if err != nil || !strings.Contains(string(sum), "| max_overlap | 6.548s (seed 1, at=2.521750001s) |") || !strings.Contains(string(sum), "| 3 of 3 seeds |") || !strings.Contains(string(sum), "[report](seed-2/prove.md)") {
		t.Errorf("seeds.md: %v\n%s", err, sum)
	}
	if c, _, se := chaos(t, "prove", "partition-blackhole", "--seeds", "0", "--out", dir); c != exitUsage || !strings.Contains(se, "--seeds 0") {
		t.Errorf("--seeds 0: exit %d, %s: want 2 naming it", c, se)
	}
}

// TestProveReportReproduces: the command a proof's report gives proves the
// same space again: a file (whose name is a built-in's, whose path needs
// quoting) by its path, with the segment limit it stopped at.
func TestProveReportReproduces(t *testing.T) {
	dir := t.TempDir()
	sc, err := scenarios.Open("partition-blackhole")
	if err != nil {
		t.Fatal(err)
	}
	sc.Faults[0].For = 4200 * time.Millisecond // not the built-in's
	y, err := scenarios.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	// Named relative to where the proof starts; written to a directory
	// whose name is a glob pattern matching a neighbour's, which keeps its
	// files.
	t.Chdir(dir)
	file := filepath.Join(dir, "my pb.yaml")
	if err := os.WriteFile(file, y, 0o644); err != nil {
		t.Fatal(err)
	}
	neighbour := filepath.Join(dir, "run1", sc.Name, "index.html")
	if err := os.MkdirAll(filepath.Dir(neighbour), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(neighbour, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	first, again := filepath.Join(dir, "run[1]"), filepath.Join(dir, "again")
	if c, so, se := chaos(t, "prove", "my pb.yaml", "--vary", "at=2.4s..2.6s", "--max-segments", "5", "--out", "run[1]"); c != exitFailed {
		t.Fatalf("prove, cut short: exit %d, want %d\n%s\n%s", c, exitFailed, so, se)
	}
	if _, err := os.Stat(neighbour); err != nil {
		t.Errorf("a neighbour's report, matched by the output directory's name: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(first, sc.Name, "prove.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The report's commands, run from where the proof was started: the
	// proof again, and each witness.
	var prove []string
	var witnesses [][]string
	_, block, _ := strings.Cut(string(md), "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		words := shellWords(t, l)
		switch k := slices.Index(words, "prove"); {
		case k >= 0 && strings.HasSuffix(words[0], "chaos"):
			prove = words[k:]
		case slices.Contains(words, "run") && strings.HasSuffix(words[0], "chaos"):
			witnesses = append(witnesses, words[slices.Index(words, "run"):])
		}
	}
	if len(prove) < 2 || prove[1] != "my pb.yaml" || !slices.Contains(prove, "--max-segments") || len(witnesses) != 3 {
		t.Fatalf("the report's commands %q, %q: want the file as named, the segment limit and three witnesses\n%s", prove, witnesses, md)
	}
	if c, so, se := chaos(t, append(prove, "--out", again)...); c != exitFailed {
		t.Fatalf("%q: exit %d\n%s\n%s", prove, c, so, se)
	}
	for _, w := range witnesses {
		if c, so, se := chaos(t, append(w, "--out", filepath.Join(dir, "runs"))...); c != exitOK || !strings.Contains(so, "virtual") {
			t.Errorf("%q: exit %d\n%s\n%s", w, c, so, se)
		}
	}
	type proof struct {
		Segments int
		Proofs   []struct {
			Metric, Verdict string
			Worst, At       time.Duration
		}
	}
	var a, b proof
	for k, d := range []string{first, again} {
		data, err := os.ReadFile(filepath.Join(d, sc.Name, "result.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, []*proof{&a, &b}[k]); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(a, b) || a.Segments != 5 || len(a.Proofs) == 0 {
		t.Errorf("the report's command proved %+v, the first proof %+v", b, a)
	}
}

// shellWords splits a POSIX shell line of plain and single-quoted words.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	in, quoted := false, false
	for _, c := range line {
		switch {
		case quoted && c == '\'':
			quoted = false
		case quoted:
			w.WriteRune(c)
		case c == '\'':
			quoted, in = true, true
		case c == ' ':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
		default:
			w.WriteRune(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	if quoted {
		t.Fatalf("an unterminated quote in %q", line)
	}
	return words
}
