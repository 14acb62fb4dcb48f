package sweep

import (
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/virtual"
)

// FormatVersion is the version of result.json's layout.
const FormatVersion = 1

// Shard names one deterministic slice of a sweep's cells: cell k belongs to
// shard k mod N. The zero value (N 0) is the whole sweep.
type Shard struct {
	I int `json:"i"`
	N int `json:"n"`
}

// ParseShard reads "i/n" (0 ≤ i < n), as --shard takes it.
func ParseShard(s string) (Shard, error) {
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.I, &sh.N); err != nil || fmt.Sprintf("%d/%d", sh.I, sh.N) != s {
		return Shard{}, fmt.Errorf("shard %q: want i/n, e.g. 0/4", s)
	}
	return sh, sh.check()
}

func (s Shard) check() error {
	if s.N == 0 && s.I == 0 {
		return nil
	}
	if s.N < 1 || s.I < 0 || s.I >= s.N {
		return fmt.Errorf("shard %d/%d: want 0 ≤ i < n", s.I, s.N)
	}
	return nil
}

func (s Shard) owns(cell int) bool { return s.N <= 1 || cell%s.N == s.I }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// Options configure Run.
type Options struct {
	// Workers is how many runs execute at once; default GOMAXPROCS.
	Workers int
	// Shard runs only the cells of one shard (zero value: all).
	Shard Shard
	// Virtual configures the backend.
	Virtual virtual.Options
	// Progress, if set, is called after each finished run with the runs
	// done and the runs this sweep (or shard) will make. It is called from
	// the worker goroutines, one call at a time.
	Progress func(done, total int)
}

// Cell statuses.
const (
	StatusDone    = "done"    // every seed ran
	StatusPartial = "partial" // interrupted: some seeds ran
	StatusNotRun  = "not run" // interrupted before any seed, or another shard's cell
	StatusInvalid = "invalid" // the cell's scenario is invalid (Error says why)
)

// Stat summarises one metric over a cell's runs: the values of the runs
// that measured it (N of them), and the seed of the worst.
type Stat struct {
	N         int           `json:"n"`
	P50       time.Duration `json:"p50"`
	P99       time.Duration `json:"p99"`
	Max       time.Duration `json:"max"`
	WorstSeed int64         `json:"worst_seed,omitempty"`
}

// Verdicts counts the runs' verdicts.
type Verdicts struct {
	Pass    int `json:"pass"`
	Fail    int `json:"fail"`
	Unknown int `json:"unknown"`
}

// MetricCount is how many runs failed the expectation on one metric.
type MetricCount struct {
	Metric string `json:"metric"`
	Runs   int    `json:"runs"`
}

// Work is the worst over a cell's runs of what the TaskRunner's chores and
// tasks went through (analysis.Summary's counts), each with the lowest seed
// that reached it.
type Work struct {
	DuplicateChores CountStat `json:"duplicate_chores"`
	StaleChores     CountStat `json:"stale_chores"`
	RepeatedTasks   CountStat `json:"duplicate_tasks"`
	LostTasks       CountStat `json:"lost_tasks"`
}

// workMetrics name Work's counts, in the order of Work.counts (the
// expectation metrics of the same names).
var workMetrics = []string{exDupChores, exStaleChores, exDupTasks, string(model.MetricLostTasks)}

// counts are w's counts in the order of workMetrics.
func (w Work) counts() []CountStat {
	return []CountStat{w.DuplicateChores, w.StaleChores, w.RepeatedTasks, w.LostTasks}
}

// CountStat is the largest of a count over a cell's runs and the lowest
// seed that had it (0 when no run counted any).
type CountStat struct {
	Max       int   `json:"max"`
	WorstSeed int64 `json:"worst_seed,omitempty"`
}

func (c *CountStat) add(n int, seed int64) {
	if n > c.Max {
		c.Max, c.WorstSeed = n, seed
	}
}

// Prediction is the analytic worst case for a cell: the maximum of
// bounds.PredictMode over the failure modes of the cell's faults.
type Prediction struct {
	MaxGap     time.Duration `json:"max_gap"`
	MaxOverlap time.Duration `json:"max_overlap"`
}

// Cell is one point of the grid and what its runs measured.
type Cell struct {
	Index  int      `json:"index"`
	Values []string `json:"values"`
	Status string   `json:"status"`
	Error  string   `json:"error,omitempty"`
	// Runs is how many seeds ran.
	Runs     int      `json:"runs"`
	Verdicts Verdicts `json:"verdicts"`
	// Gap, Overlap and Stale are the runs' longest gap, overlap and stale
	// leadership (0 when a run had none); Failover the longest time from a
	// fault's injection to a stable leader, over the runs that measured one.
	Gap      Stat `json:"gap"`
	Overlap  Stat `json:"overlap"`
	Stale    Stat `json:"stale"`
	Failover Stat `json:"failover"`
	// RunsWithOverlap counts runs that had any overlap.
	RunsWithOverlap int `json:"runs_with_overlap"`
	// Work is the worst of the runs' chores and tasks (runner mode; nil
	// in elector mode).
	Work *Work `json:"work,omitempty"`
	// ExpectFailures counts failed expectations by metric.
	ExpectFailures []MetricCount `json:"expect_failures,omitempty"`
	// BoundFailures counts the runs in which a "predicted" limit failed:
	// a measurement above the analytic worst case, a finding about the
	// bound. A cell's verdicts are the scenario's own expectations at that
	// cell: a phase-specific one ("overlap_windows: exactly 1") can fail at
	// another phase with no bound broken.
	BoundFailures int        `json:"bound_failures,omitempty"`
	Predicted     Prediction `json:"predicted"`
	// Safe: every run done and the worst one keeps the sweep's limits.
	Safe bool `json:"safe"`
}

// Result is a sweep's outcome. Its JSON (Result.JSON) is byte-deterministic.
type Result struct {
	Format int  `json:"format"`
	Grid   Grid `json:"grid"`
	// Shard is set on a shard's result; Merge clears it.
	Shard *Shard `json:"shard,omitempty"`
	// Complete is false when the sweep was interrupted; Incomplete says why.
	Complete   bool   `json:"complete"`
	Incomplete string `json:"incomplete,omitempty"`
	Runs       int    `json:"runs"`
	Cells      []Cell `json:"cells"`

	// Elapsed is the wall time of the sweep (not in result.json: it would
	// break byte-determinism).
	Elapsed time.Duration `json:"-"`
}

// runRec is what one run leaves for the statistics.
type runRec struct {
	done                    bool
	verdict                 model.Verdict
	gap, overlap, stale, fo time.Duration
	hasFailover             bool
	failed                  []string
	boundFailed             bool
	runner                  bool
	dupChores, staleChores  int
	repTasks, lostTasks     int
}

// Run runs the sweep (or one shard of it) on a worker pool. If ctx is
// cancelled, runs in flight finish, no new one starts, and the Result is
// returned with Complete false and the cells marked partial or not run,
// together with ctx's error. An error in the grid itself returns nil.
func Run(ctx context.Context, g Grid, o Options) (*Result, error) {
	g = g.withDefaults()
	if err := g.Check(); err != nil {
		return nil, err
	}
	if err := o.Shard.check(); err != nil {
		return nil, err
	}
	start := time.Now()
	n := g.Cells()
	res := &Result{Format: FormatVersion, Grid: g, Complete: true, Cells: make([]Cell, n)}
	if o.Shard.N > 1 {
		sh := o.Shard
		res.Shard = &sh
	}
	// The jobs: every (cell, seed) of the shard's valid cells, in grid order.
	scs := make([]model.Scenario, n)
	var jobs []int // cell*Seeds + seed index
	for i := range n {
		c := &res.Cells[i]
		c.Index, c.Values, c.Status = i, g.Values(i), StatusNotRun
		if !o.Shard.owns(i) {
			continue
		}
		sc, err := g.Scenario(i, g.FirstSeed)
		if err != nil {
			c.Status, c.Error = StatusInvalid, err.Error()
			continue
		}
		scs[i] = sc
		c.Predicted = predict(sc)
		for k := range g.Seeds {
			jobs = append(jobs, i*g.Seeds+k)
		}
	}
	recs := make([]runRec, n*g.Seeds)
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var next, done atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(workers, max(len(jobs), 1)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				j := int(next.Add(1)) - 1
				if j >= len(jobs) {
					return
				}
				slot := jobs[j]
				cell, k := slot/g.Seeds, slot%g.Seeds
				sc := scs[cell]
				sc.Seed = g.FirstSeed + int64(k)
				r, err := virtual.Run(sc, o.Virtual)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("cell %d seed %d: %w", cell, sc.Seed, err)
					}
					mu.Unlock()
					continue
				}
				recs[slot] = record(r)
				d := done.Add(1)
				if o.Progress != nil {
					mu.Lock()
					o.Progress(int(d), len(jobs))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for i := range res.Cells {
		if scs[i].Name != "" {
			aggregate(&res.Cells[i], recs[i*g.Seeds:(i+1)*g.Seeds], g)
		}
		res.Runs += res.Cells[i].Runs
	}
	res.Elapsed = time.Since(start)
	switch {
	case ctx.Err() != nil:
		res.Complete = false
		res.Incomplete = fmt.Sprintf("interrupted after %d of %d runs: %v", done.Load(), len(jobs), ctx.Err())
		return res, ctx.Err()
	case firstErr != nil:
		res.Complete = false
		res.Incomplete = "a run failed: " + firstErr.Error()
		return res, firstErr
	}
	return res, nil
}

// predict is the worst analytic bound over the modes of sc's faults
// (bounds.PredictScheduled).
func predict(sc model.Scenario) Prediction {
	var p Prediction
	for _, pr := range bounds.PredictScheduled(sc) {
		p.MaxGap, p.MaxOverlap = max(p.MaxGap, pr.MaxGap), max(p.MaxOverlap, pr.MaxOverlap)
	}
	return p
}

// record keeps what the statistics need of one run.
func record(r *verdict.Result) runRec {
	s := r.Analysis.Summary
	rec := runRec{done: true, verdict: r.Verdict, gap: s.MaxGap, overlap: s.MaxOverlap, stale: s.MaxStale,
		runner: r.Scenario.Mode == model.ModeRunner, dupChores: s.DuplicateChores, staleChores: s.StaleChores, repTasks: s.TasksRepeated, lostTasks: s.TasksLost}
	if s.Failover.Count > 0 {
		rec.fo, rec.hasFailover = s.Failover.Max, true
	}
	for _, c := range r.Checks {
		if c.Verdict == model.Fail && !slices.Contains(rec.failed, string(c.Metric)) {
			rec.failed = append(rec.failed, string(c.Metric))
		}
		if c.Verdict == model.Fail && strings.HasSuffix(c.Limit, "predicted") {
			rec.boundFailed = true
		}
	}
	return rec
}

// aggregate computes a cell's statistics from its runs, in seed order.
func aggregate(c *Cell, recs []runRec, g Grid) {
	var gap, ov, st, fo []sample
	fails := map[string]int{}
	c.Runs = 0
	for k, r := range recs {
		if !r.done {
			continue
		}
		seed := g.FirstSeed + int64(k)
		c.Runs++
		switch r.verdict {
		case model.Pass:
			c.Verdicts.Pass++
		case model.Fail:
			c.Verdicts.Fail++
		default:
			c.Verdicts.Unknown++
		}
		gap = append(gap, sample{r.gap, seed})
		ov = append(ov, sample{r.overlap, seed})
		st = append(st, sample{r.stale, seed})
		if r.hasFailover {
			fo = append(fo, sample{r.fo, seed})
		}
		if r.overlap > 0 {
			c.RunsWithOverlap++
		}
		for _, m := range r.failed {
			fails[m]++
		}
		if r.boundFailed {
			c.BoundFailures++
		}
		if r.runner {
			if c.Work == nil {
				c.Work = &Work{}
			}
			c.Work.DuplicateChores.add(r.dupChores, seed)
			c.Work.StaleChores.add(r.staleChores, seed)
			c.Work.RepeatedTasks.add(r.repTasks, seed)
			c.Work.LostTasks.add(r.lostTasks, seed)
		}
	}
	c.Gap, c.Overlap, c.Stale, c.Failover = stat(gap), stat(ov), stat(st), stat(fo)
	for m, n := range fails {
		c.ExpectFailures = append(c.ExpectFailures, MetricCount{Metric: m, Runs: n})
	}
	sort.Slice(c.ExpectFailures, func(i, j int) bool { return c.ExpectFailures[i].Metric < c.ExpectFailures[j].Metric })
	switch {
	case c.Runs == len(recs) && c.Runs > 0:
		c.Status = StatusDone
	case c.Runs > 0:
		c.Status = StatusPartial
	default:
		c.Status = StatusNotRun
	}
	c.Safe = c.Status == StatusDone && withinLimits(g.Limits, c.Gap.Max, c.Overlap.Max, c.Stale.Max)
	if l := g.Limits.MaxDuplicateChores; l != nil && c.Work != nil && c.Work.DuplicateChores.Max > *l {
		c.Safe = false
	}
}

func withinLimits(l Limits, gap, overlap, stale time.Duration) bool {
	return gap <= l.gapLimit() && overlap <= l.MaxOverlap && stale <= l.MaxStale
}

type sample struct {
	d    time.Duration
	seed int64
}

// stat: nearest-rank percentiles; the worst seed is the lowest seed with
// the maximum value.
func stat(s []sample) Stat {
	if len(s) == 0 {
		return Stat{}
	}
	slices.SortStableFunc(s, func(a, b sample) int { return cmp.Compare(a.d, b.d) })
	rank := func(p float64) time.Duration {
		k := int(p*float64(len(s))+0.999999999) - 1
		return s[min(max(k, 0), len(s)-1)].d
	}
	worst := s[len(s)-1]
	for _, x := range s {
		if x.d == worst.d && x.seed < worst.seed {
			worst = x
		}
	}
	return Stat{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: worst.d, WorstSeed: worst.seed}
}

// JSON is the result as result.json holds it: indented, byte-deterministic.
func (r *Result) JSON() ([]byte, error) { return indentJSON(r) }

// ReadResult reads a result.json.
func ReadResult(data []byte) (*Result, error) {
	var r Result
	if err := readJSON(data, "sweep", &r, &r.Format); err != nil {
		return nil, err
	}
	return &r, nil
}

// indentJSON encodes v as result.json holds it: indented, byte-deterministic.
func indentJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// readJSON decodes a result.json of what ("sweep", "explore") into v, and
// checks its layout's version (*format, once decoded).
func readJSON(data []byte, what string, v any, format *int) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("reading a %s result: %w", what, err)
	}
	if *format != FormatVersion {
		return fmt.Errorf("%s result format %d; this build reads %d", what, *format, FormatVersion)
	}
	return nil
}

// Merge combines the results of a sweep's shards into the result of the
// whole sweep: each cell is taken from the shard that owns it. Every shard
// must come from the same grid and shard count; a missing or interrupted
// shard leaves its cells as they are (not run, partial) and the merged
// result incomplete. Merge of all the shards equals the unsharded Run byte
// for byte.
func Merge(shards ...*Result) (*Result, error) {
	if len(shards) == 0 {
		return nil, errors.New("merge: no shard results")
	}
	parts := make([]shardPart, len(shards))
	for i, s := range shards {
		parts[i] = shardPart{key: s.Grid, shard: s.Shard, complete: s.Complete, incomplete: s.Incomplete, size: len(s.Cells)}
	}
	n, have, why, err := checkShards("sweep", "grids", "cells", shards[0].Grid.Cells(), parts)
	if err != nil {
		return nil, err
	}
	out := &Result{Format: FormatVersion, Grid: shards[0].Grid, Complete: true, Cells: make([]Cell, len(shards[0].Cells))}
	for k := range out.Cells {
		if i, ok := have[k%n]; ok {
			out.Cells[k] = shards[i].Cells[k]
		} else {
			out.Cells[k] = Cell{Index: k, Values: out.Grid.Values(k), Status: StatusNotRun}
		}
		out.Runs += out.Cells[k].Runs
	}
	for _, i := range have {
		out.Elapsed += shards[i].Elapsed
	}
	if len(why) > 0 {
		out.Complete = false
		out.Incomplete = "merged: " + joinSemi(why)
	}
	return out, nil
}

// shardPart is what checkShards needs of one shard's result: what names
// the whole (the grid or the space), its shard, whether it completed, and
// how many cells or seeds it holds.
type shardPart struct {
	key        any
	shard      *Shard
	complete   bool
	incomplete string
	size       int
}

// checkShards checks that the parts are shards of one whole (the same key,
// the same shard count, each shard once, size entries each), and returns
// the shard count, the index of the part holding each shard, and why the
// merge is incomplete (missing or incomplete shards, sorted). what names
// the whole ("sweep"), keys what tells them apart ("grids"), items what
// size counts ("cells").
func checkShards(what, keys, items string, size int, parts []shardPart) (int, map[int]int, []string, error) {
	if len(parts) == 0 {
		return 0, nil, nil, errors.New("merge: no shard results")
	}
	kj, err := json.Marshal(parts[0].key)
	if err != nil {
		return 0, nil, nil, err
	}
	n := 1
	if parts[0].shard != nil {
		n = max(parts[0].shard.N, 1)
	}
	have := map[int]int{}
	for i, p := range parts {
		j, _ := json.Marshal(p.key)
		if !bytes.Equal(kj, j) {
			return 0, nil, nil, fmt.Errorf("merge: the shards come from different %ss (their %s differ)", what, keys)
		}
		sh := Shard{I: 0, N: 1}
		if p.shard != nil {
			sh = *p.shard
		}
		if sh.N != n {
			return 0, nil, nil, fmt.Errorf("merge: shard %v does not belong to a %s of %d shards", sh, what, n)
		}
		if _, dup := have[sh.I]; dup {
			return 0, nil, nil, fmt.Errorf("merge: shard %v is given twice", sh)
		}
		if p.size != size {
			return 0, nil, nil, fmt.Errorf("merge: shard %v has %d %s; the %s has %d", sh, p.size, items, what, size)
		}
		have[sh.I] = i
	}
	var why []string
	for i := range n {
		k, ok := have[i]
		switch {
		case !ok:
			why = append(why, fmt.Sprintf("shard %d/%d is missing", i, n))
		case !parts[k].complete:
			why = append(why, fmt.Sprintf("shard %d/%d is incomplete (%s)", i, n, parts[k].incomplete))
		}
	}
	slices.Sort(why)
	return n, have, why, nil
}

func joinSemi(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(x)
	}
	return b.String()
}
