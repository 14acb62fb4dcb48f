package reports

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"bufio"
	"bytes"
	"fmt"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SuiteRun is one scenario of a suite, as WriteSuite lists it.
type SuiteRun struct {
	// Name is the scenario's name, used when Result is nil.
	Name string
	// Result is the run's result; nil when the run could not start.
	Result *verdict.Result
	// Dir is the run's report directory relative to the suite directory
	// (where WriteRun wrote it); the index links to Dir/report.html.
	Dir string
	// Err is what sim.Run returned: why the run could not start, or why it
	// stopped part-way.
	Err error
	// Refused is why the backend refused the scenario, so that nothing ran
	// (the virtual backend does not model runner mode; a replicated or
	// cluster Redis needs servers the harness spawns). The index lists it
	// as REFUSED with this reason, JUnit as a skipped testcase; it is
	// neither a pass nor a failure.
	Refused string
	// NotStarted: the suite was interrupted before this scenario started.
	// The index lists it as NOT STARTED, JUnit as a skipped testcase.
	NotStarted bool
}

// WriteSuite writes an overview of many runs into dir, creating it:
// index.html (every scenario with its verdict and key figures, linked to
// its report), summary.md (the same in Markdown) and junit.xml (one
// testcase per scenario; runs that could not start are errors).
func WriteSuite(dir string, runs []SuiteRun) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	s := buildSuite(runs)
	var page, md, junit bytes.Buffer
	if err := suiteTemplate.Execute(&page, s); err != nil {
		return fmt.Errorf("reports: writing the suite index: %w", err)
	}
	writeSuiteMarkdown(&md, s)
	if err := JUnitRuns(&junit, runs); err != nil {
		return err
	}
	for name, b := range map[string][]byte{"index.html": page.Bytes(), "summary.md": md.Bytes(), FileJUnit: junit.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("reports: %w", err)
		}
	}
	return nil
}

// suiteRow is one scenario's line of the overview.
type suiteRow struct {
	Name, Link, Verdict, Class                string
	Seed, MaxGap, MaxOverlap, Failover, Stale string
	Lost, Findings, Elapsed, Note             string
	// Lateness is the run's measurement error: the Redis lane's worst
	// keyspace-notification lateness (the virtual backend's lane is exact).
	Lateness                                     string
	BadGap, BadOverlap, BadLost, HasFindingsFlag bool
}

// suiteFinding is one spec claim a run measured not held.
type suiteFinding struct{ Scenario, Link, Text string }

type suite struct {
	Title                                                                    string
	Rows                                                                     []suiteRow
	Total, Passed, Failed, Unknown, Incomplete, Errored, Refused, NotStarted int
	// Findings are every spec claim not held, per scenario, in suite order:
	// the block the index and the summary open with.
	Findings []suiteFinding
	// WithFindings counts the runs with at least one finding.
	WithFindings             int
	Verdict, Class, Headline string
	// Backend names the backend(s) that made the runs.
	Backend string
}

func buildSuite(runs []SuiteRun) *suite {
	s := &suite{Title: "leaselab chaos suite", Total: len(runs)}
	var backends []string
	for _, r := range runs {
		row := suiteRow{Name: nonEmpty(r.Name, "unnamed scenario")}
		if r.Dir != "" {
			row.Link = path.Join(filepath.ToSlash(r.Dir), FileHTML)
		}
		res := r.Result
		if res != nil && !slices.Contains(backends, backendName(res.Backend)) {
			backends = append(backends, backendName(res.Backend))
		}
		if r.NotStarted && res == nil {
			row.Verdict, row.Class = "NOT STARTED", "unknown"
			row.Note = "the suite was interrupted before this scenario started"
			row.Seed, row.MaxGap, row.MaxOverlap, row.Failover, row.Stale, row.Lost, row.Findings, row.Elapsed, row.Lateness = "—", "—", "—", "—", "—", "—", "—", "—", "—"
			s.NotStarted++
			s.Rows = append(s.Rows, row)
			continue
		}
		if r.Refused != "" {
			row.Verdict, row.Class = "REFUSED", "unknown"
			row.Note = "not run: " + r.Refused
			row.Seed, row.MaxGap, row.MaxOverlap, row.Failover, row.Stale, row.Lost, row.Findings, row.Elapsed, row.Lateness = "—", "—", "—", "—", "—", "—", "—", "—", "—"
			s.Refused++
			s.Rows = append(s.Rows, row)
			continue
		}
		if res == nil {
			row.Verdict, row.Class = "ERROR", "fail"
			row.Note = "could not start"
			if r.Err != nil {
				row.Note += ": " + r.Err.Error()
			}
			row.Seed, row.MaxGap, row.MaxOverlap, row.Failover, row.Stale, row.Lost, row.Findings, row.Elapsed, row.Lateness = "—", "—", "—", "—", "—", "—", "—", "—", "—"
			s.Errored++
			s.Rows = append(s.Rows, row)
			continue
		}
		if res.Scenario.Name != "" {
			row.Name = res.Scenario.Name
		}
		row.Verdict, row.Class = verdictOf(res)
		switch row.Verdict {
		case verdictPass:
			s.Passed++
		case verdictFail:
			s.Failed++
		case verdictUnknown:
			s.Unknown++
		default:
			s.Incomplete++
		}
		sum := res.Analysis.Summary
		row.Seed = strconv.FormatInt(res.Seed, 10)
		row.MaxGap = dur(sum.MaxGap)
		for _, cl := range res.Analysis.Claims {
			switch {
			case cl.Name == analysis.ClaimGap && cl.Verdict == analysis.NotHeld:
				row.BadGap = true
			case cl.Name == analysis.ClaimSplitBrain && cl.Verdict == analysis.NotHeld:
				row.BadOverlap = true
			}
		}
		row.MaxOverlap = dur(sum.MaxOverlap)
		row.Failover = "—"
		if sum.Failover.Count > 0 {
			row.Failover = dur(sum.Failover.Max)
		}
		row.Stale = fmt.Sprintf("%d (max %s)", sum.StaleWindows, dur(sum.MaxStale))
		if sum.StaleWindows == 0 {
			row.Stale = "0"
		}
		if u := res.Analysis.Redis.Unknown; len(u) > 0 {
			row.Stale += " · unknown: " + identityCause(res.Analysis.Identity)
		}
		row.Lost = strconv.Itoa(sum.TasksLost)
		row.BadLost = sum.TasksLost > 0
		n := 0
		for _, cl := range res.Analysis.Claims {
			if cl.Verdict == analysis.NotHeld {
				n++
			}
		}
		row.Findings = strconv.Itoa(n)
		row.HasFindingsFlag = n > 0
		if n > 0 {
			s.WithFindings++
			for _, cl := range res.Analysis.Claims {
				if cl.Verdict == analysis.NotHeld {
					s.Findings = append(s.Findings, suiteFinding{Scenario: row.Name, Link: row.Link, Text: ShortFinding(cl)})
				}
			}
			// The verdict and the finding both visible: a pass that broke
			// a spec claim is not a plain green PASS.
			row.Verdict += " · " + plural(n, "finding")
			if row.Class == "pass" {
				row.Class = "finding"
			}
		}
		row.Elapsed = dur(res.Elapsed.Round(time.Millisecond))
		row.Lateness = "—"
		switch nl := res.Analysis.Redis.NotificationLateness; {
		case res.VirtualTime:
			row.Lateness = "exact"
		case nl.Count > 0:
			row.Lateness = "≤ " + dur(nl.Max.Round(100*time.Microsecond))
		}
		row.Note = suiteNote(r)
		s.Rows = append(s.Rows, row)
	}
	// A refused scenario did not run by design and says so; the suite
	// passes when every scenario that ran passed (and one did).
	ok := s.Passed > 0 && s.Passed == s.Total-s.Refused && s.NotStarted == 0
	s.Verdict, s.Class = verdictPass, "pass"
	if !ok {
		s.Verdict, s.Class = verdictFail, "fail"
	}
	s.Headline = fmt.Sprintf("%d scenarios: %d passed, %d failed, %d unknown, %d incomplete, %d could not start",
		s.Total, s.Passed, s.Failed, s.Unknown, s.Incomplete, s.Errored)
	if s.NotStarted > 0 {
		s.Headline += fmt.Sprintf(", %d not started (interrupted)", s.NotStarted)
	}
	if s.Refused > 0 {
		s.Headline += fmt.Sprintf(", %d refused by the backend (not run)", s.Refused)
	}
	s.Headline += "."
	if s.WithFindings > 0 {
		s.Headline += fmt.Sprintf(" %s broke a spec claim (findings below).", plural(s.WithFindings, "run"))
	}
	s.Backend = "—"
	if len(backends) > 0 {
		s.Backend = strings.Join(backends, ", ")
	}
	return s
}

// suiteNote says in a few words why a run did not pass.
func suiteNote(r SuiteRun) string {
	res := r.Result
	switch {
	case !res.Complete:
		return "incomplete: " + nonEmpty(res.Incomplete, "no reason given")
	case len(res.Errors) > 0:
		return fmt.Sprintf("%d harness errors, first: %s", len(res.Errors), res.Errors[0])
	}
	if len(res.Reasons) > 0 {
		return res.Reasons[0]
	}
	return ""
}

func writeSuiteMarkdown(b *bytes.Buffer, s *suite) {
	w := bufio.NewWriter(b)
	defer w.Flush()
	fmt.Fprintf(w, "# %s\n\n**%s**: %s\n\nBackend: %s.\n\n", s.Title, s.Verdict, s.Headline, s.Backend)
	if len(s.Findings) == 0 {
		fmt.Fprint(w, "**Findings:** none — every spec claim a run exercised held.\n\n")
	} else {
		fmt.Fprintf(w, "**Findings** — %s not held (whatever each run's verdict):\n\n", plural(len(s.Findings), "spec claim"))
		for _, f := range s.Findings {
			name := mdCell(f.Scenario)
			if f.Link != "" {
				name = "[" + name + "](" + f.Link + ")"
			}
			fmt.Fprintf(w, "- %s: %s\n", name, f.Text)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "| Scenario | Verdict | Note | Seed | Max gap | Max overlap | Failover max | Stale | Lost tasks | Claims not held | Elapsed | Lateness |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range s.Rows {
		name := mdCell(r.Name)
		if r.Link != "" {
			name = "[" + name + "](" + r.Link + ")"
		}
		verdict := "**" + r.Verdict + "**"
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			name, verdict, mdCell(r.Note), r.Seed, r.MaxGap, r.MaxOverlap, r.Failover, mdCell(r.Stale), r.Lost, r.Findings, r.Elapsed, r.Lateness)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Max gap and max overlap are flagged in the HTML index when they exceed the spec's bounds (TTL + Wait, TTL). "+
		"\"Claims not held\" counts the spec's claims the run measured broken; each report explains them. "+
		"Lateness is the run's measurement error: how late the Redis lane's keyspace notifications came (a loaded machine shows here first).")
}

var suiteTemplate = template.Must(template.New("suite").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}} — {{.Verdict}}</title>
<style>` + css + `
td.verdict { font-weight: 700; }
td.verdict.pass { color: var(--pass); }
td.verdict.fail { color: var(--fail); }
td.verdict.incomplete, td.verdict.unknown, td.verdict.finding { color: var(--incomplete); }
td a { color: #0969da; text-decoration: none; }
main { max-width: none; }
th { white-space: normal; }
td { white-space: nowrap; }
td.why { white-space: normal; overflow-wrap: anywhere; min-width: 14em; max-width: 32em; }
</style>
</head>
<body>
<header class="banner {{.Class}}">
<div class="verdict">{{.Verdict}}</div>
<div class="headline"><h1>{{.Title}}</h1><p>{{.Headline}} Backend: {{.Backend}}.</p></div>
</header>
<main>
{{if .Findings}}<section class="alert findings"><h2>Findings: {{len .Findings}} spec claims not held</h2>
<p>Whatever each run's verdict: the spec's timing claims these runs measured broken.</p>
<ul>
{{- range .Findings}}
<li>{{if .Link}}<a href="{{.Link}}">{{.Scenario}}</a>{{else}}{{.Scenario}}{{end}}: {{.Text}}</li>
{{- end}}
</ul></section>{{else}}<section class="alert notes"><h2>Findings: none</h2><p>Every spec claim a run exercised held.</p></section>{{end}}
<h2>Scenarios</h2>
<div class="scroll"><table>
<thead><tr><th>Scenario</th><th>Verdict</th><th>Note</th><th>Seed</th><th>Max gap</th><th>Max overlap</th><th>Failover max</th><th>Stale</th><th>Lost tasks</th><th>Claims not held</th><th>Elapsed</th><th>Lateness</th></tr></thead>
<tbody>
{{- range .Rows}}
<tr><td>{{if .Link}}<a href="{{.Link}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td class="verdict {{.Class}}">{{.Verdict}}</td><td class="why">{{.Note}}</td><td>{{.Seed}}</td><td{{if .BadGap}} class="bad"{{end}}>{{.MaxGap}}</td><td{{if .BadOverlap}} class="bad"{{end}}>{{.MaxOverlap}}</td><td>{{.Failover}}</td><td>{{.Stale}}</td><td{{if .BadLost}} class="bad"{{end}}>{{.Lost}}</td><td{{if .HasFindingsFlag}} class="bad"{{end}}>{{.Findings}}</td><td>{{.Elapsed}}</td><td>{{.Lateness}}</td></tr>
{{- end}}
</tbody>
</table></div>
<p class="note">Max gap and max overlap are in red when they exceed the spec's bounds (TTL + Wait and TTL). "Claims not held" counts the spec's claims a run measured broken; its report explains each. Lateness is a run's measurement error: how late the Redis lane's keyspace notifications came (a loaded machine shows here first). Every report names its seed and the command that reproduces it.</p>
</main>
</body>
</html>
`))

// plural is "1 finding", "2 findings".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
