package reports

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"

	"github.com/leaselab/leaselab/model"
)

// churn builds a result with n instances whose leadership moves around under
// a fault every few seconds, crashes with restarts among them. Its analysis
// comes from analysis.Analyze: this feeds the plot, not a golden file.
func churn(n int, seed uint64) *verdict.Result {
	r := rand.New(rand.NewPCG(seed, 2))
	ids := make([]string, n)
	var tl model.Timeline
	for i := range n {
		ids[i] = fmt.Sprintf("%032x", i+1)
		tl = append(tl, model.Event{At: 0, Kind: model.InstanceStarted, Instance: i, ID: ids[i]})
	}
	kinds := []model.FaultKind{model.FaultCrash, model.FaultPartition, model.FaultPause, model.FaultLatency, model.FaultRedisRestart}
	var faults []model.Fault
	at, leader := 100*time.Millisecond, 0
	for id := 0; at < 60*time.Second; id++ {
		tl = append(tl,
			model.Event{At: at - time.Millisecond, Kind: model.RedisHolder, Instance: -1, Holder: ids[leader]},
			model.Event{At: at, Kind: model.LeaderGained, Instance: leader, ID: ids[leader]})
		hold := time.Duration(3+r.IntN(8)) * time.Second
		k := kinds[id%len(kinds)]
		fat, length := at+hold-2*time.Second, 4*time.Second
		if k == model.FaultRedisRestart {
			length = 0
		}
		tl = append(tl,
			model.Event{At: fat, Kind: model.FaultApplied, Instance: -1, Fault: string(k), FaultID: id, Target: []int{leader}},
			model.Event{At: fat + length, Kind: model.FaultHealed, Instance: -1, Fault: string(k), FaultID: id, Target: []int{leader}})
		faults = append(faults, model.Fault{At: fat, For: length, Kind: k, Target: model.Target{Indexes: []int{leader}}})
		end := at + hold
		if k == model.FaultCrash {
			tl = append(tl, model.Event{At: end, Kind: model.InstanceCrashed, Instance: leader, ID: ids[leader]})
			ids[leader] = fmt.Sprintf("%032x", 1000+id)
			tl = append(tl, model.Event{At: end + 4*time.Second, Kind: model.InstanceStarted, Instance: leader, ID: ids[leader]})
		} else {
			tl = append(tl, model.Event{At: end, Kind: model.LeaderLost, Instance: leader, ID: ids[leader]})
		}
		// The next leader starts up to 2s after (a gap) or 1s before (an
		// overlap) the last one ends.
		at = end + time.Duration(r.IntN(3000)-1000)*time.Millisecond
		leader = (leader + 1 + r.IntN(n-1)) % n
	}
	tl = append(tl, model.Event{At: at + 5*time.Second, Kind: model.RunEnded, Instance: -1, Detail: "complete"})
	p := model.Params{}.WithDefaults()
	sorted := append(model.Timeline(nil), tl...)
	a := analysis.Analyze(sorted, p)
	return &verdict.Result{
		RunID: "churn", Scenario: model.Scenario{Name: fmt.Sprintf("churn-%d", n), Instances: n, Faults: faults, Mode: model.ModeElector, TimeScale: 1},
		Params: p, Seed: int64(seed), TimeScale: 1, Complete: true, Evaluation: verdict.Evaluation{Verdict: model.Pass},
		Timeline: tl, Analysis: a, Predictions: bounds.Predict(p, model.FaultSize{}), Elapsed: a.End,
	}
}

func decodePNG(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestPlotScalesWithLanes: more instances make a taller figure, so that 50
// lanes stay readable, and the width stays fixed.
func TestPlotScalesWithLanes(t *testing.T) {
	t.Parallel()
	var heights []int
	width := 0
	for _, n := range []int{3, 12, 50} {
		svg, pngb, err := Plot(churn(n, 1))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(bytes.TrimSpace(svg), []byte("<?xml")) || !bytes.Contains(svg, []byte("<svg")) {
			t.Fatalf("%d instances: not an SVG", n)
		}
		img := decodePNG(t, pngb)
		b := img.Bounds()
		if width != 0 && b.Dx() != width {
			t.Errorf("%d instances: width %d; want %d", n, b.Dx(), width)
		}
		width = b.Dx()
		heights = append(heights, b.Dy())
		if dir := os.Getenv("LEASELAB_PLOT_DIR"); dir != "" {
			// For looking at the figures: LEASELAB_PLOT_DIR=/tmp/plots go test -run Plot ./reports/
			_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("churn-%d.png", n)), pngb, 0o644)
		}
	}
	if !(heights[0] < heights[1] && heights[1] < heights[2]) {
		t.Errorf("heights %v do not grow with the number of lanes", heights)
	}
	// At 144 dpi a 50-lane figure should still give each lane several
	// pixels: at least 10 px per lane on average.
	if heights[2] < 50*10 {
		t.Errorf("50 lanes in %d px", heights[2])
	}
}

// TestPlotDegenerate: nothing to draw is still a figure, not a panic.
func TestPlotDegenerate(t *testing.T) {
	t.Parallel()
	for name, res := range map[string]*verdict.Result{
		"empty":        {},
		"no events":    {Scenario: model.Scenario{Instances: 3}},
		"open belief":  {Analysis: analysis.Analysis{End: time.Second, Beliefs: []analysis.Belief{{Member: model.Member{Instance: 0, ID: "x"}, Window: model.Window{Start: 0, End: time.Second, Duration: time.Second, Open: true}}}}},
		"unknown key":  {Timeline: model.Timeline{{At: 0, Kind: model.RedisHolder, Instance: -1, Holder: "stranger"}, {At: time.Second, Kind: model.RunEnded, Instance: -1}}, Analysis: analysis.Analysis{End: time.Second}},
		"open fault":   {Analysis: analysis.Analysis{End: time.Second, Faults: []model.FaultOutcome{{FaultSpan: model.FaultSpan{Kind: "pause", Applied: 500 * time.Millisecond, Healed: time.Second, Open: true}}}}},
		"unknown kind": {Analysis: analysis.Analysis{End: time.Second, Faults: []model.FaultOutcome{{FaultSpan: model.FaultSpan{Kind: "meteor", Target: []int{7}}}}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, pngb, err := Plot(res)
			if err != nil {
				t.Fatal(err)
			}
			decodePNG(t, pngb)
		})
	}
}

func TestPlotFixture(t *testing.T) {
	t.Parallel()
	_, pngb, err := Plot(fixture())
	if err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, pngb)
	// The fixture has a gap and an overlap: the count strip must show the
	// gap red and the overlap violet somewhere.
	var red, violet bool
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := [3]uint32{r >> 8, g >> 8, bl >> 8}
			red = red || c == [3]uint32{0xd6, 0x27, 0x28}
			violet = violet || c == [3]uint32{0x7b, 0x2c, 0xbf}
		}
	}
	if !red || !violet {
		t.Errorf("gap colour drawn: %v, overlap colour drawn: %v", red, violet)
	}
}

func TestTimeTicks(t *testing.T) {
	for _, tc := range []struct {
		hi     float64
		labels []string
	}{
		{45, []string{"0", "5", "10", "15", "20", "25", "30", "35", "40", "45"}},
		{3, []string{"0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0"}},
		{1.2, []string{"0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1.0", "1.1", "1.2"}},
		{600, []string{"0", "50", "100", "150", "200", "250", "300", "350", "400", "450", "500", "550", "600"}},
	} {
		var got []string
		for _, tk := range (timeTicks{}).Ticks(0, tc.hi) {
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.labels) {
			t.Errorf("ticks over [0, %v]: %v; want %v", tc.hi, got, tc.labels)
		}
	}
	var _ plot.Ticker = timeTicks{}
}

// TestPlotManyFaults: a long schedule keeps the fault lane to a few rows so
// the instance lanes stay on the page.
func TestPlotManyFaults(t *testing.T) {
	t.Parallel()
	res := churn(3, 3)
	var faults []model.FaultOutcome
	for i := range 200 {
		at := time.Duration(i) * 300 * time.Millisecond
		faults = append(faults, model.FaultOutcome{FaultSpan: model.FaultSpan{ID: i, Kind: "latency", Target: []int{i % 3}, Applied: at, Healed: at + 2*time.Second}})
	}
	res.Analysis.Faults = faults
	f := newFigure(res)
	if f.faultRows > maxFaultRows {
		t.Errorf("%d fault rows; want at most %d", f.faultRows, maxFaultRows)
	}
	if _, _, err := Plot(res); err != nil {
		t.Fatal(err)
	}
}

// TestPlotConcurrent: the CLI renders a suite's runs in parallel.
func TestPlotConcurrent(t *testing.T) {
	t.Parallel()
	done := make(chan error)
	for i := range 4 {
		go func() {
			_, _, err := Plot(churn(3+i, uint64(i)))
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// One colour per meaning: red is only a gap; a phantom of a live instance
// and the key of a crashed holder differ and are each in the legend; every
// fault names the leader it hit.
func TestPlotColoursOneMeaning(t *testing.T) {
	res := fixture()
	f := newFigure(res)
	if f.lingers || !f.phantoms {
		t.Fatalf("the fixture's phantom is of a live instance: lingers %v, phantoms %v", f.lingers, f.phantoms)
	}
	for _, m := range f.redis.marks {
		if m.colour == colGap {
			t.Error("a phantom drawn in the gap's red")
		}
	}
	for _, l := range f.instances {
		for _, m := range append(l.marks, l.hits...) {
			if m.colour == colGap {
				t.Error("a stale mark or target underline drawn in the gap's red")
			}
		}
	}
	if faultColour(string(model.FaultCrash)) == colGap {
		t.Error("crash faults in the gap's red")
	}
	var legend []string
	for _, it := range f.legendItems {
		legend = append(legend, it.label)
	}
	all := strings.Join(legend, "|")
	for _, want := range []string{"stale:", "phantom:", "gap:", "overlap:", "fault's target", "in the fault's colour"} {
		if !strings.Contains(all, want) {
			t.Errorf("legend has no %q: %s", want, all)
		}
	}
	for _, b := range f.faults {
		if !strings.Contains(b.label, "· leader ") {
			t.Errorf("fault %q does not name the leader it hit", b.label)
		}
	}

	// The same phantom after its holder crashed: the key lingering until
	// expiry, not an alarm.
	p := res.Analysis.Redis.Phantom[0]
	res.Timeline = append(model.Timeline{{At: p.Start - 1, Kind: model.InstanceCrashed, Instance: p.Instance, ID: p.ID}}, res.Timeline...)
	f = newFigure(res)
	if !f.lingers || f.phantoms {
		t.Errorf("a crashed holder's key: lingers %v, phantoms %v", f.lingers, f.phantoms)
	}
}

// TestPlotDecimatesLongTimelines: a million leader-count steps draw at most
// one segment per column of the PNG, and a 10µs overlap, a 10µs gap and a
// 10µs stale mark amid them are still drawn, each in its own colour.
func TestPlotDecimatesLongTimelines(t *testing.T) {
	const n = 1_000_000
	res := &verdict.Result{Scenario: model.Scenario{Name: "long watch", Instances: 2}}
	a := &res.Analysis
	step := time.Millisecond
	a.LeaderCount = make([]analysis.CountStep, 0, n)
	a.Beliefs = make([]analysis.Belief, 0, n)
	for i := range n {
		st := analysis.CountStep{Window: model.Window{Start: time.Duration(i) * step, End: time.Duration(i+1) * step}, Leaders: 1}
		a.LeaderCount = append(a.LeaderCount, st)
		a.Beliefs = append(a.Beliefs, analysis.Belief{Member: model.Member{Instance: i % 2}, Window: st.Window})
	}
	overlapAt, gapAt := 500*time.Second, 700*time.Second
	a.LeaderCount[overlapAt/step] = analysis.CountStep{Window: model.Window{Start: overlapAt, End: overlapAt + 10*time.Microsecond}, Leaders: 2}
	a.LeaderCount[gapAt/step] = analysis.CountStep{Window: model.Window{Start: gapAt, End: gapAt + 10*time.Microsecond}, Leaders: 0}
	staleAt := 300 * time.Second
	a.Redis.Stale = []analysis.Stale{{Member: model.Member{Instance: 1}, Window: model.Window{Start: staleAt, End: staleAt + 10*time.Microsecond}}}
	a.End = n * step

	f := newFigure(res)
	drawn := func(segs []segment, at time.Duration, col color.NRGBA) bool {
		for _, s := range segs {
			if s.colour == col && s.from <= at.Seconds() && at.Seconds() <= s.to {
				return true
			}
		}
		return false
	}
	if len(f.count.segments) > plotColumns || len(f.instances[0].segments) > plotColumns {
		t.Errorf("%d and %d segments drawn for %d steps, want at most %d (one per column)",
			len(f.count.segments), len(f.instances[0].segments), n, plotColumns)
	}
	if !drawn(f.count.segments, overlapAt, colOverlap) {
		t.Error("the 10µs overlap amid a million steps is not drawn")
	}
	if !drawn(f.count.segments, gapAt, colGap) {
		t.Error("the 10µs gap amid a million steps is not drawn")
	}
	if !drawn(f.instances[1].marks, staleAt, colStale) {
		t.Error("the 10µs stale window amid a million beliefs is not drawn")
	}
	if _, _, err := Plot(res); err != nil {
		t.Fatal(err)
	}
}
