package live

import (
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/leaselab/leaselab/internal/printable"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
)

// Totals ends a suite's output: the counts, then the findings — every spec
// claim a run measured not held, per scenario, in one short block.
func Totals(w io.Writer, runs []reports.SuiteRun) {
	var passed, failed, unknown, incomplete, notStarted, refused, withFindings int
	type line struct{ name, text string }
	var found []line
	for _, r := range runs {
		switch {
		case r.NotStarted:
			notStarted++
			continue
		case r.Refused != "":
			refused++
			continue
		case r.Result == nil || r.Err != nil && r.Result.Complete:
			failed++
		case !r.Result.Complete:
			incomplete++
		case r.Result.Verdict == model.Pass:
			passed++
		case r.Result.Verdict == model.Fail:
			failed++
		default:
			unknown++
		}
		if r.Result == nil {
			continue
		}
		fs := r.Result.Findings()
		if len(fs) > 0 {
			withFindings++
		}
		for _, c := range fs {
			found = append(found, line{r.Name, reports.ShortFinding(c)})
		}
	}
	fmt.Fprintf(w, "%d scenarios: %d passed, %d failed, %d unknown, %d incomplete", len(runs), passed, failed, unknown, incomplete)
	if notStarted > 0 {
		fmt.Fprintf(w, ", %d not started", notStarted)
	}
	if refused > 0 {
		fmt.Fprintf(w, ", %d refused", refused)
	}
	if withFindings > 0 {
		fmt.Fprintf(w, "; %d with findings", withFindings)
	}
	fmt.Fprintln(w)
	if len(found) == 0 {
		fmt.Fprintln(w, "findings: none (every spec claim a run exercised held)")
		return
	}
	fmt.Fprintf(w, "findings (%d spec claims not held):\n", len(found))
	width := 0
	for _, l := range found {
		width = max(width, len(l.name))
	}
	for _, l := range found {
		fmt.Fprintf(w, "  %-*s  %s\n", width, l.name, l.text)
	}
}

// Distribution prints a seed distribution's table: its runs (on backend,
// workers at once, in took), the quantiles of every metric, the broken
// expectations and claims, and, when it was written to dir, where its
// reports are and how to replay the worst seeds on the real backend.
func Distribution(w io.Writer, d *reports.Distribution, dir string, took time.Duration, workers int) {
	fmt.Fprintf(w, "%s: %d runs on the %s backend in %v (%d workers), seeds %d–%d: %d pass, %d fail, %d unknown\n",
		d.Scenario, d.Runs, d.Backend, took.Round(time.Millisecond), workers, d.FirstSeed, d.LastSeed, d.Verdicts.Pass, d.Verdicts.Fail, d.Verdicts.Unknown)
	if d.Incomplete != "" {
		fmt.Fprintf(w, "  INCOMPLETE: %s\n", printable.Text(d.Incomplete))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  METRIC\tRUNS\tMIN\tP50\tP90\tP99\tMAX\tWORST SEED\t")
	for _, m := range d.Metrics {
		if m.Measured == 0 {
			fmt.Fprintf(tw, "  %s\t0\t—\t—\t—\t—\t—\t—\t\n", m.Name)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t\n", m.Name, m.Measured, secs(m.Min), secs(m.P50), secs(m.P90), secs(m.P99), secs(m.Max), m.WorstSeed)
	}
	tw.Flush()
	for _, b := range d.Broken {
		if b.Fail+b.Unknown > 0 {
			fmt.Fprintf(w, "  expectation %s: broken in %d runs (%d fail, %d unknown), first seed %d\n", b.Expectation, b.Fail+b.Unknown, b.Fail, b.Unknown, b.FirstSeed)
		}
	}
	for _, c := range d.ClaimsNotHeld {
		fmt.Fprintf(w, "  spec claim %s: not held in %d of %d runs\n", c.Name, c.Count, d.Runs)
	}
	if dir == "" {
		return
	}
	fmt.Fprintf(w, "  worst run: seed %d (%s), report %s\n", d.WorstRun.Seed, d.WorstRun.Verdict, filepath.Join(dir, reports.DirDistWorst, reports.FileHTML))
	for _, m := range d.Metrics {
		if m.Measured > 0 && m.Max > 0 && (m.Name == "max_overlap" || m.Name == "max_gap") {
			fmt.Fprintf(w, "  worst %s on the real backend: %s\n", m.Name, m.ReproduceReal)
		}
	}
	fmt.Fprintf(w, "  distribution: %s\n", filepath.Join(dir, reports.FileDistHTML))
}

// secs is a figure in seconds (a distribution's) to the millisecond.
func secs(s float64) string {
	return time.Duration(s * 1e9).Round(time.Millisecond).String()
}
