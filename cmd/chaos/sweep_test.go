package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// chaos sweep from flags, sharded and merged, equals the unsharded sweep
// byte for byte; a bad grid is a usage error.
func TestSweepShardMergeCLI(t *testing.T) {
	dir := t.TempDir()
	grid := []string{"--scenario", "partition-blackhole", "--grid", "ttl=2s..8s/4", "--grid", "safe=false,true", "--seeds", "5", "--quiet"}
	sweepTo := func(out string, extra ...string) {
		t.Helper()
		if code, stdout, stderr := chaos(t, append(append([]string{"sweep", "--out", out}, grid...), extra...)...); code != exitOK {
			t.Fatalf("sweep %v: exit %d\n%s\n%s", extra, code, stdout, stderr)
		}
	}
	sweepTo(filepath.Join(dir, "whole"))
	sweepTo(filepath.Join(dir, "shards"), "--shard", "0/2")
	sweepTo(filepath.Join(dir, "shards"), "--shard", "1/2")
	merged := filepath.Join(dir, "merged")
	if code, stdout, stderr := chaos(t, "sweep", "merge", "--out", merged,
		filepath.Join(dir, "shards", "partition-blackhole-shard-0-of-2", "result.json"),
		filepath.Join(dir, "shards", "partition-blackhole-shard-1-of-2", "result.json")); code != exitOK {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	whole, err := os.ReadFile(filepath.Join(dir, "whole", "partition-blackhole", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(merged, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(whole, got) {
		t.Error("merged shards differ from the unsharded sweep")
	}
	for _, f := range []string{"cells.csv", "index.html", "heatmap-overlap-safe-ttl.png"} {
		if _, err := os.Stat(filepath.Join(merged, f)); err != nil {
			t.Errorf("merged sweep lacks %s: %v", f, err)
		}
	}
	if code, _, stderr := chaos(t, "sweep", "--scenario", "partition-blackhole", "--grid", "ttl=banana"); code != exitUsage || !strings.Contains(stderr, "ttl") {
		t.Errorf("a bad grid: exit %d, %q; want 2 naming ttl", code, stderr)
	}
}

// chaos advise: a feasible envelope exits 0 with a recommendation (1 if
// its confirmation found a model error) and writes the confirming
// scenarios, which check the constraints; an infeasible one exits 1 saying
// what to relax.
func TestAdviseCLI(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := chaos(t, "advise", "--max-gap", "12s", "--max-overlap", "0s", "--max-pause", "1s",
		"--partitions", "blackhole,refuse", "--seeds", "2", "--budget", "1000", "--out", out)
	failed := strings.Contains(stdout, "**Confirmation failed:**")
	if !strings.Contains(stdout, "## Recommendation") || (code == exitOK) == failed || (code != exitOK && code != exitFailed) {
		t.Fatalf("feasible advise: exit %d, confirmation failed %v\n%s\n%s", code, failed, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "advice.json")); err != nil {
		t.Error(err)
	}
	y, err := os.ReadFile(filepath.Join(out, "advise-pause.yaml"))
	if err != nil || !strings.Contains(string(y), "max_gap: 12s") || !strings.Contains(string(y), "max_overlap: 0s") {
		t.Errorf("the confirming scenario does not check the constraints (%v):\n%s", err, y)
	}
	code, stdout, _ = chaos(t, "advise", "--max-gap", "12s", "--max-overlap", "0s", "--redis-restarts", "--seeds", "2")
	if code != exitFailed || !strings.Contains(strings.ToLower(stdout), "relax") {
		t.Errorf("infeasible advise: exit %d, want 1 with a relaxation\n%s", code, stdout)
	}
	if code, _, _ := chaos(t, "advise", "--max-overlap", "0s"); code != exitUsage {
		t.Errorf("advise without --max-gap: exit %d, want 2", code)
	}
}

// chaos bounds FILE and a sweep cell of the same file predict the same
// bounds: both size the faults the file schedules one way
// (bounds.ScheduledFaultSize). The file has what the two used to size apart:
// a second, slower clock rate, a pause that lasts to the end of the fault
// phase (for: 0) and a replies-dropped partition.
func TestBoundsFileAndSweepCellAgree(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sized.yaml")
	if err := os.WriteFile(file, []byte(`instances: 3
duration: 20s
recovery: 5s
elector: {ttl: 2s, wait: 2s, jitter: 5ms}
faults:
  - {at: 2s, for: 3s, kind: clock, rate: 0.8, target: leader}
  - {at: 6s, for: 3s, kind: clock, rate: 0.5, target: leader}
  - {at: 10s, for: 2s, kind: partition, mode: blackhole-replies, target: leader}
  - {at: 16s, kind: pause, target: leader}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := chaos(t, "bounds", file)
	if code != exitOK {
		t.Fatalf("bounds: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var gap, overlap time.Duration
	modes := map[string]bool{"clock-drift": true, "pause": true, "partition-replies": true}
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || !modes[f[0]] {
			continue
		}
		delete(modes, f[0])
		g, err1 := time.ParseDuration(f[1])
		o, err2 := time.ParseDuration(f[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("bounds gives %s no bound: %q", f[0], line)
		}
		gap, overlap = max(gap, g), max(overlap, o)
	}
	if len(modes) > 0 {
		t.Fatalf("bounds lists no row for %v:\n%s", modes, stdout)
	}
	out := filepath.Join(dir, "sweep")
	if code, stdout, stderr := chaos(t, "sweep", "--scenario", file, "--grid", "ttl=2s", "--seeds", "1", "--quiet", "--out", out); code != exitOK {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "sized", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Cells []struct {
			Predicted struct {
				MaxGap     time.Duration `json:"max_gap"`
				MaxOverlap time.Duration `json:"max_overlap"`
			} `json:"predicted"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &res); err != nil || len(res.Cells) != 1 {
		t.Fatalf("the sweep's result.json (%v): %d cells, want 1", err, len(res.Cells))
	}
	if p := res.Cells[0].Predicted; p.MaxGap != gap || p.MaxOverlap != overlap {
		t.Errorf("sweep cell predicts gap %v, overlap %v; chaos bounds FILE predicts gap %v, overlap %v", p.MaxGap, p.MaxOverlap, gap, overlap)
	}
}

// expandPatterns: a pattern is expanded, sorted; a file whose name looks
// like a pattern is itself; a pattern that matches nothing is an error
// naming it; chaos sweep merge of a pattern that matches nothing exits 2.
func TestExpandPatterns(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"b-shard-1-of-2", "a-shard-0-of-2", "odd[1]"} {
		if err := os.MkdirAll(filepath.Join(dir, f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f, "result.json"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := expandPatterns([]string{filepath.Join(dir, "*-shard-*", "result.json"), filepath.Join(dir, "odd[1]", "result.json"), "plain.json"})
	want := []string{filepath.Join(dir, "a-shard-0-of-2", "result.json"), filepath.Join(dir, "b-shard-1-of-2", "result.json"), filepath.Join(dir, "odd[1]", "result.json"), "plain.json"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("expandPatterns: %q, %v; want %q", got, err, want)
	}
	none := filepath.Join(dir, "*-shard-*-of-4", "result.json")
	if _, err := expandPatterns([]string{none}); err == nil || !strings.Contains(err.Error(), none+" matches no file") {
		t.Errorf("a pattern matching nothing: %v", err)
	}
	if code, _, errOut := chaos(t, "sweep", "merge", "--out", filepath.Join(dir, "merged"), none); code != exitUsage || !strings.Contains(errOut, "matches no file") {
		t.Errorf("sweep merge of a pattern matching nothing: exit %d, %s", code, errOut)
	}
}
