package sweep_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sweep"
)

func TestParseGridErrors(t *testing.T) {
	_, err := sweep.Load("testdata/bad.yaml")
	var pe *scenarios.Error
	if !errors.As(err, &pe) {
		t.Fatalf("want *scenarios.Error, got %v", err)
	}
	want := []string{
		"testdata/bad.yaml:3: sweep.seeds: ",
		"testdata/bad.yaml:4: sweep.limits.max_overlap: ",
		"testdata/bad.yaml:5: sweep: unknown key \"colour\"",
		"testdata/bad.yaml:7: sweep.axes.ttl: 2s is given twice (first on line 7)",
		"testdata/bad.yaml:8: sweep.axes.read_timeout.to: is below from",
		"testdata/bad.yaml:9: sweep.axes.max_retries: \"many\"",
		"testdata/bad.yaml:10: sweep.axes.pause: the base scenario has no pause or suspend fault to size",
		"testdata/bad.yaml:11: sweep.axes: unknown key \"wiat\"",
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("missing %q in:\n%s", w, msg)
		}
	}
	if n := len(pe.Problems); n != len(want) {
		t.Errorf("%d problems, want %d:\n%s", n, len(want), msg)
	}
}

func TestParseGridRanges(t *testing.T) {
	g, err := sweep.Load("testdata/blackhole.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(g.Axes[0].Values, ","); got != "1s,2s,3s,4s,5s,6s,7s,8s,9s,10s" {
		t.Errorf("ttl axis %s", got)
	}
	if got := strings.Join(g.Axes[1].Values, ","); got != "500ms,1s,1.5s,2s,2.5s,3s,3.5s,4s,4.5s,5s" {
		t.Errorf("read_timeout axis %s", got)
	}
	if g.Cells() != 100 || g.Seeds != 100 || g.Limits.MaxGap != 12*time.Second || g.Limits.MaxOverlap != 0 || g.Limits.MaxStale != sweep.NoLimit {
		t.Errorf("grid %+v", g)
	}
}

// smallGrid: 3 × 2 × 2 cells of partition-blackhole, a few seeds.
func smallGrid(t testing.TB, seeds int) sweep.Grid {
	e, ok := scenarios.Lookup("partition-blackhole")
	if !ok {
		t.Fatal("no built-in partition-blackhole")
	}
	return sweep.Grid{
		Base:   e.Scenario,
		Seeds:  seeds,
		Limits: sweep.Limits{MaxGap: 12 * time.Second, MaxOverlap: 0, MaxStale: sweep.NoLimit},
		Axes: []sweep.Axis{
			sweep.Durations(sweep.ParamTTL, 2*time.Second, 5*time.Second, 8*time.Second),
			sweep.Durations(sweep.ParamReadTimeout, 500*time.Millisecond, 5*time.Second),
			sweep.Bools(sweep.ParamSafe, false, true),
		},
	}
}

func runJSON(t *testing.T, g sweep.Grid, o sweep.Options) []byte {
	t.Helper()
	r, err := sweep.Run(context.Background(), g, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDeterminism(t *testing.T) {
	g := smallGrid(t, 4)
	a := runJSON(t, g, sweep.Options{Workers: 4})
	prev := runtime.GOMAXPROCS(1)
	b := runJSON(t, g, sweep.Options{})
	runtime.GOMAXPROCS(prev)
	c := runJSON(t, g, sweep.Options{Workers: 1})
	if !bytes.Equal(a, b) || !bytes.Equal(a, c) {
		t.Fatal("the same sweep gave different bytes under different worker counts or GOMAXPROCS")
	}
	r, _ := sweep.ReadResult(a)
	if !r.Complete || r.Runs != 12*4 {
		t.Fatalf("complete %v runs %d", r.Complete, r.Runs)
	}
	// The finding the grid must show: spec mode with go-redis's 5s read
	// timeout overlaps; safe mode never does.
	var specOverlap bool
	for _, c := range r.Cells {
		if c.Values[2] == "true" && c.Overlap.Max > 0 {
			t.Errorf("safe-mode cell %v overlapped %v", c.Values, c.Overlap.Max)
		}
		if c.Values[2] == "false" && c.Values[1] == "5s" && c.Overlap.Max > 0 {
			specOverlap = true
		}
	}
	if !specOverlap {
		t.Error("no spec-mode overlap with a 5s read timeout")
	}
}

func TestShardMerge(t *testing.T) {
	g := smallGrid(t, 3)
	whole := runJSON(t, g, sweep.Options{})
	var shards []*sweep.Result
	for i := range 3 {
		sh, err := sweep.ParseShard(strings.Join([]string{string(rune('0' + i)), "3"}, "/"))
		if err != nil {
			t.Fatal(err)
		}
		r, err := sweep.Run(context.Background(), g, sweep.Options{Shard: sh})
		if err != nil {
			t.Fatal(err)
		}
		// Through result.json, as a CI matrix would hand them over.
		b, _ := r.JSON()
		back, err := sweep.ReadResult(b)
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, back)
	}
	// Any order.
	m, err := sweep.Merge(shards[2], shards[0], shards[1])
	if err != nil {
		t.Fatal(err)
	}
	got, _ := m.JSON()
	if !bytes.Equal(got, whole) {
		t.Fatalf("merge(shards) differs from the unsharded sweep:\n%s\n---\n%s", got[:min(len(got), 600)], whole[:min(len(whole), 600)])
	}
	// A missing shard: incomplete, its cells not run.
	part, err := sweep.Merge(shards[0], shards[1])
	if err != nil {
		t.Fatal(err)
	}
	if part.Complete || !strings.Contains(part.Incomplete, "shard 2/3 is missing") || part.Cells[2].Status != sweep.StatusNotRun {
		t.Errorf("partial merge: complete %v %q, cell 2 %s", part.Complete, part.Incomplete, part.Cells[2].Status)
	}
	if _, err := sweep.Merge(shards[0], shards[0]); err == nil {
		t.Error("a shard given twice was merged")
	}
	if _, err := sweep.ParseShard("3/3"); err == nil {
		t.Error("shard 3/3 accepted")
	}
}

func TestInterruptKeepsPartialResults(t *testing.T) {
	g := smallGrid(t, 50)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := sweep.Run(ctx, g, sweep.Options{Workers: 2, Progress: func(done, total int) {
		if done == 100 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if r == nil || r.Complete || !strings.Contains(r.Incomplete, "interrupted") {
		t.Fatalf("result %+v", r)
	}
	if r.Runs < 100 || r.Runs >= 12*50 {
		t.Errorf("%d runs kept", r.Runs)
	}
	statuses := map[string]int{}
	for _, c := range r.Cells {
		statuses[c.Status]++
		if c.Status != sweep.StatusDone && c.Safe {
			t.Errorf("cell %d is %s yet marked safe", c.Index, c.Status)
		}
	}
	if statuses[sweep.StatusDone] == 0 || statuses[sweep.StatusNotRun]+statuses[sweep.StatusPartial] == 0 {
		t.Errorf("statuses %v", statuses)
	}
	dir := t.TempDir()
	if _, err := sweep.WriteFiles(dir, r); err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if !bytes.Contains(html, []byte("Incomplete:")) {
		t.Error("the page does not say the sweep is incomplete")
	}
}

func TestWriteFiles(t *testing.T) {
	r, err := sweep.Run(context.Background(), smallGrid(t, 2), sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := sweep.WriteFiles(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	// Three multi-valued axes: three pairs, two metrics, svg + png.
	if len(files) != 2+3*2*2+1 {
		t.Errorf("files %v", files)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "cells.csv"))
	if lines := strings.Count(string(csv), "\n"); lines != 13 {
		t.Errorf("cells.csv has %d lines, want a header and 12 cells", lines)
	}
	if !strings.HasPrefix(string(csv), "cell,ttl,read_timeout,safe,status,runs,") {
		t.Errorf("csv header %q", strings.SplitN(string(csv), "\n", 2)[0])
	}
	again := t.TempDir()
	sweep.WriteFiles(again, r)
	for _, f := range files {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(again, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two writes of the same result", f)
		}
	}
}

func TestInvalidCell(t *testing.T) {
	g := smallGrid(t, 2)
	// Jitter of 1s is not below TTL/2 = 1s at TTL 2s: that cell is invalid.
	g.Axes = []sweep.Axis{sweep.Durations(sweep.ParamTTL, 2*time.Second, 5*time.Second), sweep.Durations(sweep.ParamJitter, time.Second)}
	r, err := sweep.Run(context.Background(), g, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cells[0].Status != sweep.StatusInvalid || r.Cells[0].Error == "" || r.Cells[1].Status != sweep.StatusDone {
		t.Errorf("cells %+v", r.Cells)
	}
}

// Benchmark10x10x100: the target, a 10 × 10 grid × 100 seeds
// (10,000 runs) of partition-blackhole on every core, statistics included.
func Benchmark10x10x100(b *testing.B) {
	g, err := sweep.Load("testdata/blackhole.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		start := time.Now()
		r, err := sweep.Run(context.Background(), g, sweep.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/10k-runs")
		if r.Runs != 10000 {
			b.Fatalf("%d runs", r.Runs)
		}
	}
}

// A lag axis sizes every redis-failover fault: a clean failover (lag 0s)
// keeps the lease (predicted and simulated: no stale leader); a lossy one
// may lose it however short the lag (a renewal in the lag is lost), and a
// lag past the TTL always does (a stale leader within the bound).
func TestLagAxis(t *testing.T) {
	base := model.Scenario{Name: "failover", Redis: model.RedisReplicated, Instances: 3,
		Duration: 20 * time.Second, Recovery: 8 * time.Second,
		Faults: []model.Fault{{At: 7500 * time.Millisecond, Kind: model.FaultRedisFailover}}}
	g := sweep.Grid{Name: "lag", Base: base, Seeds: 3, Axes: []sweep.Axis{sweep.Durations(sweep.ParamLag, 0, 2*time.Second, 3*time.Second)}}
	r, err := sweep.Run(context.Background(), g, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range r.Cells {
		t.Logf("lag %v: predicted overlap %v, stale max %v", c.Values, c.Predicted.MaxOverlap, c.Stale.Max)
		if clean := i == 0; clean != (c.Predicted.MaxOverlap == 0) {
			t.Errorf("lag %v: predicted overlap %v", c.Values, c.Predicted.MaxOverlap)
		}
		if (i == 0 && c.Stale.Max > 0) || (i == 2 && c.Stale.Max == 0) || c.Stale.Max > c.Predicted.MaxOverlap {
			t.Errorf("lag %v: stale leadership %v (predicted ≤ %v)", c.Values, c.Stale.Max, c.Predicted.MaxOverlap)
		}
	}
}

// fault_at moves the whole schedule: flapping-network's five resets stay
// five, 4.5 s apart, starting at the value (they collapsed into one fault
// time before).
func TestFaultAtShiftsSchedule(t *testing.T) {
	e, ok := scenarios.Lookup("flapping-network")
	if !ok {
		t.Fatal("no flapping-network built-in")
	}
	base := e.Scenario
	g := sweep.Grid{Name: "flaps", Base: base, Seeds: 1, Axes: []sweep.Axis{sweep.Durations(sweep.ParamFaultAt, 5*time.Second)}}
	sc, err := g.Scenario(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Faults) != len(base.Faults) {
		t.Fatalf("%d faults, want %d", len(sc.Faults), len(base.Faults))
	}
	shift := 5*time.Second - base.Faults[0].At
	for i, f := range sc.Faults {
		if want := base.Faults[i].At + shift; f.At != want {
			t.Errorf("fault %d at %v, want %v", i, f.At, want)
		}
	}
	if last := sc.Faults[len(sc.Faults)-1]; sc.Duration < last.At+last.For {
		t.Errorf("duration %v does not hold the last fault (%v + %v)", sc.Duration, last.At, last.For)
	}
}

// A sweep cell's verdicts are the scenario's own expectations at that
// phase; BoundFailures counts only runs that broke a "predicted" limit.
// A phase-specific expectation added to partition-blackhole,
// "overlap_windows: exactly 1" (the built-in's own until it judged only
// promises), fails where the fault lands in a phase with no overlap, and no
// bound breaks there.
func TestBoundFailuresApart(t *testing.T) {
	e, ok := scenarios.Lookup("partition-blackhole")
	if !ok {
		t.Fatal("no partition-blackhole built-in")
	}
	base := e.Scenario
	base.Expect = append(slices.Clone(base.Expect), model.Expectation{Metric: "overlap_windows", Min: "1", Max: "1"})
	g := sweep.Grid{Name: "phase", Base: base, Seeds: 1, Axes: []sweep.Axis{sweep.Durations(sweep.ParamFaultAt, 0, 1*time.Second, 2*time.Second, 3*time.Second, 4*time.Second, 5*time.Second)}}
	r, err := sweep.Run(context.Background(), g, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	failing := 0
	for _, c := range r.Cells {
		t.Logf("fault_at %v: verdicts %+v, expect failures %v, bound failures %d", c.Values, c.Verdicts, c.ExpectFailures, c.BoundFailures)
		if c.Verdicts.Fail > 0 {
			failing++
		}
		if c.BoundFailures != 0 {
			t.Errorf("fault_at %v: %d runs broke a predicted bound", c.Values, c.BoundFailures)
		}
	}
	if failing == 0 {
		t.Errorf("no cell failed its phase-specific expectation: the test proves nothing")
	}
}

// The pause axis sizes a suspend fault too (both are P in the bounds): a
// grid over the suspend built-in stops the leader for each value, and each
// cell's overlap is within its own bound, P + TTL/2 + jitter - TTL. The
// 10 s cell overlaps longer than the built-in's 8 s suspend can (5.505 s).
func TestPauseAxisSizesSuspend(t *testing.T) {
	e, ok := scenarios.Lookup("suspend")
	if !ok {
		t.Fatal("no suspend built-in")
	}
	sizes := []time.Duration{4 * time.Second, 10 * time.Second}
	g := sweep.Grid{Name: "suspend", Base: e.Scenario, Seeds: 2, Axes: []sweep.Axis{sweep.Durations(sweep.ParamPause, sizes...)}}
	for i, p := range sizes {
		sc, err := g.Scenario(i, 1)
		if err != nil {
			t.Fatal(err)
		}
		if f := sc.Faults[0]; f.Kind != model.FaultSuspend || f.For != p {
			t.Errorf("cell %d: fault %s for %v, want suspend for %v", i, f.Kind, f.For, p)
		}
	}
	r, err := sweep.Run(context.Background(), g, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := e.Scenario.Params.WithDefaults()
	bound := func(pause time.Duration) time.Duration { return pause + p.TTL/2 + p.Jitter() - p.TTL }
	for i, c := range r.Cells {
		t.Logf("suspend %v: overlap %v, predicted %v", c.Values, c.Overlap.Max, c.Predicted.MaxOverlap)
		if c.Predicted.MaxOverlap != bound(sizes[i]) {
			t.Errorf("suspend %v: predicted overlap %v, want P + TTL/2 + jitter - TTL = %v", c.Values, c.Predicted.MaxOverlap, bound(sizes[i]))
		}
		if c.Overlap.Max > c.Predicted.MaxOverlap || c.BoundFailures > 0 {
			t.Errorf("suspend %v: overlap %v above its bound %v (%d bound failures)", c.Values, c.Overlap.Max, c.Predicted.MaxOverlap, c.BoundFailures)
		}
	}
	if last := r.Cells[len(r.Cells)-1]; last.Overlap.Max <= bound(e.Scenario.Faults[0].For) {
		t.Errorf("suspend 10s: overlap %v, want above the 8s suspend's bound %v: the axis did not size the fault", last.Overlap.Max, bound(e.Scenario.Faults[0].For))
	}
}
