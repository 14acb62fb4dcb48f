package sweep

import (
	"bufio"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
)

// CSV writes one row per cell: its axis values, status, runs, verdict
// counts, p50/p99/max (seconds) of gap, overlap, stale leadership and
// failover with their worst seeds, runs with overlap, expectation failures
// and the prediction.
func CSV(w io.Writer, r *Result) error {
	cw := csv.NewWriter(w)
	head := []string{"cell"}
	for _, a := range r.Grid.Axes {
		head = append(head, a.Param)
	}
	head = append(head, "status", "runs", "pass", "fail", "unknown")
	for _, m := range []string{"gap", "overlap", "stale", "failover"} {
		head = append(head, m+"_n", m+"_p50_s", m+"_p99_s", m+"_max_s", m+"_worst_seed")
	}
	head = append(head, "runs_with_overlap", "expect_failures", "predicted_gap_s", "predicted_overlap_s", "safe", "error")
	runner := r.Grid.Base.Mode == model.ModeRunner
	if runner {
		// The TaskRunner's chores and tasks: each count's worst run and
		// its lowest seed.
		for _, m := range workMetrics {
			head = append(head, m+"_max", m+"_worst_seed")
		}
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, c := range r.Cells {
		row := append([]string{strconv.Itoa(c.Index)}, c.Values...)
		row = append(row, c.Status, strconv.Itoa(c.Runs), strconv.Itoa(c.Verdicts.Pass), strconv.Itoa(c.Verdicts.Fail), strconv.Itoa(c.Verdicts.Unknown))
		for _, s := range []Stat{c.Gap, c.Overlap, c.Stale, c.Failover} {
			row = append(row, strconv.Itoa(s.N), secs(s.P50), secs(s.P99), secs(s.Max), strconv.FormatInt(s.WorstSeed, 10))
		}
		var ef []string
		for _, m := range c.ExpectFailures {
			ef = append(ef, fmt.Sprintf("%s=%d", m.Metric, m.Runs))
		}
		row = append(row, strconv.Itoa(c.RunsWithOverlap), strings.Join(ef, ";"), secs(c.Predicted.MaxGap), secs(c.Predicted.MaxOverlap), strconv.FormatBool(c.Safe), c.Error)
		if runner {
			var w Work
			if c.Work != nil {
				w = *c.Work
			}
			for _, s := range w.counts() {
				row = append(row, strconv.Itoa(s.Max), strconv.FormatInt(s.WorstSeed, 10))
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func secs(d time.Duration) string {
	if d == NoLimit {
		return "inf"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 6, 64)
}

// Files are what WriteFiles wrote, by name relative to the directory.
type Files []string

// fileSet writes a report's files into one directory and lists them.
type fileSet struct {
	dir   string
	names Files
}

// newFileSet creates dir and writes result.json from js.
func newFileSet(dir string, js func() ([]byte, error)) (*fileSet, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	data, err := js()
	if err != nil {
		return nil, err
	}
	f := &fileSet{dir: dir}
	return f, f.put("result.json", data)
}

// put writes one file of the set.
func (f *fileSet) put(name string, data []byte) error {
	f.names = append(f.names, name)
	return os.WriteFile(filepath.Join(f.dir, name), data, 0o644)
}

// WriteFiles writes the sweep's reports into dir (created if missing):
// result.json, cells.csv, for each pair of axes with more than one value
// (at most the first four such axes) heatmap-{overlap,gap}-X-Y.svg and .png,
// and index.html, which embeds the heatmaps.
func WriteFiles(dir string, r *Result) (Files, error) {
	fs, err := newFileSet(dir, r.JSON)
	if err != nil {
		return nil, err
	}
	var cb strings.Builder
	if err := CSV(&cb, r); err != nil {
		return fs.names, err
	}
	if err := fs.put("cells.csv", []byte(cb.String())); err != nil {
		return fs.names, err
	}
	maps, err := heatmaps(r)
	if err != nil {
		return fs.names, err
	}
	for _, m := range maps {
		if err := fs.put(m.name+".svg", m.svg); err != nil {
			return fs.names, err
		}
		if err := fs.put(m.name+".png", m.png); err != nil {
			return fs.names, err
		}
	}
	var hb strings.Builder
	if err := writeHTML(&hb, r, maps); err != nil {
		return fs.names, err
	}
	err = fs.put("index.html", []byte(hb.String()))
	return fs.names, err
}

type heatmapFile struct {
	name, title string
	svg, png    []byte
}

// heatmaps draws the overlap and gap planes of every pair of the first
// four axes with more than one value; a one-axis sweep gets a strip over
// that axis and a dummy one-value axis is not drawn.
func heatmaps(r *Result) ([]heatmapFile, error) {
	var multi []int
	for i, a := range r.Grid.Axes {
		if len(a.Values) > 1 && len(multi) < 4 {
			multi = append(multi, i)
		}
	}
	var out []heatmapFile
	for i := 0; i < len(multi); i++ {
		for j := i + 1; j < len(multi); j++ {
			x, y := multi[j], multi[i] // the faster-varying axis across
			for _, m := range []string{MetricOverlap, MetricGap} {
				svg, png, err := Heatmap(r, m, x, y)
				if err != nil {
					return nil, err
				}
				ax, ay := r.Grid.Axes[x].Param, r.Grid.Axes[y].Param
				out = append(out, heatmapFile{name: fmt.Sprintf("heatmap-%s-%s-%s", m, ax, ay), title: fmt.Sprintf("Worst %s over %s × %s", m, ax, ay), svg: svg, png: png})
			}
		}
	}
	return out, nil
}

type htmlCell struct {
	Cell
	Class string
}

type htmlPage struct {
	R        *Result
	Title    string
	Limits   []string
	Base     string
	Counts   map[string]int
	Safe     int
	Cells    []htmlCell
	Heatmaps []htmlImg
	Repro    []string
	Style    template.CSS
	// Runner: the grid runs the TaskRunner, so the cells show its chores
	// and tasks.
	Runner bool
}

type htmlImg struct {
	Title string
	Img   template.HTML
}

func writeHTML(w io.Writer, r *Result, maps []heatmapFile) error {
	pg := htmlPage{R: r, Title: "Sweep " + r.Grid.Name, Counts: map[string]int{}, Style: template.CSS(pageStyle), Runner: r.Grid.Base.Mode == model.ModeRunner}
	l := r.Grid.Limits
	pg.Limits = []string{"max gap " + limitText(l.gapLimit()), "max overlap " + limitText(l.MaxOverlap), "max stale leadership " + limitText(l.MaxStale)}
	b := r.Grid.Base.WithDefaults()
	pg.Base = fmt.Sprintf("%s: %d instances, TTL %v, Wait %v, jitter %dms, read timeout %v, max retries %d, op timeout %v, safe %v, %d faults, duration %v",
		b.Name, b.Instances, b.Params.TTL, b.Params.Wait, b.Params.JitterMS, b.Params.Client.ReadTimeout, b.Params.Client.MaxRetries, b.Params.OpTimeout, b.Params.Safe, len(b.Faults), b.Duration)
	for _, c := range r.Cells {
		pg.Counts[c.Status]++
		cls := "unsafe"
		switch {
		case c.Status != StatusDone:
			cls = "missing"
		case c.Safe:
			pg.Safe++
			cls = "safe"
		}
		pg.Cells = append(pg.Cells, htmlCell{c, cls})
	}
	for _, m := range maps {
		pg.Heatmaps = append(pg.Heatmaps, pngImg(m.title, m.png))
	}
	// Reproduce the worst overlap and the worst gap of the sweep.
	worst := func(pick func(Cell) Stat) (Cell, bool) {
		var best Cell
		ok := false
		for _, c := range r.Cells {
			if c.Runs > 0 && (!ok || pick(c).Max > pick(best).Max) {
				best, ok = c, true
			}
		}
		return best, ok
	}
	for _, m := range []struct {
		name string
		pick func(Cell) Stat
	}{{"overlap", func(c Cell) Stat { return c.Overlap }}, {"gap", func(c Cell) Stat { return c.Gap }}} {
		if c, ok := worst(m.pick); ok {
			var set []string
			for k, a := range r.Grid.Axes {
				set = append(set, a.Param+"="+c.Values[k])
			}
			pg.Repro = append(pg.Repro, fmt.Sprintf("worst %s %s: cell %d (%s), seed %d", m.name, model.DurationText(m.pick(c).Max), c.Index, strings.Join(set, ", "), m.pick(c).WorstSeed))
		}
	}
	return writePage(w, page, pg)
}

func limitText(d time.Duration) string {
	if d == NoLimit {
		return "none"
	}
	return d.String()
}

// pageHead opens the sweep's, the search's and the proof's pages: a page
// value with Title and Style.
const pageHead = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}}</title>
<style>{{.Style}}</style>
</head>
<body>
<h1>{{.Title}}</h1>
`

// writePage executes t with pg into w.
func writePage(w io.Writer, t *template.Template, pg any) error {
	bw := bufio.NewWriter(w)
	if err := t.Execute(bw, pg); err != nil {
		return err
	}
	return bw.Flush()
}

// pngImg is a PNG embedded in a page, titled.
func pngImg(title string, png []byte) htmlImg {
	return htmlImg{Title: title, Img: template.HTML(`<img src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(png) + `" alt="` + template.HTMLEscapeString(title) + `"/>`)}
}

// pageStyle is the style of the sweep's and the search's pages.
const pageStyle = `body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:80em;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}
.banner{padding:.6em 1em;border-radius:4px;background:#eef3f8}
.incomplete{background:#fff1d6}
table{border-collapse:collapse;font-size:.85em}
th,td{border:1px solid #ccd;padding:.2em .5em;text-align:right}
th{background:#f3f4f6}
td.l{text-align:left}
tr.safe td{background:#f0f8ee}
tr.unsafe td{background:#fbeaea}
tr.missing td{background:#eeeeee;color:#666}
img{max-width:100%;border:1px solid #ddd;margin:.5em 0}
code{background:#f4f4f4;padding:0 .2em}
`

var page = template.Must(template.New("sweep").Funcs(template.FuncMap{
	"s": func(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) },
}).Parse(pageHead + `<p class="banner{{if not .R.Complete}} incomplete{{end}}">
{{len .R.Cells}} cells × {{.R.Grid.Seeds}} seeds (first seed {{.R.Grid.FirstSeed}}), {{.R.Runs}} runs on the virtual backend.
<b>{{.Safe}}</b> cells are in the safe region ({{range $i, $l := .Limits}}{{if $i}}, {{end}}{{$l}}{{end}}; a cell is safe when its worst seed keeps every limit).
{{if not .R.Complete}}<br/><b>Incomplete:</b> {{.R.Incomplete}}{{end}}
</p>
<p>Base scenario {{.Base}}.</p>
<p>Cells: {{range $k, $v := .Counts}}{{$k}} {{$v}}; {{end}}</p>
<h2>Heatmaps</h2>
<p>Each square is the worst value (maximum over seeds, and over the axes not shown) in seconds; grey where a cell did not fully run. The thick line is the boundary of the safe region.</p>
{{range .Heatmaps}}<h3>{{.Title}}</h3>
{{.Img}}
{{else}}<p>No heatmap: the sweep has fewer than two axes with more than one value.</p>
{{end}}
<h2>Worst runs</h2>
<ul>{{range .Repro}}<li>{{.}}</li>{{end}}</ul>
<p>Each run is reproducible: the cell's scenario with that seed, on the virtual backend.</p>
<h2>Cells</h2>
<table>
<thead><tr><th>#</th>{{range .R.Grid.Axes}}<th>{{.Param}}</th>{{end}}<th>status</th><th>runs</th><th>pass/fail/unknown</th>
<th>gap p50</th><th>gap p99</th><th>gap max</th><th>overlap p50</th><th>overlap p99</th><th>overlap max</th><th>runs with overlap</th>
<th>stale max</th><th>failover p99</th><th>failover max</th><th>predicted gap</th><th>predicted overlap</th>{{if .Runner}}<th>duplicate chores</th><th>stale chores</th><th>duplicate tasks</th><th>lost tasks</th>{{end}}<th>expectation failures</th></tr></thead>
<tbody>
{{range .Cells}}<tr class="{{.Class}}"><td>{{.Index}}</td>{{range .Values}}<td>{{.}}</td>{{end}}<td class="l">{{.Status}}{{if .Error}}: {{.Error}}{{end}}</td><td>{{.Runs}}</td>
<td>{{.Verdicts.Pass}}/{{.Verdicts.Fail}}/{{.Verdicts.Unknown}}</td>
<td>{{s .Gap.P50}}</td><td>{{s .Gap.P99}}</td><td>{{s .Gap.Max}}</td><td>{{s .Overlap.P50}}</td><td>{{s .Overlap.P99}}</td><td>{{s .Overlap.Max}}</td><td>{{.RunsWithOverlap}}</td>
<td>{{s .Stale.Max}}</td><td>{{s .Failover.P99}}</td><td>{{s .Failover.Max}}</td><td>{{s .Predicted.MaxGap}}</td><td>{{s .Predicted.MaxOverlap}}</td>
{{if $.Runner}}{{with .Work}}<td>{{.DuplicateChores.Max}}</td><td>{{.StaleChores.Max}}</td><td>{{.RepeatedTasks.Max}}</td><td>{{.LostTasks.Max}}</td>{{else}}<td></td><td></td><td></td><td></td>{{end}}{{end}}
<td class="l">{{range .ExpectFailures}}{{.Metric}} {{.Runs}} {{end}}</td></tr>
{{end}}</tbody>
</table>
<p>Durations in seconds. Predicted: the analytic worst case (bounds.PredictMode) over the failure modes of the cell's faults, an upper bound that assumes the worst phase of the fault against renewals and follower attempts.</p>
</body>
</html>
`))
