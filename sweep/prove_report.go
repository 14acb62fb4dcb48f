package sweep

import (
	"bufio"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
)

// A proof's report, for a design review: prove.md and index.html say what
// was proven over which range and model, each metric's exact worst
// beside its bound, the verdict, the witness files and the commands that
// reproduce them; a walk's report plots each metric along the axis from
// the values the walk took (curves.csv holds them).

// proveCommand is the command line that proves the same space again, from
// where this proof was started.
func (r *ProveResult) proveCommand() string {
	// A file is named by its path: a built-in of the same name is another
	// scenario.
	what := r.Space.Base.Name
	if r.Space.Base.Source != "" {
		what = scenarios.ShellQuote(r.Space.Base.Source)
	}
	parts := []string{scenarios.Program(), "prove", what}
	for _, v := range r.Space.Vary {
		parts = append(parts, fmt.Sprintf("--vary %s=%s..%s", v.Param, v.Lo, v.Hi))
	}
	parts = append(parts, fmt.Sprintf("--seed %d", r.Space.Seed))
	if r.Space.MaxSegments != DefaultMaxSegments {
		parts = append(parts, fmt.Sprintf("--max-segments %d", r.Space.MaxSegments))
	}
	if r.FullOrder {
		parts = append(parts, "--full-order")
	}
	var ms []string
	for _, m := range r.Space.Metrics {
		ms = append(ms, shortMetric(m))
	}
	if strings.Join(ms, ",") != "overlap,gap,stale" {
		parts = append(parts, "--metric "+strings.Join(ms, ","))
	}
	return strings.Join(parts, " ")
}

// witnessCommands run each witness file written into dir on the virtual
// backend, from where the proof was started.
func (r *ProveResult) witnessCommands(dir string) []string {
	var cmds []string
	for _, p := range r.Proofs {
		if p.Verdict != VerdictNone {
			cmds = append(cmds, scenarios.FileCommand(filepath.Join(dir, WitnessFile(p.Metric)), r.WitnessScenario(p), r.Space.Seed, 1, "virtual"))
		}
	}
	return cmds
}

// verdictLine is a proof's verdict in words, with its margin.
func (r *ProveResult) verdictLine(p Proof) string {
	switch p.Verdict {
	case VerdictProven:
		return fmt.Sprintf("proven, %s below the bound", model.DurationText(-p.Excess))
	case VerdictCounterexample:
		return fmt.Sprintf("COUNTEREXAMPLE: %s over the bound at %s", model.DurationText(p.Excess), r.pointText(r.ExcessPoint(p)))
	case VerdictIncomplete:
		return "incomplete: " + p.Why
	}
	return "not measured: " + nonEmptyText(p.UnknownWhy, p.Why)
}

// proofNotes are what a proof's row leaves out: a box's supremum above
// the worst schedule found (what the verdict compares with the bound), and
// the unknown schedules left out of the worst.
func (r *ProveResult) proofNotes(x Proof) []string {
	var n []string
	if r.Axis2 != "" && x.Formula != "" && x.Sup != x.Worst {
		n = append(n, fmt.Sprintf("%s: the supremum over the cells' real %s is %s, which the verdict compares with the bound; the worst schedule found is %s", x.Metric, r.cellShapes(), model.DurationText(x.Sup), model.DurationText(x.Worst)))
	}
	if x.Unknown > x.NotMeasured && x.Verdict != VerdictNone {
		n = append(n, fmt.Sprintf("%s: %d schedules unknown, not counted: %s", x.Metric, x.Unknown-x.NotMeasured, x.UnknownWhy))
	}
	return n
}

// modelTexts say which clock rates and which elector mode the proof is
// about.
func (r *ProveResult) modelTexts() (rate, mode string) {
	rate, mode = "fixed clock rate", "spec mode"
	if r.Lattice > 1 {
		rate = "each clock at its fixed rate"
	}
	if r.Space.Base.Params.Safe {
		mode = "safe mode"
	}
	return rate, mode
}

// modelLine says what the proof is about.
func (r *ProveResult) modelLine() string {
	rate, mode := r.modelTexts()
	t := fmt.Sprintf("the calibrated virtual model (%s, %s), seed %d", mode, rate, r.Space.Seed)
	if r.Lattice > 1 {
		t += fmt.Sprintf("; a drifting clock: %d residue classes modulo %v", r.Classes, time.Duration(r.Lattice))
	}
	return t
}

// countLine is the proof's size and time.
func (r *ProveResult) countLine() string {
	if r.Axis2 != "" {
		return fmt.Sprintf("%d cells, %d runs, %v", r.Segments, r.Runs, r.Elapsed.Round(time.Millisecond))
	}
	return fmt.Sprintf("%d segments, %d runs, %v", r.Segments, r.Runs, r.Elapsed.Round(time.Millisecond))
}

// ProveMarkdown writes the proof's report as Markdown; dir is where its
// files are written, as its commands name them.
func ProveMarkdown(w io.Writer, r *ProveResult, dir string) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("# chaos prove: %s\n\n", r.Space.Name)
	p("Every schedule of %s on the nanosecond grid, within %s. ", r.RangeText(), r.modelLine())
	p("Everything else is as the scenario file has it. %s.\n\n", r.countLine())
	if !r.Complete {
		p("**Incomplete:** %s\n\n", r.Incomplete)
	}
	p("| metric | exact worst | schedule | bound | verdict | witness |\n|---|---|---|---|---|---|\n")
	for _, x := range r.Proofs {
		if x.Verdict == VerdictNone || x.Formula == "" {
			p("| %s | — | — | — | %s | |\n", x.Metric, r.verdictLine(x))
			continue
		}
		worst, bound := model.DurationsApart(x.Worst, x.Bound)
		p("| %s | %s | %s | %s | %s | %s |\n", x.Metric, worst, r.pointText(r.Point(x)), bound, r.verdictLine(x), WitnessFile(x.Metric))
	}
	p("\n## Bounds\n\n")
	for _, x := range r.Proofs {
		if x.Formula != "" {
			p("- **%s**: %s\n", x.Metric, x.Formula)
		}
		for _, n := range r.proofNotes(x) {
			p("- %s\n", n)
		}
	}
	p("\n## Reproduce\n\nFrom where the proof was started; each witness exact on the virtual backend:\n\n```sh\n%s\n", r.proveCommand())
	for _, c := range r.witnessCommands(dir) {
		p("%s\n", c)
	}
	p("```\n\n")
	p("The proof is about the model, not about real Redis: the virtual backend's calibration tables tie the two. A witness run on the real backend lands within its timing (a millisecond or two) of the schedule, where a worst that needs a fault within microseconds of a call may not reproduce.\n")
	if len(r.Curves) > 0 {
		p("\ncurves.csv holds each metric at every schedule the walk took (each segment's ends, and the bound's pieces'). %s\n", curvesCaption(r))
	}
	return bw.Flush()
}

// curvesCaption says how to read a walk's curves.
func curvesCaption(r *ProveResult) string {
	t := "Inside a segment every window a metric is the largest of is affine, so the metric's largest value there is at one of the segment's ends: the line joining the ends is drawn for the eye, not measured between them. It breaks where no value was measured, and a plot keeps of each of 1,600 columns its first, least, greatest and last point."
	if r.Lattice > 1 {
		t += fmt.Sprintf(" The %d residue classes' points are joined in axis order.", r.Classes)
	}
	return t
}

// CurvesCSV writes a walk's curves: one row per metric and schedule.
func CurvesCSV(w io.Writer, r *ProveResult) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "metric,%s_ns,value_ns,bound_ns,measured\n", r.Axis)
	for _, c := range r.Curves {
		for _, pt := range c.Points {
			// Where nothing was measured there is no value and no bound.
			value, bound := "", ""
			if pt.Found {
				value = fmt.Sprint(int64(pt.Value))
				if pt.Bound != model.Unbounded {
					bound = fmt.Sprint(int64(pt.Bound))
				}
			}
			fmt.Fprintf(bw, "%s,%d,%s,%s,%v\n", shortMetric(c.Metric), int64(pt.At), value, bound, pt.Found)
		}
	}
	return bw.Flush()
}

// curvePlot draws one metric along the walk's axis: its value at every
// schedule taken, its bound, and its worst.
func (r *ProveResult) curvePlot(c ProveCurve, pr Proof) (svg, png []byte, err error) {
	defer func() {
		if e := recover(); e != nil {
			svg, png, err = nil, nil, fmt.Errorf("drawing the %s curve: %v", c.Metric, e)
		}
	}()
	// Stretches where nothing was measured break the lines: no line
	// crosses them.
	var vals, bounds []plotter.XYs
	brokenV, brokenB := true, true
	for _, pt := range c.Points {
		if !pt.Found {
			brokenV, brokenB = true, true
			continue
		}
		if brokenV {
			vals = append(vals, nil)
		}
		vals[len(vals)-1] = append(vals[len(vals)-1], plotter.XY{X: pt.At.Seconds(), Y: pt.Value.Seconds()})
		brokenV = false
		if pt.Bound == model.Unbounded {
			brokenB = true
			continue
		}
		if brokenB {
			bounds = append(bounds, nil)
		}
		bounds[len(bounds)-1] = append(bounds[len(bounds)-1], plotter.XY{X: pt.At.Seconds(), Y: pt.Bound.Seconds()})
		brokenB = false
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s along %s (%s)", r.Space.Name, c.Metric, r.Axis, pr.Verdict)
	labelAxes(p, r.Axis+" (s)", c.Metric+" (s)")
	p.X.Min, p.X.Max = r.Lo.Seconds(), r.Hi.Seconds()
	p.Y.Min = 0
	p.Legend.TextStyle.Font = sans(8)
	p.Legend.Top = true
	top := 0.0
	lines := func(runs []plotter.XYs, style func(*plotter.Line), name string) error {
		for k, run := range runs {
			l, err := plotter.NewLine(decimate(run, curveColumns))
			if err != nil {
				return err
			}
			style(l)
			p.Add(l)
			if k == 0 {
				p.Legend.Add(name, l)
			}
			for _, xy := range run {
				top = max(top, xy.Y)
			}
		}
		return nil
	}
	if err := lines(bounds, func(l *plotter.Line) {
		l.Color, l.Dashes, l.Width = colLine, []vg.Length{vg.Points(4), vg.Points(3)}, vg.Points(1)
	}, "bound"); err != nil {
		return nil, nil, err
	}
	if err := lines(vals, func(l *plotter.Line) { l.Color, l.Width = curveColour(c.Metric), vg.Points(1) }, "value at each schedule taken"); err != nil {
		return nil, nil, err
	}
	if pr.Formula != "" {
		s, err := plotter.NewScatter(plotter.XYs{{X: pr.At.Seconds(), Y: pr.Worst.Seconds()}})
		if err != nil {
			return nil, nil, err
		}
		s.GlyphStyle.Shape, s.GlyphStyle.Radius, s.GlyphStyle.Color = draw.CircleGlyph{}, vg.Points(3.5), colText
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("worst %s at %s", model.DurationText(pr.Worst), r.pointText(r.Point(pr))), s)
	}
	// Headroom above the curves for the legend.
	p.Y.Max = max(top*1.35, 0.001)
	w, h := 8*vg.Inch, 3.6*vg.Inch
	return drawPlot(p, w, h)
}

// mapPlot draws one metric over a box: each square the metric's exact
// value at the schedule at its centre, grey where none is known, the
// proof's worst marked.
func (r *ProveResult) mapPlot(mp ProveMap, pr Proof) (svg, png []byte, err error) {
	defer func() {
		if e := recover(); e != nil {
			svg, png, err = nil, nil, fmt.Errorf("drawing the %s map: %v", mp.Metric, e)
		}
	}()
	h := &boxHeat{mp: mp, hot: curveColour(mp.Metric)}
	for j := range mp.V {
		for k, v := range mp.V[j] {
			if mp.Known[j][k] {
				h.top = max(h.top, v)
			}
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %s over %s × %s%s (%s)\npale green 0, darker longer, up to %s on this grid; grey not known",
		r.Space.Name, mp.Metric, r.Axis, r.Axis2, r.throughText(mp), pr.Verdict, model.DurationText(h.top))
	labelAxes(p, r.Axis+" (s)", r.Axis2+" (s)")
	p.Add(h)
	if pr.Formula != "" {
		s, err := plotter.NewScatter(plotter.XYs{{X: pr.At.Seconds(), Y: pr.At2.Seconds()}})
		if err != nil {
			return nil, nil, err
		}
		s.GlyphStyle.Shape, s.GlyphStyle.Radius, s.GlyphStyle.Color = draw.RingGlyph{}, vg.Points(5), colText
		p.Add(s)
		p.Title.Text += fmt.Sprintf("\nthe ring: the proven worst, %s at %s", model.DurationText(pr.Worst), r.pointText(r.Point(pr)))
	}
	w, ht := 8*vg.Inch, 5.4*vg.Inch
	return drawPlot(p, w, ht)
}

// throughText says, for a box of more than two axes, where its map's
// plane lies: " through start1=4s start2=3.9s, the worst's".
func (r *ProveResult) throughText(mp ProveMap) string {
	if len(mp.Through) == 0 {
		return ""
	}
	var parts []string
	for i, a := range r.More {
		if i < len(mp.Through) {
			parts = append(parts, fmt.Sprintf("%s=%v", a.Axis, mp.Through[i]))
		}
	}
	return " through " + strings.Join(parts, " ") + ", the worst's"
}

// boxHeat plots a ProveMap: a square per schedule of its grid, reaching
// half-way to its neighbours.
type boxHeat struct {
	mp  ProveMap
	hot color.NRGBA
	top time.Duration
}

// edges are the squares' edges along one axis of the grid: half-way
// between its values, and half a step beyond the ends.
func edges(xs []time.Duration) []float64 {
	e := make([]float64, len(xs)+1)
	for k := range xs {
		if k > 0 {
			e[k] = (xs[k-1].Seconds() + xs[k].Seconds()) / 2
		}
	}
	half := 0.0005
	if len(xs) > 1 {
		half = (xs[1].Seconds() - xs[0].Seconds()) / 2
	}
	e[0], e[len(xs)] = xs[0].Seconds()-half, xs[len(xs)-1].Seconds()+half
	return e
}

func (h *boxHeat) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	ex, ey := edges(h.mp.X), edges(h.mp.Y)
	for j := range h.mp.V {
		for k, v := range h.mp.V[j] {
			col := color.Color(colMissing)
			if h.mp.Known[j][k] {
				col = shade(h.hot, v, h.top)
			}
			// Overlapping by a hair: no seams of the background between them.
			x0, x1, y0, y1 := tx(ex[k]), tx(ex[k+1])+0.3, ty(ey[j]), ty(ey[j+1])+0.3
			c.FillPolygon(col, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
		}
	}
}

func (h *boxHeat) DataRange() (xmin, xmax, ymin, ymax float64) {
	ex, ey := edges(h.mp.X), edges(h.mp.Y)
	return ex[0], ex[len(ex)-1], ey[0], ey[len(ey)-1]
}

// reportPlots draws the report's plots: a walk's curves or a box's maps,
// each metric's that met a bound.
func (r *ProveResult) reportPlots() ([]heatmapFile, error) {
	var plots []heatmapFile
	for i, pr := range r.Proofs {
		if pr.Formula == "" {
			continue
		}
		var (
			f   = heatmapFile{name: curveFile(pr.Metric), title: fmt.Sprintf("%s along %s", pr.Metric, r.Axis)}
			err error
		)
		switch {
		case i < len(r.Curves):
			f.svg, f.png, err = r.curvePlot(r.Curves[i], pr)
		case i < len(r.Maps):
			f.name, f.title = "map-"+shortMetric(pr.Metric), fmt.Sprintf("%s over %s × %s%s", pr.Metric, r.Axis, r.Axis2, r.throughText(r.Maps[i]))
			f.svg, f.png, err = r.mapPlot(r.Maps[i], pr)
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		plots = append(plots, f)
	}
	return plots, nil
}

// curveColumns is how many columns of the axis a curve's plot keeps
// points in: a walk of many segments is drawn from each column's first,
// least, greatest and last point, which a plot of this width cannot tell
// from all of them.
const curveColumns = 1600

// decimate keeps, of points sorted by X, in each of n equal columns of
// their range the first, least, greatest and last (in X order).
func decimate(pts plotter.XYs, n int) plotter.XYs {
	if len(pts) <= 4*n {
		return pts
	}
	lo, hi := pts[0].X, pts[len(pts)-1].X
	col := func(x float64) int { return min(n-1, int(float64(n)*(x-lo)/(hi-lo))) }
	var out plotter.XYs
	for i := 0; i < len(pts); {
		j, c := i, col(pts[i].X)
		least, most := i, i
		for j < len(pts) && col(pts[j].X) == c {
			if pts[j].Y < pts[least].Y {
				least = j
			}
			if pts[j].Y > pts[most].Y {
				most = j
			}
			j++
		}
		keep := []int{i, least, most, j - 1}
		slices.Sort(keep)
		for k, idx := range keep {
			if k == 0 || idx != keep[k-1] {
				out = append(out, pts[idx])
			}
		}
		i = j
	}
	return out
}

func curveColour(metric string) color.NRGBA {
	switch metric {
	case exGap:
		return colGap
	case exStale:
		return colStale
	}
	return colOverlap
}

// curveFile names a metric's plot.
func curveFile(metric string) string { return "curve-" + shortMetric(metric) }

type proveRow struct {
	Metric, Worst, At, Bound, Verdict, Witness, Formula, Class string
}

// writeProveHTML writes the report's page, the plots embedded.
func writeProveHTML(w io.Writer, r *ProveResult, dir string, plots []heatmapFile) error {
	pg := struct {
		R                   *ProveResult
		Title, Range, Model string
		Count, Command      string
		Style               template.CSS
		Rows                []proveRow
		Plots               []htmlImg
		MapSize, Caption    string
		HasCurves           bool
		Witnesses           []string
		Notes               []string
	}{R: r, Title: "Prove " + r.Space.Name, Range: r.RangeText(), Model: r.modelLine(), Count: r.countLine(),
		Command: r.proveCommand(), Style: template.CSS(pageStyle), HasCurves: len(r.Curves) > 0, Caption: curvesCaption(r),
		Witnesses: r.witnessCommands(dir)}
	for _, x := range r.Proofs {
		row := proveRow{Metric: x.Metric, Worst: "—", At: "—", Bound: "—", Verdict: r.verdictLine(x), Formula: x.Formula, Class: "missing"}
		if x.Verdict != VerdictNone && x.Formula != "" {
			row.Worst, row.Bound = model.DurationsApart(x.Worst, x.Bound)
			row.At, row.Witness = r.pointText(r.Point(x)), WitnessFile(x.Metric)
			row.Class = "safe"
			if x.Verdict != VerdictProven {
				row.Class = "unsafe"
			}
		}
		pg.Notes = append(pg.Notes, r.proofNotes(x)...)
		pg.Rows = append(pg.Rows, row)
	}
	if len(r.Maps) > 0 {
		pg.MapSize = fmt.Sprintf("a grid of %d × %d schedules", len(r.Maps[0].X), len(r.Maps[0].Y))
		if len(r.More) > 0 {
			pg.MapSize += fmt.Sprintf("; a box of %d axes is mapped on the plane of its first two through each metric's worst schedule", len(r.Axes()))
		}
	}
	for _, m := range plots {
		pg.Plots = append(pg.Plots, pngImg(m.title, m.png))
	}
	return writePage(w, provePage, pg)
}

var provePage = template.Must(template.New("prove").Parse(pageHead + `<p class="banner{{if not .R.Complete}} incomplete{{end}}">
Every schedule of {{.Range}} on the nanosecond grid, within {{.Model}}; everything else as the scenario file has it. {{.Count}}.
{{if not .R.Complete}}<br/><b>Incomplete:</b> {{.R.Incomplete}}{{end}}
</p>
<table>
<thead><tr><th>metric</th><th>exact worst</th><th>schedule</th><th>bound</th><th>verdict</th><th>witness</th></tr></thead>
<tbody>
{{range .Rows}}<tr class="{{.Class}}"><td class="l">{{.Metric}}</td><td>{{.Worst}}</td><td class="l">{{.At}}</td><td>{{.Bound}}</td><td class="l">{{.Verdict}}</td><td class="l">{{if .Witness}}<a href="{{.Witness}}">{{.Witness}}</a>{{end}}</td></tr>
{{end}}</tbody>
</table>
<h2>Bounds</h2>
<ul>{{range .Rows}}{{if .Formula}}<li><b>{{.Metric}}</b>: {{.Formula}}</li>{{end}}{{end}}</ul>
{{if .Notes}}<ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if and .Plots .HasCurves}}<h2>Along the axis</h2>
<p>Each metric at every schedule the walk took (each segment's ends, exact). {{.Caption}} The values are in <a href="curves.csv">curves.csv</a>.</p>
{{range .Plots}}{{.Img}}
{{end}}{{else if .Plots}}<h2>Over the box</h2>
<p>Each square is the metric's exact value at the schedule at its centre ({{.MapSize}}), from the windows of the cell that holds it; grey where none is known. A worst on an edge a few µs wide falls between the squares: the ring marks the proven worst.</p>
{{range .Plots}}{{.Img}}
{{end}}{{end}}
<h2>Reproduce</h2>
<p>From where the proof was started; each witness exact on the virtual backend:</p>
<pre><code>{{.Command}}
{{range .Witnesses}}{{.}}
{{end}}</code></pre>
<p>The proof is about the model, not about real Redis: the virtual backend's calibration tables tie the two. A witness run on the real backend lands within its timing (a millisecond or two) of the schedule, where a worst that needs a fault within microseconds of a call may not reproduce.</p>
</body>
</html>
`))

// SeedsLine is one metric over the proofs of one space under several
// seeds: the worst of any seed's (Worst, in WorstSeed's proof), the one
// closest to its bound (Closest, in ClosestSeed's), and how many seeds
// proved it of those that measured it.
type SeedsLine struct {
	Metric                 string
	Worst, Closest         *Proof
	WorstSeed, ClosestSeed int64
	Proven, Measured       int
}

// SeedsSummary sums up proofs of one space under several seeds, per
// metric.
func SeedsSummary(results []*ProveResult) []SeedsLine {
	var out []SeedsLine
	for i, p := range results[0].Proofs {
		l := SeedsLine{Metric: p.Metric}
		for _, r := range results {
			q := &r.Proofs[i]
			if q.Verdict == VerdictNone {
				continue
			}
			l.Measured++
			if q.Verdict == VerdictProven {
				l.Proven++
			}
			// A proof that measured nothing has no worst (not 0), and only
			// one that met a bound has a distance to it.
			if q.found && (l.Worst == nil || q.Worst > l.Worst.Worst) {
				l.Worst, l.WorstSeed = q, r.Space.Seed
			}
			if q.seen && (l.Closest == nil || q.Excess > l.Closest.Excess) {
				l.Closest, l.ClosestSeed = q, r.Space.Seed
			}
		}
		out = append(out, l)
	}
	return out
}

// closestText is the closest any seed came to the metric's bound, and
// which.
func (l SeedsLine) closestText() string {
	if l.Closest == nil {
		return "no bound applies"
	}
	return fmt.Sprintf("%s (seed %d)", marginText(l.Closest.Excess), l.ClosestSeed)
}

// marginText is how far a proof's excess leaves it from its bound.
func marginText(excess time.Duration) string {
	if excess > 0 {
		return model.DurationText(excess) + " above it"
	}
	return model.DurationText(-excess) + " below it"
}

// WriteSeedsSummary prints SeedsSummary, a line per metric.
func WriteSeedsSummary(w io.Writer, results []*ProveResult) {
	fmt.Fprintf(w, "over %d seeds (%d..%d):\n", len(results), results[0].Space.Seed, results[len(results)-1].Space.Seed)
	for _, l := range SeedsSummary(results) {
		if l.Worst == nil {
			fmt.Fprintf(w, "  %-17s not measured under any seed\n", l.Metric)
			continue
		}
		fmt.Fprintf(w, "  %-17s worst %s (seed %d, %s); closest to its bound: %s; proven under %d of %d seeds\n",
			l.Metric, model.DurationText(l.Worst.Worst), l.WorstSeed, results[0].pointText(results[0].Point(*l.Worst)), l.closestText(), l.Proven, l.Measured)
	}
}

// SeedsMarkdown writes the summary of one space's proofs under several
// seeds, linking each seed's report (dirs[k], relative to the summary).
func SeedsMarkdown(w io.Writer, results []*ProveResult, dirs []string) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	r0 := results[0]
	p("# chaos prove: %s, %d seeds\n\n", r0.Space.Name, len(results))
	complete := 0
	for _, r := range results {
		if r.Complete {
			complete++
		}
	}
	p("Every schedule of %s on the nanosecond grid, within the calibrated virtual model, under each seed of %d..%d: each seed's jitter and backoff draws are a proof of their own. %d of the %d proofs are complete",
		r0.RangeText(), r0.Space.Seed, results[len(results)-1].Space.Seed, complete, len(results))
	if complete < len(results) {
		p(" (an incomplete one's worst is the worst it reached)")
	}
	p(".\n\n")
	p("| metric | worst over the seeds | closest to its bound | proven under |\n|---|---|---|---|\n")
	for _, l := range SeedsSummary(results) {
		if l.Worst == nil {
			p("| %s | not measured under any seed | | |\n", l.Metric)
			continue
		}
		p("| %s | %s (seed %d, %s) | %s | %d of %d seeds |\n", l.Metric, model.DurationText(l.Worst.Worst), l.WorstSeed,
			r0.pointText(r0.Point(*l.Worst)), l.closestText(), l.Proven, l.Measured)
	}
	p("\n## Each seed\n\n")
	for k, r := range results {
		verdicts := map[string]int{}
		for _, q := range r.Proofs {
			verdicts[q.Verdict]++
		}
		var vs []string
		for _, v := range []string{VerdictProven, VerdictCounterexample, VerdictIncomplete, VerdictNone} {
			if verdicts[v] > 0 {
				vs = append(vs, fmt.Sprintf("%d %s", verdicts[v], v))
			}
		}
		p("- seed %d: %s; [report](%s/prove.md), [page](%s/index.html)\n", r.Space.Seed, strings.Join(vs, ", "), dirs[k], dirs[k])
	}
	return bw.Flush()
}
