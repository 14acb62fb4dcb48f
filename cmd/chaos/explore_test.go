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
