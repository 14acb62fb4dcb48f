package reports

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/leaselab/leaselab/model"
)

// A Distribution summarises many runs of one scenario with different seeds
// (chaos run X --backend virtual --runs N): per metric min, p50, p90, p99
// and max with the worst seed and the commands that replay it, the verdict
// counts, how many runs broke each expectation, and a histogram.
//
// It is built by streaming: Add takes one result at a time, in any order,
// and keeps per metric only the exact minimum and maximum and a count of
// runs per value rounded to DistResolution (1 ms). Its memory is bounded by
// the range of the metrics divided by 1 ms (at most a few ten thousand
// counts for a minute-long scenario), not by the number of runs, and its
// figures do not depend on the order the runs arrive in: the same seeds
// give the same bytes of distribution.json. Quantiles are exact to 1 ms
// (nearest rank: the smallest value with at least p% of the runs at or
// below it); min and max are exact. Of the runs' results it keeps only the
// worst one (see Worst).
type Distribution struct {
	Scenario  string  `json:"scenario"`
	Backend   string  `json:"backend"`
	TimeScale float64 `json:"time_scale"`
	// Runs is how many runs were added; Requested how many were asked for
	// (more than Runs when the sweep was interrupted).
	Runs      int `json:"runs"`
	Requested int `json:"requested"`
	// FirstSeed is the scenario's seed; run i (from 0) used FirstSeed + i.
	FirstSeed int64  `json:"first_seed"`
	LastSeed  int64  `json:"last_seed"`
	Seeds     string `json:"seeds"`
	// Resolution is the bucket width of the quantiles and histograms.
	Resolution string         `json:"resolution"`
	Verdicts   VerdictCounts  `json:"verdicts"`
	Metrics    []DistMetric   `json:"metrics"`
	Broken     []BrokenExpect `json:"expectations"`
	// ClaimsNotHeld counts, per spec claim, the runs in which it did not hold.
	ClaimsNotHeld []NamedCount `json:"claims_not_held"`
	// WorstRun is the seed of the run Worst holds and why it is the worst.
	WorstRun WorstRun `json:"worst_run"`
	// Incomplete says why fewer runs than requested were added.
	Incomplete string `json:"incomplete,omitempty"`

	// Worst is the worst run's whole result (see WorstRun.Why); it is the
	// only result a Distribution keeps.
	Worst *verdict.Result `json:"-"`

	acc     []*metricAcc
	broken  map[string]*BrokenExpect
	order   map[string]int
	claims  map[string]int
	command func(seed int64, backend string) string
}

// DistResolution is the bucket width of a Distribution's quantiles.
const DistResolution = time.Millisecond

// VerdictCounts counts the runs per verdict.
type VerdictCounts struct {
	Pass    int `json:"pass"`
	Fail    int `json:"fail"`
	Unknown int `json:"unknown"`
}

// DistMetric is one metric over the runs. Durations are in seconds.
type DistMetric struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// Measured is how many runs measured the metric; NotMeasured how many
	// did not (a failover needs a fault that demoted a leader).
	Measured    int     `json:"measured"`
	NotMeasured int     `json:"not_measured"`
	Min         float64 `json:"min_s"`
	P50         float64 `json:"p50_s"`
	P90         float64 `json:"p90_s"`
	P99         float64 `json:"p99_s"`
	Max         float64 `json:"max_s"`
	// WorstSeed is the seed of the run with the largest value (the
	// smallest such seed), with the commands that replay it on the virtual
	// and on the real backend.
	WorstSeed     int64  `json:"worst_seed"`
	Reproduce     string `json:"reproduce"`
	ReproduceReal string `json:"reproduce_real"`
	// Histogram has up to DistBins equal-width bins from Min to Max.
	Histogram []Bin `json:"histogram"`
}

// Bin is one histogram bin: runs with a value in [Lo, Hi) seconds (the
// last bin includes Hi).
type Bin struct {
	Lo    float64 `json:"lo_s"`
	Hi    float64 `json:"hi_s"`
	Count int     `json:"count"`
}

// DistBins is the number of histogram bins.
const DistBins = 40

// BrokenExpect counts the runs in which one expectation did not hold.
type BrokenExpect struct {
	Expectation string `json:"expectation"`
	Fail        int    `json:"fail"`
	Unknown     int    `json:"unknown"`
	// FirstSeed is the smallest seed that broke it (0: none).
	FirstSeed int64 `json:"first_seed,omitempty"`
}

// NamedCount is a name with a count.
type NamedCount struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// WorstRun names the run whose whole report is kept.
type WorstRun struct {
	Seed    int64  `json:"seed"`
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
}

type metricAcc struct {
	name, label string
	get         func(analysis.Summary) (time.Duration, bool)
	n, missing  int
	min, max    time.Duration
	worstSeed   int64
	counts      map[int64]int // value in DistResolution units → runs
}

// distMetrics are the metrics a Distribution follows.
func distMetrics() []*metricAcc {
	return []*metricAcc{
		{name: "max_gap", label: "max gap (no leader)", get: func(s analysis.Summary) (time.Duration, bool) { return s.MaxGap, true }},
		{name: "max_overlap", label: "max overlap (two leaders)", get: func(s analysis.Summary) (time.Duration, bool) { return s.MaxOverlap, true }},
		{name: "max_stale", label: "stale leadership (max)", get: func(s analysis.Summary) (time.Duration, bool) { return s.MaxStale, true }},
		{name: "failover", label: "failover (max)", get: func(s analysis.Summary) (time.Duration, bool) { return s.Failover.Max, s.Failover.Count > 0 }},
	}
}

// NewDistribution starts a distribution of n runs of sc with seeds
// sc.Seed, sc.Seed+1, …; command(seed, backend) is the command that replays
// one seed on a backend ("real" or "virtual").
func NewDistribution(sc model.Scenario, backend string, n int, command func(seed int64, backend string) string) *Distribution {
	ts := sc.TimeScale
	if ts == 0 {
		ts = 1
	}
	return &Distribution{
		Scenario: sc.Name, Backend: backend, TimeScale: ts, Requested: n,
		FirstSeed: sc.Seed, Seeds: "run i (from 0) uses the scenario's seed + i",
		Resolution: DistResolution.String(),
		acc:        distMetrics(), broken: map[string]*BrokenExpect{}, order: map[string]int{}, claims: map[string]int{},
		command: command,
	}
}

// Add adds one run's result. Not safe for concurrent use: have one
// goroutine collect the results.
func (d *Distribution) Add(res *verdict.Result) {
	d.Runs++
	if d.Runs == 1 || res.Seed > d.LastSeed {
		d.LastSeed = res.Seed
	}
	switch {
	case !res.Complete || res.Verdict == model.Unknown:
		d.Verdicts.Unknown++
	case res.Verdict == model.Pass:
		d.Verdicts.Pass++
	default:
		d.Verdicts.Fail++
	}
	s := res.Analysis.Summary
	for _, m := range d.acc {
		v, ok := m.get(s)
		if !ok {
			m.missing++
			continue
		}
		if m.counts == nil {
			m.counts = map[int64]int{}
		}
		m.counts[int64((v+DistResolution/2)/DistResolution)]++
		if m.n == 0 || v < m.min {
			m.min = v
		}
		if m.n == 0 || v > m.max || (v == m.max && res.Seed < m.worstSeed) {
			m.max, m.worstSeed = v, res.Seed
		}
		m.n++
	}
	for i, ch := range res.Checks {
		key := string(ch.Metric) + " " + ch.Limit
		if _, ok := d.order[key]; !ok {
			d.order[key] = i
		}
		b := d.broken[key]
		if b == nil {
			b = &BrokenExpect{Expectation: key}
			d.broken[key] = b
		}
		switch ch.Verdict {
		case model.Pass:
			continue
		case model.Unknown:
			b.Unknown++
		default:
			b.Fail++
		}
		if b.FirstSeed == 0 || res.Seed < b.FirstSeed {
			b.FirstSeed = res.Seed
		}
	}
	for _, cl := range res.Analysis.Claims {
		if cl.Verdict == analysis.NotHeld {
			d.claims[cl.Name]++
		}
	}
	if d.Worst == nil || worse(res, d.Worst) {
		d.Worst = res
	}
}

// verdictRank orders verdicts from best to worst.
func verdictRank(res *verdict.Result) int {
	switch {
	case res.Verdict == model.Pass && res.Complete:
		return 0
	case res.Verdict == model.Fail:
		return 2
	}
	return 1
}

// worse says whether a is a worse run than b: a worse verdict (fail, then
// unknown, then pass), then a longer max overlap, a longer stale
// leadership, a longer max gap, then the smaller seed (so the choice does
// not depend on the order the runs arrive in).
func worse(a, b *verdict.Result) bool {
	if ra, rb := verdictRank(a), verdictRank(b); ra != rb {
		return ra > rb
	}
	sa, sb := a.Analysis.Summary, b.Analysis.Summary
	for _, p := range [][2]time.Duration{{sa.MaxOverlap, sb.MaxOverlap}, {sa.MaxStale, sb.MaxStale}, {sa.MaxGap, sb.MaxGap}} {
		if p[0] != p[1] {
			return p[0] > p[1]
		}
	}
	return a.Seed < b.Seed
}

// Finish computes the quantiles, histograms and counts from what Add
// collected. Call it once, after the last Add.
func (d *Distribution) Finish() {
	d.Metrics = nil
	for _, m := range d.acc {
		dm := DistMetric{Name: m.name, Label: m.label, Measured: m.n, NotMeasured: m.missing}
		if m.n > 0 {
			dm.Min, dm.Max = secs(m.min), secs(m.max)
			dm.P50, dm.P90, dm.P99 = m.quantile(50), m.quantile(90), m.quantile(99)
			dm.WorstSeed = m.worstSeed
			if d.command != nil {
				dm.Reproduce = d.command(m.worstSeed, d.Backend)
				dm.ReproduceReal = d.command(m.worstSeed, BackendReal)
			}
			dm.Histogram = m.histogram()
		}
		d.Metrics = append(d.Metrics, dm)
	}
	d.Broken = d.Broken[:0]
	for _, b := range d.broken {
		d.Broken = append(d.Broken, *b)
	}
	sort.Slice(d.Broken, func(i, j int) bool {
		a, b := d.Broken[i].Expectation, d.Broken[j].Expectation
		if d.order[a] != d.order[b] {
			return d.order[a] < d.order[b]
		}
		return a < b
	})
	d.ClaimsNotHeld = d.ClaimsNotHeld[:0]
	for name, n := range d.claims {
		d.ClaimsNotHeld = append(d.ClaimsNotHeld, NamedCount{name, n})
	}
	sort.Slice(d.ClaimsNotHeld, func(i, j int) bool { return d.ClaimsNotHeld[i].Name < d.ClaimsNotHeld[j].Name })
	if w := d.Worst; w != nil {
		v, _ := verdictOf(w)
		s := w.Analysis.Summary
		d.WorstRun = WorstRun{Seed: w.Seed, Verdict: v, Why: fmt.Sprintf(
			"the worst verdict, then the longest overlap, stale leadership and gap (smallest seed on a tie): %s, max overlap %s, max stale %s, max gap %s",
			v, dur(s.MaxOverlap), dur(s.MaxStale), dur(s.MaxGap))}
	}
	if d.Runs < d.Requested && d.Incomplete == "" {
		d.Incomplete = fmt.Sprintf("%d of %d runs", d.Runs, d.Requested)
	}
}

func secs(d time.Duration) float64 { return math.Round(d.Seconds()*1e6) / 1e6 }

// quantile is the nearest-rank p-th percentile, to DistResolution, kept
// inside [min, max].
func (m *metricAcc) quantile(p float64) float64 {
	keys := m.keys()
	rank := int(math.Ceil(p / 100 * float64(m.n)))
	seen := 0
	for _, k := range keys {
		seen += m.counts[k]
		if seen >= rank {
			v := time.Duration(k) * DistResolution
			return secs(min(max(v, m.min), m.max))
		}
	}
	return secs(m.max)
}

func (m *metricAcc) keys() []int64 {
	keys := make([]int64, 0, len(m.counts))
	for k := range m.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// histogram bins the counts into up to DistBins equal-width bins from min
// to max (whole multiples of the resolution); one bin when they are equal.
func (m *metricAcc) histogram() []Bin {
	lo := int64((m.min + DistResolution/2) / DistResolution)
	hi := int64((m.max + DistResolution/2) / DistResolution)
	width := max(1, (hi-lo+DistBins)/DistBins) // in resolution units
	nb := (hi-lo)/width + 1
	bins := make([]Bin, nb)
	for i := range bins {
		a := lo + int64(i)*width
		bins[i] = Bin{Lo: secs(time.Duration(a) * DistResolution), Hi: secs(time.Duration(a+width) * DistResolution)}
	}
	for k, n := range m.counts {
		bins[min((k-lo)/width, nb-1)].Count += n
	}
	return bins
}

// Distribution file names inside its directory.
const (
	FileDistJSON = "distribution.json"
	FileDistMD   = "distribution.md"
	FileDistHTML = "distribution.html"
	FileDistSVG  = "histograms.svg"
	FileDistPNG  = "histograms.png"
	// DirDistWorst is where a written distribution keeps its worst run's
	// full report.
	DirDistWorst = "worst"
)

// WriteDistribution writes distribution.json, distribution.md,
// distribution.html (self-contained, the histograms embedded) and
// histograms.svg/.png into dir. worstDir, if not empty, is where the worst
// run's report was written, relative to dir. Call Finish first.
func WriteDistribution(dir string, d *Distribution, worstDir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	js, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("reports: encoding the distribution: %w", err)
	}
	svg, png, plotErr := PlotDistribution(d)
	var md, page bytes.Buffer
	DistributionMarkdown(&md, d, worstDir, plotErr == nil)
	if err := distHTML(&page, d, worstDir, png, plotErr); err != nil {
		return err
	}
	files := []struct {
		name string
		b    []byte
	}{{FileDistJSON, append(js, '\n')}, {FileDistMD, md.Bytes()}, {FileDistHTML, page.Bytes()}}
	if plotErr == nil {
		files = append(files, struct {
			name string
			b    []byte
		}{FileDistSVG, svg}, struct {
			name string
			b    []byte
		}{FileDistPNG, png})
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.b, 0o644); err != nil {
			return fmt.Errorf("reports: %w", err)
		}
	}
	if plotErr != nil {
		return fmt.Errorf("reports: %w", plotErr)
	}
	return nil
}

func sdur(s float64) string { return dur(time.Duration(math.Round(s * 1e9))) }

// DistributionMarkdown writes the distribution as Markdown.
func DistributionMarkdown(w io.Writer, d *Distribution, worstDir string, withPlot bool) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("# Distribution: %s\n\n", mdText(d.Scenario))
	p("%s\n\n", mdText(distHeadline(d)))
	if d.Incomplete != "" {
		p("> **Incomplete:** %s\n\n", mdText(d.Incomplete))
	}
	p("| Metric | Runs | Min | p50 | p90 | p99 | Max | Worst seed |\n|---|---|---|---|---|---|---|---|\n")
	for _, m := range d.Metrics {
		p("| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(m.Label), measuredCell(m), distCell(m, m.Min), distCell(m, m.P50), distCell(m, m.P90), distCell(m, m.P99), distCell(m, m.Max), seedCell(m))
	}
	p("\nQuantiles are nearest-rank, exact to %s; min and max are exact.\n\n", d.Resolution)
	if withPlot {
		p("![Histograms](%s)\n\n", FileDistPNG)
	}
	p("## Expectations\n\n")
	if len(d.Broken) == 0 {
		p("The scenario has no expectations.\n\n")
	} else {
		p("| Expectation | Runs failed | Runs unknown | First seed that broke it |\n|---|---|---|---|\n")
		for _, b := range d.Broken {
			first := "—"
			if b.FirstSeed != 0 {
				first = strconv.FormatInt(b.FirstSeed, 10)
			}
			p("| %s | %d | %d | %s |\n", mdCell(b.Expectation), b.Fail, b.Unknown, first)
		}
		p("\n")
	}
	if len(d.ClaimsNotHeld) > 0 {
		p("The spec's claims not held:\n\n")
		for _, c := range d.ClaimsNotHeld {
			p("- %s: in %d of %d runs\n", mdText(c.Name), c.Count, d.Runs)
		}
		p("\n")
	}
	p("## Replay\n\n")
	p("The worst run (seed %d, %s): %s.", d.WorstRun.Seed, d.WorstRun.Verdict, mdText(d.WorstRun.Why))
	if worstDir != "" {
		p(" Its full report: [%s](%s).", worstDir+"/"+FileHTML, worstDir+"/"+FileHTML)
	}
	p("\n\nThe worst seed of each metric, on this backend and on the real one:\n\n```sh\n")
	for _, m := range d.Metrics {
		if m.Measured == 0 || m.Max == 0 {
			continue
		}
		p("# %s: %s at seed %d\n%s\n%s\n", m.Name, sdur(m.Max), m.WorstSeed, m.Reproduce, m.ReproduceReal)
	}
	p("```\n")
}

func distHeadline(d *Distribution) string {
	return fmt.Sprintf("%d runs on the %s backend, seeds %d–%d (%s), time scale %s: %d pass, %d fail, %d unknown.",
		d.Runs, d.Backend, d.FirstSeed, d.LastSeed, d.Seeds, strconv.FormatFloat(d.TimeScale, 'g', -1, 64), d.Verdicts.Pass, d.Verdicts.Fail, d.Verdicts.Unknown)
}

func measuredCell(m DistMetric) string {
	if m.NotMeasured == 0 {
		return strconv.Itoa(m.Measured)
	}
	return fmt.Sprintf("%d (%d not measured)", m.Measured, m.NotMeasured)
}

func distCell(m DistMetric, v float64) string {
	if m.Measured == 0 {
		return "—"
	}
	return sdur(v)
}

func seedCell(m DistMetric) string {
	if m.Measured == 0 {
		return "—"
	}
	return strconv.FormatInt(m.WorstSeed, 10)
}

// PlotDistribution draws one histogram per metric (runs per value), as SVG
// and PNG.
func PlotDistribution(d *Distribution) (svg, png []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			svg, png, err = nil, nil, fmt.Errorf("plotting the histograms: %v", r)
		}
	}()
	const cols = 2
	rows := (len(d.Metrics) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, m := range d.Metrics {
		p := plot.New()
		p.Title.Text = m.Label
		p.Title.TextStyle = textStyle(11, colText)
		p.X.Label.Text = "seconds"
		p.Y.Label.Text = "runs"
		p.X.Label.TextStyle = textStyle(9, colSubtle)
		p.Y.Label.TextStyle = textStyle(9, colSubtle)
		p.X.Tick.Label = textStyle(8, colSubtle)
		p.Y.Tick.Label = textStyle(8, colSubtle)
		p.X.Tick.Marker = msTicks{}
		if len(m.Histogram) > 0 {
			h := &plotter.Histogram{FillColor: colOverlapSoft(m.Name), Width: m.Histogram[0].Hi - m.Histogram[0].Lo}
			h.LineStyle.Width = vg.Points(0.5)
			h.LineStyle.Color = color.White
			for _, b := range m.Histogram {
				h.Bins = append(h.Bins, plotter.HistogramBin{Min: b.Lo, Max: b.Hi, Weight: float64(b.Count)})
			}
			p.Add(h)
			if b := m.Histogram[0]; len(m.Histogram) == 1 {
				// Every run measured the same (a gap of 0 in each): one bin a
				// resolution wide, which autoscaled would fill the panel as
				// if every value were large. A second of axis beside it
				// shows it for the spike it is, and the title says so.
				p.Title.Text += fmt.Sprintf(" — %s in all %d runs", sdur(b.Lo), b.Count)
				p.X.Min, p.X.Max = max(0, b.Lo-0.5), max(0, b.Lo-0.5)+1
				p.Y.Min = 0
			}
		}
		plots[i/cols][i%cols] = p
	}
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] == nil {
				plots[r][c] = plot.New()
				plots[r][c].HideAxes()
			}
		}
	}
	w, h := 10*vg.Inch, vg.Length(rows)*3*vg.Inch
	render := func(dc draw.Canvas) {
		t := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 6, PadY: vg.Millimeter * 6, PadTop: vg.Millimeter * 8, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
		canvases := plot.Align(plots, t, dc)
		for r := range plots {
			for c := range plots[r] {
				plots[r][c].Draw(canvases[r][c])
			}
		}
	}
	sc := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true))
	render(draw.New(sc))
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return nil, nil, err
	}
	ic := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	render(draw.New(ic))
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&pb); err != nil {
		return nil, nil, err
	}
	return sb.Bytes(), pb.Bytes(), nil
}

// msTicks are gonum's default ticks labelled to the millisecond.
type msTicks struct{}

func (msTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', 3, 64)
		}
	}
	return ticks
}

// colOverlapSoft colours a metric's bars as the timeline colours it.
func colOverlapSoft(name string) color.Color {
	switch name {
	case "max_gap":
		return lighten(colGap, 0.25)
	case "max_overlap":
		return lighten(colOverlap, 0.25)
	case "max_stale":
		return lighten(colStale, 0.45)
	}
	return instancePalette[0]
}

type distPage struct {
	*Distribution
	Headline  string
	Rows      [][]string
	WorstLink string
	PlotImg   template.HTML
	PlotError string
	Commands  string
}

func distHTML(w io.Writer, d *Distribution, worstDir string, png []byte, plotErr error) error {
	pg := distPage{Distribution: d, Headline: distHeadline(d)}
	for _, m := range d.Metrics {
		pg.Rows = append(pg.Rows, []string{m.Label, measuredCell(m), distCell(m, m.Min), distCell(m, m.P50), distCell(m, m.P90), distCell(m, m.P99), distCell(m, m.Max), seedCell(m)})
	}
	if worstDir != "" {
		pg.WorstLink = worstDir + "/" + FileHTML
	}
	var cmds []string
	for _, m := range d.Metrics {
		if m.Measured > 0 && m.Max > 0 {
			cmds = append(cmds, fmt.Sprintf("# %s: %s at seed %d\n%s\n%s", m.Name, sdur(m.Max), m.WorstSeed, m.Reproduce, m.ReproduceReal))
		}
	}
	pg.Commands = strings.Join(cmds, "\n")
	switch {
	case plotErr != nil:
		pg.PlotError = plotErr.Error()
	case len(png) > 0:
		pg.PlotImg = template.HTML(`<img src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(png) + `" alt="Histograms of the metrics over the runs"/>`)
	}
	return distTemplate.Execute(w, pg)
}

var distTemplate = template.Must(template.New("dist").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>Distribution: {{.Scenario}}</title>
<style>` + css + `
td { white-space: nowrap; }
</style>
</head>
<body>
<main>
<h1>Distribution: {{.Scenario}}</h1>
<p>{{.Headline}}</p>
{{- if .Incomplete}}<p><strong>Incomplete:</strong> {{.Incomplete}}</p>{{end}}
<div class="scroll"><table>
<thead><tr><th>Metric</th><th>Runs</th><th>Min</th><th>p50</th><th>p90</th><th>p99</th><th>Max</th><th>Worst seed</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table></div>
<p class="note">Quantiles are nearest-rank, exact to {{.Resolution}}; min and max are exact.</p>
{{if .PlotImg}}<figure>{{.PlotImg}}</figure>{{else if .PlotError}}<p><strong>The histograms could not be drawn:</strong> {{.PlotError}}</p>{{end}}
<h2>Expectations</h2>
{{if .Broken}}<div class="scroll"><table>
<thead><tr><th>Expectation</th><th>Runs failed</th><th>Runs unknown</th><th>First seed that broke it</th></tr></thead>
<tbody>
{{- range .Broken}}
<tr><td>{{.Expectation}}</td><td{{if .Fail}} class="bad"{{end}}>{{.Fail}}</td><td>{{.Unknown}}</td><td>{{if .FirstSeed}}{{.FirstSeed}}{{else}}—{{end}}</td></tr>
{{- end}}
</tbody>
</table></div>{{else}}<p>The scenario has no expectations.</p>{{end}}
{{- if .ClaimsNotHeld}}
<p>The spec's claims not held:</p>
<ul>{{range .ClaimsNotHeld}}<li>{{.Name}}: in {{.Count}} runs</li>{{end}}</ul>
{{- end}}
<h2>Replay</h2>
<p>The worst run (seed {{.WorstRun.Seed}}, {{.WorstRun.Verdict}}): {{.WorstRun.Why}}.{{if .WorstLink}} Its full report: <a href="{{.WorstLink}}">{{.WorstLink}}</a>.{{end}}</p>
<p>The worst seed of each metric, on this backend and on the real one:</p>
<pre>{{.Commands}}</pre>
</main>
</body>
</html>
`))
