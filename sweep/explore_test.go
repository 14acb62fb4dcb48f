package sweep

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

func builtinScenario(t testing.TB, name string) model.Scenario {
	t.Helper()
	sc, err := scenarios.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func worstOf(t testing.TB, r *ExploreResult, metric string) Worst {
	t.Helper()
	for _, w := range r.Worst {
		if w.Metric == metric {
			return w
		}
	}
	t.Fatalf("no %s in the result", metric)
	return Worst{}
}

// The result is a pure function of the space: any number of workers, and
// the shards merged, give the same bytes.
func TestExploreDeterministicAndSharded(t *testing.T) {
	s := Space{Base: builtinScenario(t, "partition-blackhole"), Seeds: 3, Budget: 3 * 300}
	ctx := context.Background()
	one, err := Explore(ctx, s, ExploreOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := one.JSON()
	many, err := Explore(ctx, s, ExploreOptions{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := many.JSON(); !bytes.Equal(got, want) {
		t.Fatalf("4 workers gave another result than 1")
	}
	var shards []*ExploreResult
	for i := range 2 {
		r, err := Explore(ctx, s, ExploreOptions{Shard: Shard{I: i, N: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Complete || r.Runs == 0 || r.Runs >= one.Runs {
			t.Fatalf("shard %d: complete %v, %d runs of %d", i, r.Complete, r.Runs, one.Runs)
		}
		data, _ := r.JSON()
		back, err := ReadExploreResult(data) // through result.json, as the CLI merges
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, back)
	}
	merged, err := MergeExplore(shards[1], shards[0])
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := merged.JSON(); !bytes.Equal(got, want) {
		t.Fatalf("merged shards differ from the whole search:\n%s\nwant\n%s", got, want)
	}
	if _, err := MergeExplore(shards[0]); err != nil {
		t.Fatal(err)
	} else if m, _ := MergeExplore(shards[0]); m.Complete {
		t.Fatal("a merge missing a shard is complete")
	}
	if _, err := MergeExplore(shards[0], shards[0]); err == nil {
		t.Fatal("a shard given twice merged")
	}
}

// partition-blackhole's worst overlap comes within 2% of its bound: the
// partition must start just after a renewal, and a follower's attempt
// must fall right at the key's expiry (the followers' starts move).
func TestExploreReachesBlackholeBound(t *testing.T) {
	s := Space{Base: builtinScenario(t, "partition-blackhole"), Metrics: []string{exOverlap}, Seeds: 2, Budget: 2 * 1500}
	r, err := Explore(context.Background(), s, ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := worstOf(t, r, exOverlap)
	t.Logf("overlap %v of %v (ratio %.4f) in %d runs, %v", w.Measured, w.Predicted, w.Ratio, r.Runs, r.Elapsed)
	if w.Violated || w.Ratio < 0.98 {
		t.Fatalf("worst overlap %v, bound %v: ratio %.4f, want 0.98 to 1", w.Measured, w.Predicted, w.Ratio)
	}
	// The file reproduces it, to the nanosecond.
	sc, err := r.WorstScenario(w)
	if err != nil {
		t.Fatal(err)
	}
	y, err := scenarios.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := scenarios.Parse("worst-overlap.yaml", y)
	if err != nil {
		t.Fatalf("the schedule file does not parse: %v\n%s", err, y)
	}
	res, err := virtual.Run(back, virtual.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Analysis.Summary.MaxOverlap != w.Measured || res.Verdict != model.Pass {
		t.Fatalf("the file's run: overlap %v (%s), the search's %v", res.Analysis.Summary.MaxOverlap, res.Verdict, w.Measured)
	}
}

// A follower's start phase is circular: clock-drift's worst gap (Wait)
// needs both followers' attempts just before the key's expiry, reached only
// by a start stepping past Wait and coming back at its other end. With the
// starts clamped the search stopped at 5.498 s of 6 s (8,000 runs).
func TestExploreWrapsFollowerStarts(t *testing.T) {
	s := Space{Base: builtinScenario(t, "clock-drift"), Metrics: []string{exGap}, Seeds: 8, Budget: 8000}
	r, err := Explore(context.Background(), s, ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w := worstOf(t, r, exGap)
	t.Logf("gap %v of %v (ratio %.4f) in %d runs", w.Measured, w.Predicted, w.Ratio, r.Runs)
	if w.Violated || w.Ratio < 0.99 {
		t.Fatalf("worst gap %v, bound %v: ratio %.4f, want 0.99 to 1", w.Measured, w.Predicted, w.Ratio)
	}
}

func TestWrapStart(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{0, 0}, {5 * time.Second, 5 * time.Second}, {6 * time.Second, 0},
		{6500 * time.Millisecond, 500 * time.Millisecond}, {-time.Microsecond, 6*time.Second - time.Microsecond},
	} {
		if got := wrapStart(c.in, 6*time.Second); got != c.want {
			t.Errorf("wrapStart(%v, 6s) = %v, want %v", c.in, got, c.want)
		}
	}
}

// The robust schedule's floor is what its moves by ±RobustDelta measure:
// partition-blackhole's stale leadership holds within 5% of its bound
// however the real backend's timing falls.
func TestExploreRobust(t *testing.T) {
	s := Space{Base: builtinScenario(t, "partition-blackhole"), Metrics: []string{exStale}, Seeds: 1, Budget: 2000}
	r, err := Explore(context.Background(), s, ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	x, w := r.Robust[0], r.Worst[0]
	t.Logf("worst %v, robust %v, floor %v within ±%v, bound %v", w.Measured, x.Measured, x.Floor, x.Delta, w.Predicted)
	if !x.Found || x.Floor > x.Measured || x.Measured > w.Measured || float64(x.Floor) < 0.95*float64(w.Predicted) {
		t.Fatalf("robust %+v against worst %v", x, w.Measured)
	}
	l := &lane{s: r.Space.withDefaults(), ctx: context.Background(), progress: func() {}, budget: 100, limit: 100, done: map[string][]Worst{}, best: make([]Worst, 1)}
	floor, err := l.floor(x.Schedule, 0)
	if err != nil || floor != x.Floor {
		t.Fatalf("recomputed floor %v (%v), want %v", floor, err, x.Floor)
	}
}

// An interrupted search returns what it found, marked incomplete.
func TestExploreInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := Space{Base: builtinScenario(t, "partition-blackhole"), Seeds: 2, Budget: 1 << 30}
	r, err := Explore(ctx, s, ExploreOptions{Workers: 1, Progress: func(done, total int) {
		if done >= 512 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || r == nil || r.Complete || r.Runs < 512 {
		t.Fatalf("err %v, result %v", err, r != nil)
	}
	if w := worstOf(t, r, exOverlap); !w.Found || w.Measured <= 0 {
		t.Fatalf("the interrupted search kept no worst overlap: %+v", w)
	}
	if !strings.Contains(r.Incomplete, "interrupted") {
		t.Fatalf("incomplete: %q", r.Incomplete)
	}
}

func TestExploreWritesReproducingFiles(t *testing.T) {
	s := Space{Base: builtinScenario(t, "pause"), Seeds: 1, Budget: 300}
	r, err := Explore(context.Background(), s, ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := WriteExplore(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"result.json", "explore.md", "index.html", "worst-overlap.yaml", "worst-gap.yaml", "robust-overlap.yaml"} {
		if !strings.Contains(strings.Join(files, " "), want) {
			t.Fatalf("%s not written: %v", want, files)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "explore.md"))
	for _, want := range []string{"| max_overlap |", "ratio", "pause: "} {
		if !bytes.Contains(md, []byte(want)) {
			t.Fatalf("explore.md lacks %q:\n%s", want, md)
		}
	}
	sc, err := scenarios.Load(filepath.Join(dir, "worst-overlap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Expect) != 1 || sc.Expect[0].Metric != model.MetricMaxOverlap || sc.Expect[0].Max != "predicted" {
		t.Fatalf("the schedule file's expectations: %+v", sc.Expect)
	}
}

func TestParseRangeAndMetric(t *testing.T) {
	r, err := ParseRange("for=1s..14s")
	if err != nil || r != (Range{Param: ParamFor, Lo: "1s", Hi: "14s"}) {
		t.Fatalf("%+v %v", r, err)
	}
	if r, err := ParseRange("rate=0.2..0.9"); err != nil || r.Param != ParamClockRate || r.at(0.5) != "0.55" {
		t.Fatalf("%+v %v %s", r, err, r.at(0.5))
	}
	for _, bad := range []string{"for", "for=1s", "size=1s..2s", "for=2s..1s", "latency=x..1s"} {
		if _, err := ParseRange(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	if m, err := ParseMetric("gap"); err != nil || m != exGap {
		t.Fatal(m, err)
	}
	if _, err := ParseMetric("speed"); err == nil {
		t.Fatal("speed parsed")
	}
	bad := Space{Base: builtinScenario(t, "pause"), Vary: []Range{{Param: ParamLag, Lo: "0s", Hi: "1s"}}}
	if err := bad.withDefaults().Check(); err == nil || !strings.Contains(err.Error(), "redis-failover") {
		t.Fatalf("vary lag on a pause scenario: %v", err)
	}
}

// A run that measured 0 of a 0 bound found nothing, so it ranks below any
// run that came near its bound; broken bounds rank by excess, kept ones by
// their share of the bound. Ranked by excess alone (0 for 0 of 0), a
// --vary pause search refined only schedules where nothing happened.
func TestWorstRanking(t *testing.T) {
	s := time.Second
	w := func(measured, predicted time.Duration) Worst {
		return Worst{Found: true, Measured: measured, Predicted: predicted}
	}
	for _, tt := range []struct {
		name string
		a, b Worst
	}{
		{"near a bound beats 0 of 0", w(2999*time.Millisecond, 3001*time.Millisecond), w(0, 0)},
		{"a violation beats 0 of 0", w(6*s, 3*s), w(0, 0)},
		{"a larger excess beats a smaller", w(6*s, 3*s), w(4*s, 3*s)},
		{"any violation beats a kept bound", w(3100*time.Millisecond, 3*s), w(10*s, 11*s)},
		{"a larger share of the bound beats a smaller excess", w(2900*time.Millisecond, 3*s), w(8*s, 11*s)},
		{"a found run beats one not found", w(0, 0), Worst{Measured: 5 * s, Predicted: 3 * s}},
	} {
		if !tt.a.worse(tt.b) || tt.b.worse(tt.a) {
			t.Errorf("%s: %+v should rank above %+v", tt.name, tt.a, tt.b)
		}
	}
}

// Each worst names the formula its check judged it by (model.Check.Formula):
// a redis-pause's stale leadership is its own stale term, not the overlap's
// nor a failover chain's, and faults in force together name their
// composition. explore printed "predicted 6.501s ()" for the first and a
// failover chain for a lone redis-pause.
func TestExploreNamesTheChecksFormula(t *testing.T) {
	rp := builtinScenario(t, "redis-pause")
	two := rp
	two.Faults = append(slices.Clone(rp.Faults), model.Fault{At: 5 * time.Second, Kind: model.FaultRedisRestart})
	for _, tt := range []struct {
		name        string
		sc          model.Scenario
		metric      string
		want, wantn string
	}{
		{"stale", rp, exStale, "redis-pause: max(0, min(P, C) - TTL/2 + jitter + hop)", ""},
		{"failover", rp, exFailover, "redis-pause: ", "chained"},
		{"composed", two, exStale, "composed with a key lost", ""},
	} {
		s := Space{Base: tt.sc, Metrics: []string{tt.metric}, Seeds: 1, Budget: 40}
		r, err := Explore(context.Background(), s, ExploreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w := worstOf(t, r, tt.metric)
		if !strings.Contains(w.Formula, tt.want) || (tt.wantn != "" && strings.Contains(w.Formula, tt.wantn)) {
			t.Errorf("%s: formula %q, want it to say %q (and not %q)", tt.name, w.Formula, tt.want, tt.wantn)
		}
	}
}
