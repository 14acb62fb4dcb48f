package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chaos explore: per metric the worst beside its bound, the files under
// --out, a schedule file chaos run reproduces, and shards merged equal to
// the whole search byte for byte.
func TestExploreCLI(t *testing.T) {
	dir := t.TempDir()
	args := []string{"explore", "pause", "--budget", "800", "--seeds", "2", "--quiet"}
	code, stdout, stderr := chaos(t, append(args, "--out", filepath.Join(dir, "whole"))...)
	if code != exitOK && code != exitFailed {
		t.Fatalf("explore: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"max_overlap", "predicted", "ratio", "P + TTL/2 + jitter - TTL"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stdout)
		}
	}
	out := filepath.Join(dir, "whole", "pause")
	for _, f := range []string{"result.json", "explore.md", "index.html", "worst-overlap.yaml", "worst-overlap/report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	violated := strings.Contains(stdout, "BOUND VIOLATED")
	if violated != (code == exitFailed) {
		t.Errorf("exit %d with violations %v", code, violated)
	}
	// The worst overlap's file, run on its own.
	if c, so, se := chaos(t, "run", "--backend", "virtual", "--quiet", "--out", filepath.Join(dir, "runs"), filepath.Join(out, "worst-overlap.yaml")); c != exitOK {
		t.Errorf("chaos run worst-overlap.yaml: exit %d\n%s\n%s", c, so, se)
	}
	for i := range 2 {
		if c, so, se := chaos(t, append(args, "--out", filepath.Join(dir, "shards"), "--shard", []string{"0/2", "1/2"}[i])...); c != code {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, c, so, se)
		}
	}
	merged := filepath.Join(dir, "merged")
	if c, so, se := chaos(t, "explore", "merge", "--out", merged,
		filepath.Join(dir, "shards", "pause-shard-0-of-2", "result.json"),
		filepath.Join(dir, "shards", "pause-shard-1-of-2", "result.json")); c != code {
		t.Fatalf("merge: exit %d\n%s\n%s", c, so, se)
	}
	whole, _ := os.ReadFile(filepath.Join(out, "result.json"))
	got, _ := os.ReadFile(filepath.Join(merged, "result.json"))
	if len(whole) == 0 || !bytes.Equal(whole, got) {
		t.Error("merged shards differ from the whole search")
	}
	if c, _, se := chaos(t, "explore", "pause", "--vary", "lag=0s..1s"); c != exitUsage || !strings.Contains(se, "redis-failover") {
		t.Errorf("--vary lag on a pause scenario: exit %d, %q", c, se)
	}
}

// TestBoundsSearchesTheFile: chaos bounds FILE checks its formulas with a
// short call-aligned search of the file itself, per metric, and says
// whether the search beat one.
func TestBoundsSearchesTheFile(t *testing.T) {
	code, out, errOut := chaos(t, "bounds", "partition-blackhole", "--out", t.TempDir())
	if code != exitOK {
		t.Fatalf("bounds: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"searched partition-blackhole", "max_overlap", "within its bound"} {
		if !strings.Contains(out, want) {
			t.Errorf("bounds FILE does not say %q:\n%s", want, out)
		}
	}
}

// TestExploreCLICounts: --metric after the scenario's name is read (it was
// ignored, and every duration searched instead), and a runner-mode
// built-in answers how many duplicate chores at worst, against its bound.
func TestExploreCLICounts(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := chaos(t, "explore", "redis-failover-lossy", "--metric", "duplicate_chores,stale_chores", "--budget", "200", "--seeds", "2", "--quiet", "--out", dir)
	if code != exitOK {
		t.Fatalf("explore: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"duplicate_chores  worst ", "3 chores × (1 failover(s) × (2·⌈overlap", "stale_chores      worst ", "predicted unknown"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the summary lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "max_overlap") {
		t.Errorf("searched a metric not asked for:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "redis-failover-lossy", "worst-duplicate_chores.yaml")); err != nil {
		t.Errorf("no worst file: %v", err)
	}
}
