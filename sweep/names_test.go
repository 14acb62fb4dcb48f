package sweep_test

import (
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sweep"
)

// Shards written side by side get names of their own; a grid is named by
// its name, else its scenario's.
func TestDirNames(t *testing.T) {
	g := sweep.Grid{Base: model.Scenario{Name: "partition-blackhole"}}
	for _, c := range []struct {
		g     sweep.Grid
		shard sweep.Shard
		want  string
	}{
		{g, sweep.Shard{}, "partition-blackhole"},
		{g, sweep.Shard{I: 1, N: 3}, "partition-blackhole-shard-1-of-3"},
		{sweep.Grid{Name: "timeouts", Base: g.Base}, sweep.Shard{}, "timeouts"},
		{sweep.Grid{}, sweep.Shard{}, "sweep"},
	} {
		if got := c.g.DirName(c.shard); got != c.want {
			t.Errorf("DirName(%+v) = %q, want %q", c.shard, got, c.want)
		}
	}
}

// The closing line counts the cells by what they found.
func TestResultSummary(t *testing.T) {
	r := &sweep.Result{Runs: 40, Elapsed: 1234567 * time.Microsecond, Complete: false, Incomplete: "interrupted"}
	r.Cells = make([]sweep.Cell, 3)
	r.Cells[0].Status, r.Cells[0].Safe = sweep.StatusDone, true
	r.Cells[1].Status, r.Cells[1].Verdicts.Fail, r.Cells[1].BoundFailures = sweep.StatusDone, 2, 1
	want := "3 cells (2 done), 40 runs in 1.235s; 1 cells in the safe region; 1 cells failing an expectation, 1 of them a predicted bound; INCOMPLETE: interrupted"
	if got := r.Summary(); got != want {
		t.Errorf("Summary:\n%s\nwant\n%s", got, want)
	}
}
