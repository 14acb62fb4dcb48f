package reports

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/leaselab/leaselab/model"
)

// Plot renders the run's timeline: one lane per instance with its believed
// leadership, a lane with whose id Redis held, a strip counting believed
// leaders, the faults as bands, and reference lines at injection + TTL and
// + TTL + Wait. It returns the same figure as SVG (fonts embedded, so it
// renders identically anywhere) and as PNG.
func Plot(res *verdict.Result) (svg, png []byte, err error) {
	defer func() {
		// gonum/plot panics on some degenerate inputs (a font it cannot
		// find, an impossible size); a report must say so, not crash.
		if r := recover(); r != nil {
			svg, png, err = nil, nil, fmt.Errorf("plotting the timeline: %v", r)
		}
	}()
	f := newFigure(res)

	sc := vgsvg.NewWith(vgsvg.UseWH(f.width, f.height), vgsvg.EmbedFonts(true))
	f.draw(draw.New(sc))
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return nil, nil, fmt.Errorf("writing the SVG timeline: %w", err)
	}

	ic := vgimg.NewWith(vgimg.UseWH(f.width, f.height), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	f.draw(draw.New(ic))
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&pb); err != nil {
		return nil, nil, fmt.Errorf("writing the PNG timeline: %w", err)
	}
	return sb.Bytes(), pb.Bytes(), nil
}

// pngDPI makes the PNG sharp when a browser scales the 12-inch figure down
// to a page's width, without making a 50-lane figure huge.
const pngDPI = 144

// Colours. Instances get a qualitative palette without red, violet or
// orange: red and violet are kept for the two things a reader must never
// miss, gaps and overlaps, and orange for the commonest fault, a partition.
var (
	instancePalette = []color.NRGBA{
		rgb(0x4e79a7), rgb(0x59a14f), rgb(0xb6992d), rgb(0x499894),
		rgb(0x9d7660), rgb(0xd37295), rgb(0x2f4b7c), rgb(0x86bcb6),
	}
	colGap       = rgb(0xd62728)
	colOverlap   = rgb(0x7b2cbf)
	colOneLeader = rgb(0xc7e6c1)
	colNoLeader  = rgb(0xeeeeee) // before the first election: not a gap
	colNoKey     = rgb(0xf4f4f4)
	colUnknown   = rgb(0x999999) // a holder id no instance ran with
	// One colour per meaning: red is only a gap, violet only an overlap.
	colStale   = rgb(0x111111) // believed it led while Redis held another value
	colPhantom = rgb(0x6c757d) // Redis held the id of a live instance that did not believe it led
	colLinger  = rgb(0xced4da) // the key of a crashed or stopped holder, until it expires
	colLaneAlt = rgb(0xf6f7f9)
	colRule    = rgb(0xc8ccd2)
	colText    = rgb(0x222222)
	colSubtle  = rgb(0x666666)

	// verdictColours match the HTML banner.
	verdictColours = map[string]color.Color{
		verdictPass: rgb(0x1a7f37), verdictFail: rgb(0xcf222e), verdictIncomplete: rgb(0x9a6700), verdictUnknown: rgb(0x9a6700),
	}
)

func rgb(v uint32) color.NRGBA {
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// alpha returns c at opacity a (0–1).
func alpha(c color.NRGBA, a float64) color.NRGBA {
	c.A = uint8(math.Round(a * 255))
	return c
}

// lighten mixes c with white: t = 0 is c, 1 is white.
func lighten(c color.NRGBA, t float64) color.NRGBA {
	mix := func(v uint8) uint8 { return uint8(math.Round(float64(v) + (255-float64(v))*t)) }
	return color.NRGBA{R: mix(c.R), G: mix(c.G), B: mix(c.B), A: c.A}
}

// faultColour is the kind's colour (model.KindSpec.Colour), grey for a
// kind leaselab does not know (a timeline from elsewhere).
func faultColour(kind string) color.NRGBA {
	if k, ok := model.SpecOf(model.FaultKind(kind)); ok {
		return rgb(k.Colour)
	}
	return rgb(0x555555)
}

func instanceColour(i, incarnation int) color.NRGBA {
	c := instancePalette[i%len(instancePalette)]
	// Later incarnations of a restarted index are lighter, so a restart is
	// visible even where two beliefs touch.
	return lighten(c, math.Min(0.45*float64(incarnation), 0.7))
}

// segment is a stretch of a lane in seconds.
type segment struct {
	from, to float64
	colour   color.NRGBA
	label    string
}

// lane is one horizontal band of the figure, in data units (points).
type lane struct {
	name     string
	lo, hi   float64
	segments []segment
	marks    []segment // thin strips at the top of the lane (stale, phantom)
	hits     []segment // thin strips at the bottom (a fault hit this instance)
}

// plotColumns is how many columns the data area has at its finest: the
// PNG's pixels across it (pngDPI/72 per point of the figure's width).
// The SVG's resolution is no finer for a reader, and a segment is never
// drawn narrower than a point (rectangle).
const plotColumns = int(figWidth * pngDPI / 72)

// decimate merges the segments, marks and hits of a lane far denser than
// the picture's columns (a watch of a million transitions) into at most
// one drawn segment per run of columns, so that drawing stays linear in
// the picture, not in the recording. A lane with at most plotColumns
// stretches in all is left exactly as it is (every ordinary run's).
//
// A column is drawn in the colour that matters most among the stretches
// that touch it: an overlap, then a gap, then the one covering most of
// the column (a column holding both an overlap and a gap shows the
// overlap; the tables list both). Any stretch, however short, colours its
// column, so no window a reader must see (an overlap, a gap, a stale or
// phantom mark) disappears; it is drawn a column wide at least, as
// rectangle draws an instant a point wide.
func (l *lane) decimate(end float64) {
	if len(l.segments)+len(l.marks)+len(l.hits) <= plotColumns || end <= 0 {
		return
	}
	l.segments = rasterize(l.segments, end)
	l.marks = rasterize(l.marks, end)
	l.hits = rasterize(l.hits, end)
}

// rasterize is decimate's work on one list of stretches over [0, end].
func rasterize(segs []segment, end float64) []segment {
	if len(segs) == 0 {
		return segs
	}
	const n = plotColumns
	w := end / float64(n)
	type column struct {
		seg   int // index in segs of the stretch drawn, -1 none
		rank  int
		cover float64
	}
	cols := make([]column, n)
	for i := range cols {
		cols[i].seg = -1
	}
	colOf := func(x float64) int { return min(max(int(x/w), 0), n-1) }
	for i, s := range segs {
		rank := 0
		switch s.colour {
		case colOverlap:
			rank = 2
		case colGap:
			rank = 1
		}
		for c := colOf(s.from); c <= colOf(s.to); c++ {
			lo, hi := max(s.from, float64(c)*w), min(s.to, float64(c+1)*w)
			cover := max(hi-lo, 0)
			k := &cols[c]
			if k.seg < 0 || rank > k.rank || rank == k.rank && cover > k.cover {
				*k = column{seg: i, rank: rank, cover: cover}
			}
		}
	}
	var out []segment
	for c := 0; c < n; c++ {
		k := cols[c]
		if k.seg < 0 {
			continue
		}
		s := segs[k.seg]
		from := max(float64(c)*w, s.from)
		for c+1 < n && cols[c+1].seg >= 0 && segs[cols[c+1].seg].colour == s.colour && segs[cols[c+1].seg].label == s.label {
			c++
		}
		to := max(min(float64(c+1)*w, segs[cols[c].seg].to), from)
		out = append(out, segment{from: from, to: to, colour: s.colour, label: s.label})
	}
	return out
}

// faultBar is one fault on the fault lane.
type faultBar struct {
	id       int
	kind     string
	from, to float64
	row      int
	label    string
}

// figure is everything the timeline draws, computed once from the result
// and drawn onto both canvases.
type figure struct {
	res           *verdict.Result
	title, sub    string
	verdict       string
	width, height vg.Length
	header        vg.Length // title and legend, above the plot
	end           float64   // seconds
	top           float64   // data height
	laneFont      font.Length
	instances     []*lane
	redis, count  *lane
	faultLane     *lane
	faults        []faultBar
	faultRows     int
	bandsLo       float64 // fault bands span [bandsLo, bandsHi]
	bandsHi       float64
	refs          []refLine
	crashes       []glyphAt
	starts        []glyphAt
	kinds         []string // fault kinds present, in schedule order
	legendRows    int
	// phantoms and lingers: the Redis lane has marks of either kind (each
	// gets a legend entry only then).
	phantoms, lingers bool
	legendItems       []legendItem
}

type refLine struct {
	at     float64
	colour color.NRGBA
	dashes []vg.Length
}

type glyphAt struct {
	at float64
	y  float64
}

type legendItem struct {
	label string
	draw  func(c *draw.Canvas, r vg.Rectangle)
}

const (
	figWidth = 12 * vg.Inch
	pad      = 2.0 // data units between lanes
)

func seconds(d time.Duration) float64 { return d.Seconds() }

// sansFont is the one face the figure uses. A single face keeps the SVG,
// which embeds every face it uses so it renders the same everywhere, at
// about half a megabyte instead of one.
func sansFont(size font.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

func textStyle(size font.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: sansFont(size), Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YBottom}
}

func newFigure(res *verdict.Result) *figure {
	a := res.Analysis
	p := res.Params.WithDefaults()
	f := &figure{res: res, width: figWidth}
	f.end = seconds(max(a.End, res.Elapsed))
	if f.end <= 0 {
		f.end = 1
	}

	// How many instance lanes: the scenario's count, or more if the
	// timeline names more (a hand-built or truncated result).
	n := res.Scenario.Instances
	for _, e := range res.Timeline {
		n = max(n, e.Instance+1)
		for _, t := range e.Target {
			n = max(n, t+1)
		}
	}
	for _, b := range a.Beliefs {
		n = max(n, b.Instance+1)
	}

	// Lane height shrinks with the number of instances so that 50 lanes
	// still fit a page, but never below what a 6pt label needs.
	laneH := math.Max(10, math.Min(26, 220/math.Max(float64(n), 1)))
	switch {
	case n <= 12:
		f.laneFont = 9
	case n <= 30:
		f.laneFont = 7.5
	default:
		f.laneFont = 6.5
	}

	// Fault bars are packed into rows so overlapping faults stay apart.
	f.packFaults(res)
	faultH := 0.0
	if len(f.faults) > 0 {
		faultH = float64(f.faultRows) * 15
	}

	// Lanes from the top down: faults, instances, Redis, leader count.
	y := 0.0
	stackLane := func(name string, h float64) *lane {
		l := &lane{name: name, hi: -y, lo: -(y + h)}
		y += h + pad
		return l
	}
	if faultH > 0 {
		f.faultLane = stackLane("faults", faultH)
		y += 3
	}
	for i := 0; i < n; i++ {
		f.instances = append(f.instances, stackLane("i"+strconv.Itoa(i), laneH))
	}
	y += 5
	f.redis = stackLane("Redis key", 20)
	f.count = stackLane("leaders", 16)
	total := y - pad
	// Shift so the bottom is 0: gonum's Y axis grows upwards.
	shift := func(l *lane) {
		if l != nil {
			l.lo += total
			l.hi += total
		}
	}
	shift(f.faultLane)
	for _, l := range f.instances {
		shift(l)
	}
	shift(f.redis)
	shift(f.count)
	f.top = total
	f.bandsLo = f.count.lo
	f.bandsHi = f.redis.hi
	if n > 0 {
		f.bandsHi = f.instances[0].hi
	}

	f.fillBeliefs(res)
	f.fillRedis(res)
	f.fillCount(res)
	f.fillLifecycle(res)
	for _, l := range f.lanes() {
		l.decimate(f.end)
	}
	for _, fo := range a.Faults {
		c := faultColour(fo.Kind)
		if !fo.Open || fo.Applied > 0 {
			f.refs = append(f.refs,
				refLine{at: seconds(fo.Applied + p.TTL), colour: c, dashes: []vg.Length{4, 3}},
				refLine{at: seconds(fo.Applied + p.TTL + p.Wait), colour: c, dashes: []vg.Length{1, 2.5}})
		}
		for _, t := range fo.Target {
			if t < len(f.instances) {
				f.instances[t].hits = append(f.instances[t].hits, segment{from: seconds(fo.Applied), to: seconds(fo.Healed), colour: alpha(c, 0.75)})
			}
		}
	}

	f.verdict, _ = verdictOf(res)
	f.title = fmt.Sprintf("%s · seed %d · ", nonEmpty(res.Scenario.Name, "unnamed scenario"), res.Seed)
	f.sub = fmt.Sprintf("%d instances · TTL %s · Wait %s · jitter %s · time scale %s · run %s",
		n, dur(p.TTL), dur(p.Wait), dur(time.Duration(p.JitterMS)*time.Millisecond),
		strconv.FormatFloat(nonZero(res.TimeScale), 'g', -1, 64), nonEmpty(res.RunID, "—"))
	f.buildLegend()

	// The figure's height follows its lanes: the data area gets one point
	// per data unit, plus room for the header and the x axis.
	const axisH = 44
	f.header = 46 + vg.Length(f.legendRows)*14
	f.height = f.header + vg.Length(total) + axisH
	return f
}

func nonZero(k float64) float64 {
	if k == 0 {
		return 1
	}
	return k
}

// maxFaultRows caps the fault lane: a schedule of a hundred faults must
// not push the instances off the page.
const maxFaultRows = 6

// packFaults assigns each fault a row of the fault lane: the first row whose
// last bar (and label) ends before this one starts. If that takes more than
// maxFaultRows, labels are dropped (the legend still names the kinds), and
// if even bars alone need more, they share rows and may overlap.
func (f *figure) packFaults(res *verdict.Result) {
	for _, fo := range res.Analysis.Faults {
		if !slices.Contains(f.kinds, fo.Kind) {
			f.kinds = append(f.kinds, fo.Kind)
		}
		b := faultBar{id: fo.ID, kind: fo.Kind, from: seconds(fo.Applied), to: seconds(fo.Healed)}
		b.label = fmt.Sprintf("#%d %s", fo.ID, fo.Kind)
		if len(fo.Target) > 0 && len(fo.Target) <= 3 {
			b.label += " " + targets(fo.Target)
		}
		// Which instance led when the fault hit: "leader i0".
		b.label += " · leader " + leadersAt(res, fo.Applied)
		f.faults = append(f.faults, b)
	}
	// Seconds per point of the data area, roughly: the width minus the
	// lane labels' margin. Close enough to keep labels from colliding.
	secPerPt := f.end / float64(figWidth-100)
	minGap := secPerPt * 3 // keep bars in one row visibly apart
	pack := func(labels bool) int {
		var rowEnd []float64
		for i := range f.faults {
			b := &f.faults[i]
			occupied := b.to + minGap
			if labels {
				occupied = math.Max(occupied, b.from+secPerPt*float64(textStyle(7.5, colText).Width(b.label)+8))
			}
			b.row = -1
			for r, e := range rowEnd {
				if e <= b.from {
					b.row, rowEnd[r] = r, occupied
					break
				}
			}
			if b.row < 0 {
				b.row = len(rowEnd)
				rowEnd = append(rowEnd, occupied)
			}
		}
		return len(rowEnd)
	}
	f.faultRows = pack(true)
	if f.faultRows <= maxFaultRows {
		return
	}
	for i := range f.faults {
		f.faults[i].label = ""
	}
	if f.faultRows = pack(false); f.faultRows <= maxFaultRows {
		return
	}
	for i := range f.faults {
		f.faults[i].row %= maxFaultRows
	}
	f.faultRows = maxFaultRows
}

// incarnations numbers the ids each index ran with, in order of start.
func incarnations(t model.Timeline) map[string]int {
	seen := map[int]int{}
	out := map[string]int{}
	for _, e := range t {
		if e.Kind == model.InstanceStarted && e.Instance >= 0 && e.ID != "" {
			if _, ok := out[e.ID]; !ok {
				out[e.ID] = seen[e.Instance]
				seen[e.Instance]++
			}
		}
	}
	return out
}

// ends indexes when each instance's incarnations crashed or stopped: the
// earliest such event per index and id ("" for an event that names no id),
// and per index whatever the id.
type ends struct {
	byID  map[model.Member]time.Duration
	index map[int]time.Duration
}

func endsOf(t model.Timeline) ends {
	e := ends{byID: map[model.Member]time.Duration{}, index: map[int]time.Duration{}}
	for _, ev := range t {
		if ev.Kind != model.InstanceCrashed && ev.Kind != model.InstanceStopped {
			continue
		}
		k := model.Member{Instance: ev.Instance, ID: ev.ID}
		if at, ok := e.byID[k]; !ok || ev.At < at {
			e.byID[k] = ev.At
		}
		if at, ok := e.index[ev.Instance]; !ok || ev.At < at {
			e.index[ev.Instance] = ev.At
		}
	}
	return e
}

// gone reports whether m's incarnation had crashed or stopped by at: an
// event of its index naming its id or no id, or any of its index when m
// names none. (A scan of the timeline per phantom window was quadratic.)
func (e ends) gone(m model.Member, at time.Duration) bool {
	if m.ID == "" {
		t, ok := e.index[m.Instance]
		return ok && t <= at
	}
	t1, ok1 := e.byID[m]
	t2, ok2 := e.byID[model.Member{Instance: m.Instance}]
	return ok1 && t1 <= at || ok2 && t2 <= at
}

// leadersAt names the instances that believed they led at t ("i0", "none").
func leadersAt(res *verdict.Result, t time.Duration) string {
	var ls []string
	for _, b := range res.Analysis.Beliefs {
		if b.Start <= t && t < b.End && b.Instance >= 0 {
			ls = append(ls, "i"+strconv.Itoa(b.Instance))
		}
	}
	if len(ls) == 0 {
		return "none"
	}
	return strings.Join(ls, ",")
}

func (f *figure) fillBeliefs(res *verdict.Result) {
	inc := incarnations(res.Timeline)
	for _, b := range res.Analysis.Beliefs {
		if b.Instance < 0 || b.Instance >= len(f.instances) {
			continue
		}
		l := f.instances[b.Instance]
		l.segments = append(l.segments, segment{from: seconds(b.Start), to: seconds(b.End), colour: instanceColour(b.Instance, inc[b.ID])})
	}
	for _, s := range res.Analysis.Redis.Stale {
		if s.Instance >= 0 && s.Instance < len(f.instances) {
			l := f.instances[s.Instance]
			l.marks = append(l.marks, segment{from: seconds(s.Start), to: seconds(s.End), colour: colStale})
		}
	}
}

// fillRedis draws the Redis lane from the analysis's holder segments.
func (f *figure) fillRedis(res *verdict.Result) {
	inc := incarnations(res.Timeline)
	for _, h := range res.Analysis.Redis.Holders {
		s := segment{from: seconds(h.Start), to: seconds(h.End), colour: colNoKey}
		switch {
		case h.Holder == "":
		case h.Instance >= 0:
			s.colour, s.label = instanceColour(h.Instance, inc[h.Holder]), "i"+strconv.Itoa(h.Instance)
		default:
			s.colour, s.label = colUnknown, "?"
		}
		f.redis.segments = append(f.redis.segments, s)
	}
	ended := endsOf(res.Timeline)
	for _, p := range res.Analysis.Redis.Phantom {
		col := colPhantom
		if ended.gone(p.Member, p.Start) {
			col = colLinger // expected: the key outlives its crashed holder
			f.lingers = true
		} else {
			f.phantoms = true
		}
		f.redis.marks = append(f.redis.marks, segment{from: seconds(p.Start), to: seconds(p.End), colour: col})
	}
}

// fillCount draws the leader-count strip from the analysis's steps.
func (f *figure) fillCount(res *verdict.Result) {
	elected := false
	for _, st := range res.Analysis.LeaderCount {
		s := segment{from: seconds(st.Start), to: seconds(st.End)}
		switch {
		case st.Leaders == 0 && !elected:
			s.colour = colNoLeader
		case st.Leaders == 0:
			s.colour, s.label = colGap, "0"
		case st.Leaders == 1:
			s.colour = colOneLeader
		default:
			s.colour, s.label = colOverlap, strconv.Itoa(st.Leaders)
		}
		elected = elected || st.Leaders > 0
		f.count.segments = append(f.count.segments, s)
	}
}

func (f *figure) fillLifecycle(res *verdict.Result) {
	inc := incarnations(res.Timeline)
	for _, e := range res.Timeline {
		if e.Instance < 0 || e.Instance >= len(f.instances) {
			continue
		}
		l := f.instances[e.Instance]
		mid := (l.lo + l.hi) / 2
		switch {
		case e.Kind == model.InstanceCrashed:
			f.crashes = append(f.crashes, glyphAt{seconds(e.At), mid})
		case e.Kind == model.InstanceStarted && inc[e.ID] > 0:
			f.starts = append(f.starts, glyphAt{seconds(e.At), mid})
		}
	}
}

func (f *figure) buildLegend() {
	swatch := func(col color.Color) func(c *draw.Canvas, r vg.Rectangle) {
		return func(c *draw.Canvas, r vg.Rectangle) { fillRect(c, r, col) }
	}
	items := []legendItem{
		{"believed leader (colour = instance)", func(c *draw.Canvas, r vg.Rectangle) {
			w := r.Size().X / 3
			for i := 0; i < 3; i++ {
				fillRect(c, vg.Rectangle{Min: vg.Point{X: r.Min.X + vg.Length(i)*w, Y: r.Min.Y}, Max: vg.Point{X: r.Min.X + vg.Length(i+1)*w, Y: r.Max.Y}}, instancePalette[i])
			}
		}},
		{"stale: believed it led, Redis held another value", func(c *draw.Canvas, r vg.Rectangle) {
			fillRect(c, r, instancePalette[0])
			fillRect(c, vg.Rectangle{Min: vg.Point{X: r.Min.X, Y: r.Max.Y - 3}, Max: r.Max}, colStale)
		}},
		{"gap: 0 leaders", swatch(colGap)},
		{"overlap: ≥2 leaders", swatch(colOverlap)},
		{"1 leader", swatch(colOneLeader)},
	}
	mark := func(col color.Color) func(c *draw.Canvas, r vg.Rectangle) {
		return func(c *draw.Canvas, r vg.Rectangle) {
			fillRect(c, r, colNoKey)
			fillRect(c, vg.Rectangle{Min: vg.Point{X: r.Min.X, Y: r.Max.Y - 3}, Max: r.Max}, col)
		}
	}
	if f.phantoms {
		items = append(items, legendItem{"phantom: key of a live instance that did not believe it led", mark(colPhantom)})
	}
	if f.lingers {
		items = append(items, legendItem{"key of a crashed/stopped holder, until expiry", mark(colLinger)})
	}
	for _, k := range f.kinds {
		items = append(items, legendItem{"fault: " + k, swatch(alpha(faultColour(k), 0.45))})
	}
	if len(f.kinds) > 0 {
		line := func(d []vg.Length) func(c *draw.Canvas, r vg.Rectangle) {
			return func(c *draw.Canvas, r vg.Rectangle) {
				y := (r.Min.Y + r.Max.Y) / 2
				c.StrokeLine2(draw.LineStyle{Color: colSubtle, Width: 1.2, Dashes: d}, r.Min.X, y, r.Max.X, y)
			}
		}
		items = append(items,
			legendItem{"fault's target (underline, in the fault's colour)", func(c *draw.Canvas, r vg.Rectangle) {
				fillRect(c, vg.Rectangle{Min: r.Min, Max: vg.Point{X: r.Max.X, Y: r.Min.Y + 3}}, colSubtle)
			}},
			legendItem{"injection + TTL (in the fault's colour)", line([]vg.Length{4, 3})},
			legendItem{"injection + TTL + Wait (in the fault's colour)", line([]vg.Length{1, 2.5})},
		)
	}
	if len(f.crashes) > 0 {
		items = append(items, legendItem{"crash", func(c *draw.Canvas, r vg.Rectangle) {
			c.DrawGlyph(draw.GlyphStyle{Color: colText, Radius: 3.5, Shape: draw.CrossGlyph{}}, vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2})
		}})
	}
	if len(f.starts) > 0 {
		items = append(items, legendItem{"restart (new incarnation, lighter)", func(c *draw.Canvas, r vg.Rectangle) {
			c.DrawGlyph(draw.GlyphStyle{Color: colText, Radius: 3.5, Shape: draw.TriangleGlyph{}}, vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2})
		}})
	}
	f.legendItems = items
	// Lay out once to count rows; draw repeats the same arithmetic.
	f.legendRows = f.layoutLegend(nil, 0)
}

// layoutLegend flows the legend items left to right from the top of the
// header, wrapping at the figure's width, and draws them if c is not nil.
// It returns the number of rows.
func (f *figure) layoutLegend(c *draw.Canvas, top vg.Length) int {
	sty := textStyle(8, colText)
	const left, sw, gapAfter = 12, 16, 14
	x, rows := vg.Length(left), 1
	for _, it := range f.legendItems {
		w := sw + 4 + sty.Width(it.label) + gapAfter
		if x+w > f.width-12 && x > left {
			x, rows = left, rows+1
		}
		if c != nil {
			y := top - vg.Length(rows)*14
			it.draw(c, vg.Rectangle{Min: vg.Point{X: x, Y: y + 2}, Max: vg.Point{X: x + sw, Y: y + 10}})
			c.FillText(sty, vg.Point{X: x + sw + 4, Y: y + 2}, it.label)
		}
		x += w
	}
	return rows
}

func fillRect(c *draw.Canvas, r vg.Rectangle, col color.Color) {
	c.FillPolygon(col, []vg.Point{r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}})
}

// plotterFunc adapts a function to plot.Plotter, so each layer of the figure
// is drawn in the plot's data coordinates in a fixed order.
type plotterFunc func(c draw.Canvas, p *plot.Plot)

func (fn plotterFunc) Plot(c draw.Canvas, p *plot.Plot) { fn(c, p) }

func (f *figure) draw(dc draw.Canvas) {
	// Header: title, subtitle, legend.
	top := dc.Max.Y
	ts := textStyle(13, colText)
	dc.FillText(ts, vg.Point{X: 12, Y: top - 18}, f.title)
	ts.Color = verdictColours[f.verdict]
	dc.FillText(ts, vg.Point{X: 12 + ts.Width(f.title), Y: top - 18}, f.verdict)
	dc.FillText(textStyle(8.5, colSubtle), vg.Point{X: 12, Y: top - 32}, f.sub)
	f.layoutLegend(&dc, top-34)

	p := plot.New()
	p.BackgroundColor = color.Transparent
	p.X.Min, p.X.Max = 0, f.end
	p.Y.Min, p.Y.Max = 0, f.top
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.Label.Text = "seconds since the start of the run"
	p.X.Label.TextStyle.Font = sansFont(9)
	p.X.Tick.Label.Font = sansFont(8.5)
	p.X.LineStyle.Color = colRule
	p.X.Tick.LineStyle.Color = colRule
	p.X.Tick.Marker = timeTicks{}
	p.Y.LineStyle.Width = 0
	p.Y.Tick.Length = 0
	p.Y.Tick.Label.Font = sansFont(f.laneFont)
	p.Y.Tick.Label.Color = colText
	var ticks []plot.Tick
	addTick := func(l *lane) {
		if l != nil {
			ticks = append(ticks, plot.Tick{Value: (l.lo + l.hi) / 2, Label: l.name})
		}
	}
	addTick(f.faultLane)
	for _, l := range f.instances {
		addTick(l)
	}
	addTick(f.redis)
	addTick(f.count)
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)

	grid := plotter.NewGrid()
	grid.Horizontal.Color = nil
	grid.Vertical.Color = rgb(0xe3e6ea)
	grid.Vertical.Dashes = nil

	p.Add(plotterFunc(f.drawBackground), grid, plotterFunc(f.drawBands), plotterFunc(f.drawLanes),
		plotterFunc(f.drawFaultLane), plotterFunc(f.drawRefs), plotterFunc(f.drawLabels), plotterFunc(f.drawGlyphs))

	area := draw.Crop(dc, 4, -16, 0, -f.header)
	p.Draw(area)
}

// rectangle fills [from, to] × [lo, hi] in data coordinates, at least one
// point wide so that an instant (a redis-restart, a blip of leadership)
// still shows.
func rectangle(c *draw.Canvas, p *plot.Plot, from, to, lo, hi float64, col color.Color) {
	x, y := p.Transforms(c)
	x0, x1 := x(from), x(to)
	if x1-x0 < 1 {
		x1 = x0 + 1
	}
	fillRect(c, vg.Rectangle{Min: vg.Point{X: x0, Y: y(lo)}, Max: vg.Point{X: x1, Y: y(hi)}}, col)
}

func (f *figure) drawBackground(c draw.Canvas, p *plot.Plot) {
	for i, l := range f.instances {
		if i%2 == 1 {
			rectangle(&c, p, 0, f.end, l.lo-pad/2, l.hi+pad/2, colLaneAlt)
		}
	}
	// A rule between the instances and the Redis and count lanes.
	_, y := p.Transforms(&c)
	c.StrokeLine2(draw.LineStyle{Color: colRule, Width: 0.8}, c.Min.X, y(f.redis.hi+4), c.Max.X, y(f.redis.hi+4))
}

func (f *figure) drawBands(c draw.Canvas, p *plot.Plot) {
	for _, b := range f.faults {
		rectangle(&c, p, b.from, b.to, f.bandsLo, f.bandsHi, alpha(faultColour(b.kind), 0.13))
	}
}

func (f *figure) drawLanes(c draw.Canvas, p *plot.Plot) {
	for _, l := range f.lanes() {
		h := l.hi - l.lo
		for _, s := range l.segments {
			rectangle(&c, p, s.from, s.to, l.lo, l.hi, s.colour)
		}
		for _, s := range l.marks {
			rectangle(&c, p, s.from, s.to, l.hi-math.Max(2.5, h*0.3), l.hi, s.colour)
		}
		for _, s := range l.hits {
			rectangle(&c, p, s.from, s.to, l.lo, l.lo+math.Max(2, h*0.18), s.colour)
		}
	}
}

// drawLabels writes the labels of the Redis and count lanes last, on a
// patch of their segment's colour, so that no reference line crosses them.
func (f *figure) drawLabels(c draw.Canvas, p *plot.Plot) {
	light := textStyle(7.5, color.White)
	light.XAlign, light.YAlign = draw.XCenter, draw.YCenter
	dark := light
	dark.Color = colText
	x, y := p.Transforms(&c)
	for _, l := range f.lanes() {
		for _, s := range l.segments {
			w := light.Width(s.label)
			if s.label == "" || float64(x(s.to)-x(s.from)) < float64(w)+8 {
				continue
			}
			sty := light
			if luminance(s.colour) > 0.6 {
				sty = dark
			}
			mid := vg.Point{X: (x(s.from) + x(s.to)) / 2, Y: y((l.lo + l.hi) / 2)}
			hh := sty.Height(s.label)/2 + 1
			fillRect(&c, vg.Rectangle{Min: vg.Point{X: mid.X - w/2 - 3, Y: mid.Y - hh}, Max: vg.Point{X: mid.X + w/2 + 3, Y: mid.Y + hh}}, s.colour)
			c.FillText(sty, mid, s.label)
		}
	}
}

// lanes lists the lanes that carry segments.
func (f *figure) lanes() []*lane {
	return append(append([]*lane{}, f.instances...), f.redis, f.count)
}

// luminance decides whether a label on a colour is written in white or
// dark text.
func luminance(c color.NRGBA) float64 {
	return (0.299*float64(c.R) + 0.587*float64(c.G) + 0.114*float64(c.B)) / 255
}

func (f *figure) drawFaultLane(c draw.Canvas, p *plot.Plot) {
	if f.faultLane == nil {
		return
	}
	x, y := p.Transforms(&c)
	rowH := (f.faultLane.hi - f.faultLane.lo) / float64(f.faultRows)
	sty := textStyle(7.5, colText)
	sty.YAlign = draw.YCenter
	for _, b := range f.faults {
		hi := f.faultLane.hi - float64(b.row)*rowH
		lo := hi - rowH + 2
		col := faultColour(b.kind)
		rectangle(&c, p, b.from, b.to, lo, hi, alpha(col, 0.55))
		// The label starts inside the bar and may run past its end: the
		// packing left room for it.
		if b.label != "" {
			c.FillText(sty, vg.Point{X: x(b.from) + 3, Y: y((lo + hi) / 2)}, b.label)
		}
	}
}

func (f *figure) drawRefs(c draw.Canvas, p *plot.Plot) {
	x, y := p.Transforms(&c)
	for _, r := range f.refs {
		if r.at > f.end {
			continue
		}
		c.StrokeLine2(draw.LineStyle{Color: r.colour, Width: 1.1, Dashes: r.dashes}, x(r.at), y(f.bandsLo), x(r.at), y(f.bandsHi))
	}
}

func (f *figure) drawGlyphs(c draw.Canvas, p *plot.Plot) {
	x, y := p.Transforms(&c)
	for _, g := range f.crashes {
		c.DrawGlyph(draw.GlyphStyle{Color: colText, Radius: 3.5, Shape: draw.CrossGlyph{}}, vg.Point{X: x(g.at), Y: y(g.y)})
	}
	for _, g := range f.starts {
		c.DrawGlyph(draw.GlyphStyle{Color: colText, Radius: 3, Shape: draw.TriangleGlyph{}}, vg.Point{X: x(g.at), Y: y(g.y)})
	}
}

// timeTicks labels the time axis about every fourteenth of the run, at 1, 2
// or 5 × 10^k seconds, with unlabelled minor ticks between: gonum's default
// gives three or four labels across a 12-inch figure, too few to read a
// window's start off the plot.
type timeTicks struct{}

// Ticks implements plot.Ticker.
func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return nil
	}
	raw := span / 14
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step, minors := 10*mag, 5.0
	switch {
	case raw <= mag:
		step = mag
	case raw <= 2*mag:
		step, minors = 2*mag, 4
	case raw <= 5*mag:
		step = 5 * mag
	}
	decimals := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	minor := step / minors
	var ticks []plot.Tick
	for k := math.Ceil(lo/minor - 1e-9); k*minor <= hi+1e-9*span; k++ {
		v := k * minor
		if v == 0 {
			v = 0 // not -0, which would be labelled "-0"
		}
		t := plot.Tick{Value: v}
		if q := v / step; math.Abs(q-math.Round(q)) < 1e-6 {
			t.Label = strconv.FormatFloat(math.Round(q)*step, 'f', decimals, 64)
			if q == 0 {
				t.Label = "0"
			}
		}
		ticks = append(ticks, t)
	}
	return ticks
}
