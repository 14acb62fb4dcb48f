package sweep

import (
	"fmt"
	"time"
)

// DirSuffix ends the directory name of one shard's sweep or search,
// "-shard-I-of-N", so that shards written side by side do not overwrite
// each other; "" for the whole (the zero Shard).
func (s Shard) DirSuffix() string {
	if s == (Shard{}) {
		return ""
	}
	return fmt.Sprintf("-shard-%d-of-%d", s.I, s.N)
}

// DirName names the directory of a sweep of g (or of one shard of it): the
// grid's name, else its base scenario's, else "sweep".
func (g Grid) DirName(s Shard) string {
	name := g.Name
	if name == "" {
		name = g.Base.Name
	}
	if name == "" {
		name = "sweep"
	}
	return name + s.DirSuffix()
}

// Summary is the sweep's closing line: its cells, runs and time, the safe
// region's size, the cells failing an expectation and, of those, a
// predicted bound; and why it is incomplete, if it is.
func (r *Result) Summary() string {
	safe, done, failing, broken := 0, 0, 0, 0
	for _, c := range r.Cells {
		if c.Status == StatusDone {
			done++
		}
		if c.Safe {
			safe++
		}
		if c.Verdicts.Fail > 0 {
			failing++
		}
		if c.BoundFailures > 0 {
			broken++
		}
	}
	s := fmt.Sprintf("%d cells (%d done), %d runs in %v; %d cells in the safe region; %d cells failing an expectation, %d of them a predicted bound",
		len(r.Cells), done, r.Runs, r.Elapsed.Round(time.Millisecond), safe, failing, broken)
	if w, at := r.worstWork(); w != nil {
		s += fmt.Sprintf("; worst duplicate chores %d (cell %d seed %d), stale chores %d, repeated tasks %d, lost tasks %d",
			w.DuplicateChores.Max, at, w.DuplicateChores.WorstSeed, w.StaleChores.Max, w.RepeatedTasks.Max, w.LostTasks.Max)
	}
	if !r.Complete {
		s += "; INCOMPLETE: " + r.Incomplete
	}
	return s
}

// worstWork is the largest of each chore and task count over the cells
// (runner mode), and the cell of the most duplicate chores (the first on
// a tie); nil in elector mode.
func (r *Result) worstWork() (*Work, int) {
	var w *Work
	at := -1
	for _, c := range r.Cells {
		if c.Work == nil {
			continue
		}
		if w == nil {
			w = &Work{}
		}
		if at < 0 || c.Work.DuplicateChores.Max > w.DuplicateChores.Max {
			w.DuplicateChores, at = c.Work.DuplicateChores, c.Index
		}
		w.StaleChores.Max = max(w.StaleChores.Max, c.Work.StaleChores.Max)
		w.RepeatedTasks.Max = max(w.RepeatedTasks.Max, c.Work.RepeatedTasks.Max)
		w.LostTasks.Max = max(w.LostTasks.Max, c.Work.LostTasks.Max)
	}
	return w, at
}
