package sweep

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bufio"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

// shortMetric names a metric in file names and headings.
func shortMetric(m string) string {
	switch m {
	case exOverlap:
		return "overlap"
	case exGap:
		return "gap"
	case exStale:
		return "stale"
	}
	return m
}

// WorstFile is the name of the scenario file that reproduces a metric's
// worst schedule.
func WorstFile(metric string) string { return "worst-" + shortMetric(metric) + ".yaml" }

// RobustFile is the name of the scenario file of a metric's robust
// schedule (Robust), the one to run on the real backend.
func RobustFile(metric string) string { return "robust-" + shortMetric(metric) + ".yaml" }

// RobustScenario is the scenario of a metric's robust schedule: as
// WorstScenario, with the metric's bound (default slack) as its
// expectation.
func (r *ExploreResult) RobustScenario(x Robust) (model.Scenario, error) {
	sc, err := r.Space.Scenario(x.Schedule)
	if err != nil {
		return sc, err
	}
	sc.Name = r.Space.Base.Name + "-robust-" + shortMetric(x.Metric)
	if len(sc.Name) > 60 {
		sc.Name = "explore-robust-" + shortMetric(x.Metric)
	}
	sc.Description = fmt.Sprintf("chaos explore: near the worst %s found for %s, the schedule whose value holds when every start moves by ±%v: %s here, at least %s within ±%v (on the real backend, whose timing is not exact to the µs).",
		x.Metric, r.Space.Base.Name, x.Delta, x.value(x.Measured), x.value(x.Floor), x.Delta)
	sc.Expect = []model.Expectation{{Metric: model.Metric(x.Metric), Max: "predicted"}}
	if x.Count {
		bound := model.Unbounded
		if k := slices.IndexFunc(r.Worst, func(w Worst) bool { return w.Metric == x.Metric }); k >= 0 {
			bound = r.Worst[k].Predicted
		}
		sc.Expect = []model.Expectation{countScenarioExpect(x.Metric, bound, x.Measured)}
	}
	sc.StrictClaims = false
	return sc, nil
}

// WorstScenario is the scenario that reproduces w, the worst schedule of
// one metric: the base with the schedule's starts, sizes and seed, and the
// metric's bound as its one expectation. A violated bound carries the
// search's tolerance as slack, so that `chaos run FILE` fails as the
// search did; otherwise the default slack, for the real backend's
// measurement error.
func (r *ExploreResult) WorstScenario(w Worst) (model.Scenario, error) {
	sc, err := r.Space.Scenario(w.Schedule)
	if err != nil {
		return sc, err
	}
	sc.Name = r.Space.Base.Name + "-worst-" + shortMetric(w.Metric)
	if len(sc.Name) > 60 {
		sc.Name = "explore-worst-" + shortMetric(w.Metric)
	}
	verdict := "within its bound"
	if w.Violated {
		verdict = "BOUND VIOLATED"
	}
	measured, bound := w.Texts()
	sc.Description = fmt.Sprintf("chaos explore: the worst %s found for %s over %d runs: measured %s, predicted %s (%s), ratio %s: %s.",
		w.Metric, r.Space.Base.Name, r.Runs, measured, bound, w.Formula, ratioText(w), verdict)
	e := model.Expectation{Metric: model.Metric(w.Metric), Max: "predicted"}
	if w.Violated && !w.Count {
		e.Slack = r.Space.withDefaults().Tolerance
	}
	if w.Count {
		e = countScenarioExpect(w.Metric, w.Predicted, w.Measured)
	}
	sc.Expect = []model.Expectation{e}
	sc.StrictClaims = false
	return sc, nil
}

// WorstRun runs a worst schedule again on the virtual backend, for its
// full report (timeline and all).
func (r *ExploreResult) WorstRun(w Worst, o virtual.Options) (*verdict.Result, error) {
	sc, err := r.WorstScenario(w)
	if err != nil {
		return nil, err
	}
	return virtual.Run(sc, o)
}

func ratioText(w Worst) string {
	switch {
	case !w.Found:
		return "—"
	case w.Predicted == 0 && w.Measured == 0:
		return "— (0 of 0)"
	case w.Predicted == 0 || w.Predicted == model.Unbounded:
		return "—"
	}
	return fmt.Sprintf("%.3f", w.Ratio)
}

// verdictText says what a worst case means.
func verdictText(w Worst) string {
	switch {
	case !w.Found:
		return "not measured"
	case w.Violated:
		return "BOUND VIOLATED"
	case w.Predicted == model.Unbounded:
		return "no bound"
	}
	return "within bound"
}

// scheduleText describes a schedule: its seed, fault starts, sizes and
// follower starts.
func (r *ExploreResult) scheduleText(x Schedule) string {
	var parts []string
	parts = append(parts, fmt.Sprintf("seed %d", x.Seed))
	for i, a := range x.At {
		if i < len(r.Space.Base.Faults) {
			parts = append(parts, fmt.Sprintf("%s at %v", r.Space.Base.Faults[i].Kind, a))
		}
	}
	for k, v := range x.Sizes {
		if k < len(r.Space.Vary) {
			parts = append(parts, r.Space.Vary[k].Param+"="+v)
		}
	}
	if len(x.Starts) > 0 {
		var s []string
		for _, d := range x.Starts {
			s = append(s, d.String())
		}
		parts = append(parts, "starts ["+strings.Join(s, ", ")+"]")
	}
	return strings.Join(parts, ", ")
}

// ExploreMarkdown writes the search's report: per metric the worst
// measured beside its bound, the formula, the ratio, the verdict and the
// file that reproduces it.
func ExploreMarkdown(w io.Writer, r *ExploreResult) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	s := r.Space.withDefaults()
	p("# chaos explore: %s\n\n", s.Name)
	p("%d runs on the virtual backend over %d seeds; each fault's start moved over a %v window", r.Runs, s.Seeds, s.Window)
	if !s.FixedStarts {
		p(", the followers' starts over a Wait")
	}
	for _, v := range s.Vary {
		p(", %s over %s..%s", v.Param, v.Lo, v.Hi)
	}
	p("; violations above the bound by more than %v.\n\n", s.Tolerance)
	if !r.Complete {
		p("**Incomplete:** %s\n\n", r.Incomplete)
	}
	if r.Skipped > 0 {
		p("%s.\n\n", r.SkippedText())
	}
	p("| metric | worst measured | predicted | ratio | verdict | found by | schedule | file | robust (±%v) |\n|---|---|---|---|---|---|---|---|---|\n", RobustDelta)
	for _, x := range r.Worst {
		if !x.Found {
			p("| %s | — | — | — | not measured (%d runs unknown: %s) | | | | |\n", x.Metric, x.Unknown, nonEmptyText(x.Why, "no run measured it"))
			continue
		}
		meas, bound := x.Texts()
		if x.Open {
			meas = "≥ " + meas + " (open)"
		}
		rob := "—"
		if k := slices.IndexFunc(r.Robust, func(y Robust) bool { return y.Metric == x.Metric && y.Found }); k >= 0 {
			rob = fmt.Sprintf("≥ %s: %s", x.Value(r.Robust[k].Floor), RobustFile(x.Metric))
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", x.Metric, meas, bound, ratioText(x), verdictText(x), x.Phase, r.scheduleText(x.Schedule), WorstFile(x.Metric), rob)
	}
	p("\n## Formulas\n\n")
	for _, x := range r.Worst {
		if x.Found {
			p("- **%s**: %s\n", x.Metric, x.Formula)
		}
	}
	if v := r.Violations(); len(v) > 0 {
		p("\n## Findings\n\n")
		for _, x := range v {
			measured, bound := x.Texts()
			p("- **bound violated: %s** measured %s above its bound %s (%s); reproduce with `chaos run --backend virtual %s` (and on the real backend without --backend).\n",
				x.Metric, measured, bound, x.Formula, WorstFile(x.Metric))
		}
	}
	p("\nEach worst-*.yaml runs the worst schedule with its seed; its expectation is the metric's bound. A worst case often sits on an edge a few µs wide (a partition within one hop of a renewal's send, a follower's attempt just before the key expires), which the real backend's timing, exact only to a millisecond or two, lands on either side of: each robust-*.yaml is the schedule nearby whose value holds when every start moves by ±%v, the one to run there (`--confirm-real` does).\n", RobustDelta)
	return bw.Flush()
}

func nonEmptyText(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// WriteExplore writes the search's reports into dir (created if missing):
// result.json, explore.md, index.html, and per metric the scenario file
// of its worst schedule (WorstFile).
func WriteExplore(dir string, r *ExploreResult) (Files, error) {
	fs, err := newFileSet(dir, r.JSON)
	if err != nil {
		return nil, err
	}
	var md strings.Builder
	if err := ExploreMarkdown(&md, r); err != nil {
		return fs.names, err
	}
	if err := fs.put("explore.md", []byte(md.String())); err != nil {
		return fs.names, err
	}
	for _, x := range r.Worst {
		if !x.Found {
			continue
		}
		sc, err := r.WorstScenario(x)
		if err != nil {
			return fs.names, fmt.Errorf("the worst %s: %w", x.Metric, err)
		}
		y, err := scenarios.Marshal(sc)
		if err != nil {
			return fs.names, fmt.Errorf("the worst %s: %w", x.Metric, err)
		}
		if err := fs.put(WorstFile(x.Metric), y); err != nil {
			return fs.names, err
		}
	}
	for _, x := range r.Robust {
		if !x.Found {
			continue
		}
		sc, err := r.RobustScenario(x)
		if err != nil {
			return fs.names, fmt.Errorf("the robust %s: %w", x.Metric, err)
		}
		y, err := scenarios.Marshal(sc)
		if err != nil {
			return fs.names, fmt.Errorf("the robust %s: %w", x.Metric, err)
		}
		if err := fs.put(RobustFile(x.Metric), y); err != nil {
			return fs.names, err
		}
	}
	var hb strings.Builder
	if err := writeExploreHTML(&hb, r); err != nil {
		return fs.names, err
	}
	err = fs.put("index.html", []byte(hb.String()))
	return fs.names, err
}

type exploreRow struct {
	Worst
	Measured, Predicted, Ratio, Verdict, Schedule, File, Class string
}

func writeExploreHTML(w io.Writer, r *ExploreResult) error {
	pg := struct {
		R     *ExploreResult
		Title string
		Style template.CSS
		Rows  []exploreRow
	}{R: r, Title: "Explore " + r.Space.Name, Style: template.CSS(pageStyle)}
	for _, x := range r.Worst {
		row := exploreRow{Worst: x, Measured: "—", Predicted: "—", Ratio: ratioText(x), Verdict: verdictText(x), Class: "missing"}
		if x.Found {
			row.Measured, row.Predicted = x.Value(x.Measured), x.BoundValue()
			row.Schedule, row.File, row.Class = r.scheduleText(x.Schedule), WorstFile(x.Metric), "safe"
			if x.Violated {
				row.Class = "unsafe"
			}
		}
		pg.Rows = append(pg.Rows, row)
	}
	return writePage(w, explorePage, pg)
}

var explorePage = template.Must(template.New("explore").Parse(pageHead + `<p class="banner{{if not .R.Complete}} incomplete{{end}}">
{{.R.Runs}} runs on the virtual backend over {{.R.Space.Seeds}} seeds (first seed {{.R.Space.FirstSeed}}): each fault's start moved over a {{.R.Space.Window}} window, aligned to the elector's calls, then refined.
{{if .R.Skipped}}<br/>{{.R.SkippedText}}{{end}}
{{if not .R.Complete}}<br/><b>Incomplete:</b> {{.R.Incomplete}}{{end}}
</p>
<table>
<thead><tr><th>metric</th><th>worst measured</th><th>predicted</th><th>ratio</th><th>verdict</th><th>found by</th><th>schedule</th><th>file</th></tr></thead>
<tbody>
{{range .Rows}}<tr class="{{.Class}}"><td class="l">{{.Metric}}</td><td>{{.Measured}}</td><td>{{.Predicted}}</td><td>{{.Ratio}}</td><td class="l">{{.Verdict}}{{if not .Found}} ({{.Unknown}} runs unknown{{if .Why}}: {{.Why}}{{end}}){{end}}</td>
<td class="l">{{.Phase}}</td><td class="l">{{.Schedule}}</td><td class="l">{{if .File}}<a href="{{.File}}">{{.File}}</a>{{end}}</td></tr>
{{end}}</tbody>
</table>
<h2>Formulas</h2>
<ul>{{range .Rows}}{{if .Found}}<li><b>{{.Metric}}</b>: {{.Formula}}</li>{{end}}{{end}}</ul>
<p>Each file runs the worst schedule with its seed (<code>chaos run --backend virtual FILE</code>, or on the real backend); its one expectation is the metric's bound. A measurement above its bound is a model error to fix in the bound, not a tolerance to widen.</p>
</body>
</html>
`))
