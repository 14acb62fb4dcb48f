package sweep_test

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sweep"
)

// TestRunnerModeGrid: a sweep of a runner-mode scenario runs on the
// virtual backend and counts each cell's worst chores and tasks: the lossy
// failover's stale leader writes its chores into the promoted replica in
// spec mode, where safe mode's fence refuses them; a duplicate-chores limit
// decides the safe region.
func TestRunnerModeGrid(t *testing.T) {
	e, ok := scenarios.Lookup("redis-failover-lossy")
	if !ok || e.Scenario.Mode != model.ModeRunner {
		t.Fatal("redis-failover-lossy is not a runner-mode built-in")
	}
	zero := 0
	g := sweep.Grid{Base: e.Scenario, Axes: []sweep.Axis{sweep.Bools(sweep.ParamSafe, false, true)}, Seeds: 2,
		Limits: sweep.Limits{MaxGap: sweep.NoLimit, MaxOverlap: sweep.NoLimit, MaxStale: sweep.NoLimit, MaxDuplicateChores: &zero}}
	r, err := sweep.Run(context.Background(), g, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec, safe := r.Cells[0], r.Cells[1]
	if spec.Work == nil || safe.Work == nil {
		t.Fatalf("no chore and task counts: %+v, %+v", spec.Work, safe.Work)
	}
	if spec.Work.StaleChores.Max == 0 || spec.Work.StaleChores.WorstSeed != 1 {
		t.Errorf("spec mode: stale chores %+v, want some (seed 1)", spec.Work.StaleChores)
	}
	if safe.Work.StaleChores.Max != 0 {
		t.Errorf("safe mode: stale chores %+v, want none (fenced)", safe.Work.StaleChores)
	}
	if spec.Work.LostTasks.Max == 0 {
		t.Errorf("spec mode: no lost task in a lossy failover: %+v", spec.Work)
	}
	if !spec.Safe || !safe.Safe {
		t.Errorf("no duplicate chore expected, every cell safe: %v %v (%+v %+v)", spec.Safe, safe.Safe, spec.Work, safe.Work)
	}
	if s := r.Summary(); !strings.Contains(s, "worst duplicate chores 0") || !strings.Contains(s, "stale chores 3") {
		t.Errorf("summary %q", s)
	}
	// The files show the counts too: cells.csv's columns, index.html's
	// table (they showed only gap, overlap, stale and failover).
	dir := t.TempDir()
	if _, err := sweep.WriteFiles(dir, r); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(readFile(t, filepath.Join(dir, "cells.csv")))).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("cells.csv: %d rows, %v", len(rows), err)
	}
	col := slices.Index(rows[0], "stale_chores_max")
	if col < 0 || slices.Index(rows[0], "duplicate_chores_max") < 0 || slices.Index(rows[0], "lost_tasks_worst_seed") < 0 {
		t.Fatalf("cells.csv header %v lacks the chore and task columns", rows[0])
	}
	if got, want := rows[1][col], strconv.Itoa(spec.Work.StaleChores.Max); got != want {
		t.Errorf("cells.csv spec cell stale_chores_max %q, want %q", got, want)
	}
	if html := readFile(t, filepath.Join(dir, "index.html")); !strings.Contains(html, "<th>stale chores</th>") || !strings.Contains(html, "<td>"+strconv.Itoa(spec.Work.StaleChores.Max)+"</td>") {
		t.Errorf("index.html lacks the chores' columns or the spec cell's %d stale chores", spec.Work.StaleChores.Max)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestChoreLimitNeedsRunnerMode: a limit on duplicate chores of an
// elector-mode sweep is refused, naming the limit.
func TestChoreLimitNeedsRunnerMode(t *testing.T) {
	one := 1
	e, _ := scenarios.Lookup("partition-blackhole")
	g := sweep.Grid{Base: e.Scenario, Limits: sweep.Limits{MaxDuplicateChores: &one}}
	if err := g.Check(); err == nil || !strings.Contains(err.Error(), "max_duplicate_chores") {
		t.Fatalf("error %v, want one naming max_duplicate_chores", err)
	}
}

// TestParseChoreLimit: a sweep file's limits take max_duplicate_chores.
func TestParseChoreLimit(t *testing.T) {
	g, err := sweep.ParseGrid("chores.yaml", []byte("sweep:\n  scenario: leader-crash\n  seeds: 1\n  limits:\n    max_duplicate_chores: 1\n  axes:\n    ttl: [5s]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g.Limits.MaxDuplicateChores == nil || *g.Limits.MaxDuplicateChores != 1 || g.Base.Mode != model.ModeRunner {
		t.Fatalf("limits %+v, mode %s", g.Limits, g.Base.Mode)
	}
	if err := g.Check(); err != nil {
		t.Fatalf("a runner-mode grid is refused: %v", err)
	}
}
