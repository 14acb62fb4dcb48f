// Package batch runs scenarios as chaos run and chaos suite do: sim.Suite on
// one backend, a live.View drawing the runs, each run's reports written as
// it ends under Out/<scenario>/<run-id>/ with a "latest" link beside them,
// and the outcomes as reports lists them (the suite's index and JUnit). A
// Go test or another tool that wants the CLI's reports without the CLI
// calls Run the same way; the CLI only parses flags and picks the backend.
package batch

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/reports/live"
	"github.com/leaselab/leaselab/sim"
)

// Options are a batch's. The zero value writes the reports under the
// working directory, one run per sim.DefaultParallel slot, and shows the
// runs nowhere.
type Options struct {
	// Out is the directory of the reports: each run's in
	// Out/<scenario>/<run-id>/, beside a "latest" link. "": the working
	// directory.
	Out string
	// MarkdownInline puts the timeline plot inside report.md (a data URI,
	// reports.MarkdownInline); it wins over MarkdownImageBase.
	MarkdownInline bool
	// MarkdownImageBase is the URL where Out is published: report.md links
	// its plot as MarkdownImageBase/<scenario>/<run-id>/timeline.png. "":
	// the plot beside report.md.
	MarkdownImageBase string
	// Parallel is how many scenarios run at once, started in the order
	// given. 0: sim.DefaultParallel for the backend.
	Parallel int
	// View is how the runs are shown (live.Options: where, the terminal's
	// size, verbose, quiet, the errors not printed); Run fills in Virtual
	// and Parallel from the backend.
	View live.Options
	// Amend, when set, is called with each run's result, and the
	// directory its reports go to, before they are written (chaos run
	// --check-bounds: a search of the scenario that can make a check
	// unknown).
	Amend func(sc model.Scenario, res *verdict.Result, dir string)
}

// Outcome is one scenario's run, and where its reports are.
type Outcome struct {
	sim.SuiteRun
	// Dir is the run's report directory, "" when none was written (a
	// refusal, a run that could not start, a report that failed).
	Dir string
}

// Run runs scs on b (sim.Suite), each named (Named), writing each run's
// reports as it ends and printing its verdict and report path on the view.
// A report that cannot be written is added to that run's Err. Scenarios
// still queued when ctx is cancelled come back NotStarted.
func Run(ctx context.Context, b sim.Backend, scs []model.Scenario, o Options) []Outcome {
	parallel := o.Parallel
	if parallel == 0 {
		parallel = sim.DefaultParallel(b, len(scs))
	}
	vo := o.View
	vo.Virtual, vo.Parallel = sim.Computes(b), parallel
	view := live.NewView(scs, vo)
	defer view.Close()
	out := make([]Outcome, len(scs))
	suite := sim.Suite{Backend: b, Parallel: parallel,
		Start: func(i int, sc model.Scenario) sim.RunObserver {
			track := view.Start(Named(sc))
			return sim.RunObserver{Event: track.Observe, Done: func(r *sim.SuiteRun) { out[i] = o.finish(r, track, view) }}
		},
		NotStarted: func(_ int, sc model.Scenario) {
			if !vo.Quiet {
				view.NotStarted(Named(sc).Name)
			}
		}}
	named := make([]model.Scenario, len(scs))
	for i, sc := range scs {
		named[i] = Named(sc)
	}
	for i, r := range suite.Run(ctx, named) {
		if r.NotStarted {
			out[i] = Outcome{SuiteRun: r}
		}
	}
	return out
}

// finish writes the reports of a run as it ends and prints its verdict
// line. A refused scenario (runner mode on the virtual backend; a
// replicated or cluster Redis on a Redis given to the run) has none: the
// outcome says why, and nothing ran.
func (o Options) finish(r *sim.SuiteRun, track *live.Track, view *live.View) Outcome {
	sc, res := r.Scenario, r.Result
	if r.Refused != nil {
		track.Refused(r.Refused)
		return Outcome{SuiteRun: *r}
	}
	if res == nil {
		track.Done(nil, r.Err)
		return Outcome{SuiteRun: *r}
	}
	dir := filepath.Join(o.Out, sc.Name, res.RunID)
	if o.Amend != nil {
		o.Amend(sc, res, dir)
	}
	if _, werr := reports.WriteRun(context.Background(), dir, res, reports.Options{MarkdownImage: o.markdownImage(sc.Name, res.RunID)}); werr != nil {
		r.Err = errors.Join(r.Err, fmt.Errorf("writing the report: %w", werr))
		dir = "" // not written: never print or link it
	} else {
		reports.LinkLatest(dir, "latest")
	}
	track.Done(res, r.Err)
	if dir != "" {
		view.Printf("  report: %s\n", filepath.Join(dir, "report.html"))
	}
	return Outcome{SuiteRun: *r, Dir: dir}
}

// markdownImage is reports.Options.MarkdownImage for a run's report.
func (o Options) markdownImage(name, runID string) string {
	switch {
	case o.MarkdownInline:
		return reports.MarkdownInline
	case o.MarkdownImageBase != "":
		return strings.TrimRight(o.MarkdownImageBase, "/") + "/" + url.PathEscape(name) + "/" + url.PathEscape(runID)
	}
	return ""
}

// Named is sc with a name for its report directory: an unnamed scenario
// is "scenario".
func Named(sc model.Scenario) model.Scenario {
	if sc.Name == "" {
		sc.Name = "scenario"
	}
	return sc
}

// SuiteRuns are the outcomes as reports lists them (reports.WriteSuite,
// reports.WriteJUnitRuns), their directories relative to rel ("": as they
// are).
func SuiteRuns(outs []Outcome, rel string) []reports.SuiteRun {
	var suite []reports.SuiteRun
	for _, o := range outs {
		sr := reports.SuiteRun{Result: o.Result, Err: o.Err, Name: Named(o.Scenario).Name, NotStarted: o.NotStarted}
		if o.Refused != nil {
			sr.Refused = o.Refused.Error()
		}
		if o.Dir != "" {
			sr.Dir = o.Dir
			if rel != "" {
				sr.Dir, _ = filepath.Rel(rel, o.Dir)
			}
		}
		suite = append(suite, sr)
	}
	return suite
}

// Verdict is sim.Verdict of the outcomes.
func Verdict(outs []Outcome) error { return sim.Verdict(simRuns(outs)) }

// Count is sim.Count of the outcomes.
func Count(outs []Outcome) sim.Counts { return sim.Count(simRuns(outs)) }

func simRuns(outs []Outcome) []sim.SuiteRun {
	runs := make([]sim.SuiteRun, len(outs))
	for i, o := range outs {
		runs[i] = o.SuiteRun
	}
	return runs
}

// Summary ends a suite's output: which backend ran how many scenarios in
// how long (to the millisecond on a backend that computes, where a suite
// takes well under a second; else to the second), how many it refused, the
// summary's path (index), then live.Totals of suite (SuiteRuns).
func Summary(w io.Writer, suite []reports.SuiteRun, b sim.Backend, took time.Duration, index string) {
	refused := 0
	for _, r := range suite {
		if r.Refused != "" {
			refused++
		}
	}
	if sim.Computes(b) {
		took = took.Round(time.Millisecond)
	} else {
		took = took.Round(time.Second)
	}
	fmt.Fprintf(w, "suite: %d scenarios on the %s backend in %v", len(suite), b.Name(), took)
	if refused > 0 {
		fmt.Fprintf(w, ", %d refused (not run; each says why above)", refused)
	}
	fmt.Fprintf(w, "; summary: %s\n", index)
	live.Totals(w, suite)
}
