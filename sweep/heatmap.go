package sweep

import (
	"bytes"
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Heatmap metrics.
const (
	MetricOverlap = "overlap"
	MetricGap     = "gap"
	MetricStale   = "stale"
)

// Plane is a metric over two axes of a sweep: each point is the worst
// (maximum over seeds and over every other axis) of the cells it covers.
type Plane struct {
	Metric string
	X, Y   int // axis indexes
	// W[y][x] is the worst value; Done[y][x] is false when a covered cell
	// did not run completely (not run, partial, invalid); Safe[y][x] when
	// every covered cell is safe.
	W    [][]time.Duration
	Done [][]bool
	Safe [][]bool
	Max  time.Duration
}

// PlaneOf reduces the result to one metric over axes x and y.
func PlaneOf(r *Result, metric string, x, y int) (Plane, error) {
	g := r.Grid
	if x < 0 || y < 0 || x >= len(g.Axes) || y >= len(g.Axes) || x == y {
		return Plane{}, fmt.Errorf("heatmap: axes %d and %d; the sweep has %d axes", x, y, len(g.Axes))
	}
	nx, ny := len(g.Axes[x].Values), len(g.Axes[y].Values)
	p := Plane{Metric: metric, X: x, Y: y}
	for range ny {
		p.W = append(p.W, make([]time.Duration, nx))
		p.Done = append(p.Done, slices.Repeat([]bool{true}, nx))
		p.Safe = append(p.Safe, slices.Repeat([]bool{true}, nx))
	}
	for i, c := range r.Cells {
		co := g.coords(i)
		cx, cy := co[x], co[y]
		var v time.Duration
		switch metric {
		case MetricOverlap:
			v = c.Overlap.Max
		case MetricGap:
			v = c.Gap.Max
		case MetricStale:
			v = c.Stale.Max
		default:
			return Plane{}, fmt.Errorf("heatmap: unknown metric %q; want overlap, gap or stale", metric)
		}
		p.W[cy][cx] = max(p.W[cy][cx], v)
		p.Max = max(p.Max, v)
		if c.Status != StatusDone {
			p.Done[cy][cx] = false
		}
		if !c.Safe {
			p.Safe[cy][cx] = false
		}
	}
	return p, nil
}

var (
	colOverlap = color.NRGBA{0x7b, 0x2c, 0xbf, 0xff}
	colGap     = color.NRGBA{0xd6, 0x27, 0x28, 0xff}
	colStale   = color.NRGBA{0xe1, 0x57, 0x59, 0xff}
	colMissing = color.NRGBA{0xcc, 0xcc, 0xcc, 0xff}
	colLine    = color.NRGBA{0x11, 0x11, 0x11, 0xff}
	colText    = color.NRGBA{0x22, 0x22, 0x22, 0xff}
)

// labelAxes names p's axes x and y, in the plots' fonts (the title's
// too).
func labelAxes(p *plot.Plot, x, y string) {
	p.Title.TextStyle.Font = sans(10)
	p.X.Label.Text, p.Y.Label.Text = x, y
	p.X.Label.TextStyle.Font, p.Y.Label.TextStyle.Font = sans(9), sans(9)
	p.X.Tick.Label.Font, p.Y.Tick.Label.Font = sans(8), sans(8)
}

func sans(size font.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

// Heatmap draws one metric over axes x and y as SVG (fonts embedded) and
// PNG: each square's colour is the worst value of the cells it covers (its
// seconds written in it), grey where a covered cell did not fully run, and
// a thick line is drawn between safe and unsafe squares: the boundary of
// the safe region under the sweep's limits.
func Heatmap(r *Result, metric string, x, y int) (svg, png []byte, err error) {
	defer func() {
		if e := recover(); e != nil {
			svg, png, err = nil, nil, fmt.Errorf("drawing the heatmap: %v", e)
		}
	}()
	pl, err := PlaneOf(r, metric, x, y)
	if err != nil {
		return nil, nil, err
	}
	p := plot.New()
	ax, ay := r.Grid.Axes[x], r.Grid.Axes[y]
	p.Title.Text = fmt.Sprintf("%s: worst %s (s) over %s × %s, %d seeds per cell", r.Grid.Name, metric, ax.Param, ay.Param, r.Grid.Seeds)
	if len(r.Grid.Axes) > 2 {
		p.Title.Text += "\n(worst over the other axes)"
	}
	labelAxes(p, ax.Param, ay.Param)
	ticks := func(vs []string) plot.ConstantTicks {
		var t []plot.Tick
		for i, v := range vs {
			t = append(t, plot.Tick{Value: float64(i), Label: v})
		}
		return t
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks(ax.Values), ticks(ay.Values)
	p.X.Min, p.X.Max = -0.5, float64(len(ax.Values))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(ay.Values))-0.5
	hot := colOverlap
	switch metric {
	case MetricGap:
		hot = colGap
	case MetricStale:
		hot = colStale
	}
	p.Add(&heat{pl: pl, hot: hot, limit: limitOf(r.Grid.Limits, metric)})
	w := vg.Length(max(5, min(12, 1.2+0.6*float64(len(ax.Values))))) * vg.Inch
	h := vg.Length(max(4, min(10, 1.6+0.45*float64(len(ay.Values))))) * vg.Inch
	return drawPlot(p, w, h)
}

// drawPlot draws p as SVG (fonts embedded) and as PNG, w × h.
func drawPlot(p *plot.Plot, w, h vg.Length) (svg, png []byte, err error) {
	sc := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true))
	p.Draw(draw.New(sc))
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return nil, nil, err
	}
	ic := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(120), vgimg.UseBackgroundColor(color.White))
	p.Draw(draw.New(ic))
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&pb); err != nil {
		return nil, nil, err
	}
	return sb.Bytes(), pb.Bytes(), nil
}

func limitOf(l Limits, metric string) time.Duration {
	switch metric {
	case MetricGap:
		return l.gapLimit()
	case MetricOverlap:
		return l.MaxOverlap
	}
	return l.MaxStale
}

// heat is the plotter: squares, values, the safe boundary.
type heat struct {
	pl    Plane
	hot   color.NRGBA
	limit time.Duration
}

func (h *heat) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	ny, nx := len(h.pl.W), len(h.pl.W[0])
	ts := text.Style{Color: colText, Font: sans(max(6, min(9, font.Length(90/max(nx, ny))))), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter}
	for yi := range ny {
		for xi := range nx {
			x0, x1 := tx(float64(xi)-0.5), tx(float64(xi)+0.5)
			y0, y1 := ty(float64(yi)-0.5), ty(float64(yi)+0.5)
			col := color.Color(colMissing)
			v := h.pl.W[yi][xi]
			if h.pl.Done[yi][xi] {
				col = shade(h.hot, v, h.pl.Max)
			}
			c.FillPolygon(col, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
			label := "—"
			if h.pl.Done[yi][xi] {
				label = strconv.FormatFloat(v.Seconds(), 'f', 2, 64)
			}
			if nx*ny <= 600 {
				c.FillText(ts, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, label)
			}
		}
	}
	// The boundary: an edge between a safe and an unsafe square (or the
	// plot's border around a safe square is left undrawn).
	ls := draw.LineStyle{Color: colLine, Width: vg.Points(2.5)}
	safe := func(xi, yi int) bool { return h.pl.Safe[yi][xi] && h.pl.Done[yi][xi] }
	for yi := range ny {
		for xi := range nx {
			if xi+1 < nx && safe(xi, yi) != safe(xi+1, yi) {
				x := tx(float64(xi) + 0.5)
				c.StrokeLine2(ls, x, ty(float64(yi)-0.5), x, ty(float64(yi)+0.5))
			}
			if yi+1 < ny && safe(xi, yi) != safe(xi, yi+1) {
				y := ty(float64(yi) + 0.5)
				c.StrokeLine2(ls, tx(float64(xi)-0.5), y, tx(float64(xi)+0.5), y)
			}
		}
	}
}

// shade mixes white with hot by v/max.
func shade(hot color.NRGBA, v, maxV time.Duration) color.Color {
	if maxV <= 0 || v <= 0 {
		return color.NRGBA{0xf7, 0xfb, 0xf4, 0xff} // zero: a pale green
	}
	f := 0.15 + 0.85*float64(v)/float64(maxV)
	mix := func(a uint8) uint8 { return uint8(255 - f*float64(255-int(a))) }
	return color.NRGBA{mix(hot.R), mix(hot.G), mix(hot.B), 0xff}
}

func (h *heat) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(h.pl.W[0])) - 0.5, -0.5, float64(len(h.pl.W)) - 0.5
}
