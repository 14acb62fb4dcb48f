package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sweep"
)

const listUsage = `Usage: chaos list

Lists the built-in scenarios: name, mode (elector or runner), length and
the first sentence of the description. Their files are in scenarios/builtin/
and are embedded in the binary; 'chaos run NAME' runs one, 'chaos suite'
all of them.

Example:
  chaos list
  chaos list | grep partition
`

func cmdList(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, listUsage) }
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usageErr("list takes no arguments")
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, e := range scenarios.Builtin() {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", e.Name, e.Scenario.Mode, e.Scenario.Length().Round(time.Second), e.Summary())
	}
	return tw.Flush()
}

const validateUsage = `Usage: chaos validate FILE...

Checks scenario files without running them: unknown keys, bad durations,
targets out of range, conflicting faults, expectations that name nothing.
Every problem is reported as file:line. Exit code 2 if any file is invalid.

Example:
  chaos validate scenarios/builtin/*.yaml my-scenario.yaml
`

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, validateUsage) }
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageErr("validate: name at least one file")
	}
	bad := 0
	for _, path := range fs.Args() {
		if _, err := scenarios.Load(path); err != nil {
			// A huge file of unknown keys must not print megabytes.
			fmt.Fprintln(stderr, scenarios.Capped(err))
			bad++
			continue
		}
		fmt.Fprintf(stdout, "%s: ok\n", path)
	}
	if bad > 0 {
		return &exitError{exitUsage, fmt.Errorf("%d of %d files invalid", bad, fs.NArg())}
	}
	return nil
}

const boundsUsage = `Usage: chaos bounds [FILE|NAME] [flags]

Prints the predicted worst-case leadership gap and overlap for each failure
mode, with the formulas, for the given timing parameters: the spec's and
go-redis's defaults, overridden by a scenario (file or built-in name) and then
by flags. Use it before any run to see what your parameters promise.

Examples:
  chaos bounds
  chaos bounds --ttl 2s --wait 3s --read-timeout 500ms --max-retries -1
  chaos bounds partition-blackhole
  chaos bounds my-scenario.yaml --latency 300ms
  chaos bounds --ttl 2s --wait 3s --explore     # beside each formula, the worst a search finds

Flags:
`

func cmdBounds(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bounds", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timing := newTimingFlags(fs)
	var (
		latency, pause time.Duration
		rate           float64
	)
	fs.DurationVar(&latency, "latency", 0, "one-way latency added for the latency mode")
	fs.DurationVar(&pause, "pause", 0, "pause length for the pause mode")
	fs.Float64Var(&rate, "clock-rate", 0, "leader clock rate for the clock-drift mode (e.g. 0.5)")
	explore := fs.Bool("explore", false, "beside each formula, the worst case a search of the schedule finds on the virtual backend (chaos explore)")
	budget := fs.Int("budget", 4000, "with --explore: runs per failure mode")
	fs.Usage = func() { fmt.Fprint(stderr, boundsUsage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagErr(err)
	}
	var sc model.Scenario
	switch len(pos) {
	case 0:
	case 1:
		if sc, err = scenarios.Open(pos[0]); err != nil {
			return &exitError{exitUsage, err}
		}
	default:
		return usageErr("bounds takes at most one scenario")
	}
	p := timing.apply(sc.Params)
	p = p.WithDefaults()
	if p.TTL <= 0 || p.Wait <= 0 {
		return usageErr("--ttl and --wait must be positive")
	}
	// The file's faults as a sweep cell of it sizes them; the flags add to
	// them (a clock rate given wins).
	eff := sc.WithDefaults()
	eff.Params = p
	size := model.ScheduledFaultSize(eff)
	size.Latency, size.Pause = max(size.Latency, latency), max(size.Pause, pause)
	if rate > 0 {
		size.ClockRate = rate
	}
	// A mode whose size nobody gave (no flag, no fault in the scenario) has
	// no bound: the table says so, with the flag that gives it.
	ex := model.ExampleFaultSize
	out := reports.Bounds{Params: p, Predictions: model.PredictGiven(p, size), SizeHint: map[string]string{
		model.ModeLatency: fmt.Sprintf("--latency %v", ex.Latency), model.ModePause: fmt.Sprintf("--pause %v", ex.Pause),
		model.ModeSuspend: fmt.Sprintf("--pause %v", ex.Pause), model.ModeClockDrift: fmt.Sprintf("--clock-rate %g", ex.ClockRate)}}
	if err := out.WriteTable(stdout); err != nil {
		return err
	}
	var explored []sweep.ModeWorst
	if *explore {
		ws, err := sweep.ExploreModes(ctx, p, size, *budget, sweep.ExploreOptions{})
		if err != nil {
			if ctx.Err() != nil {
				return &exitError{exitCanceled, errors.New("interrupted")}
			}
			return err
		}
		explored, out.Explored = ws, map[string]reports.Explored{}
		for _, w := range ws {
			out.Explored[w.Mode] = reports.Explored{Runs: w.Runs, Gap: w.Gap.BesideBound(), Overlap: w.Overlap.BesideBound()}
		}
	}
	out.WriteFormulas(stdout)
	for _, w := range explored {
		if w.Gap.Violated || w.Overlap.Violated {
			return &exitError{exitFailed, errors.New("the search found a bound violated (see \"explored\" above)")}
		}
	}
	return nil
}

// optInt is an int flag whose default is "not given" (-1): its help shows
// the documented default once, not the sentinel.
type optInt int

func (o *optInt) String() string {
	if o == nil || *o == -1 || *o == 0 {
		return "" // the help's default is the usage text's
	}
	return strconv.Itoa(int(*o))
}

func (o *optInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number of milliseconds")
	}
	*o = optInt(v)
	return nil
}

const reportUsage = `Usage: chaos report RESULT.json [--out DIR]

Re-renders a run's reports (report.html, report.md, timeline.svg/png,
junit.xml, events.jsonl) from its result.json, into the result's directory
or DIR.

Example:
  chaos report chaos-reports/leader-crash/latest/result.json
  chaos report result.json --out /tmp/rerendered

Flags:
`

func cmdReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "write the reports to `DIR` (default: beside RESULT.json)")
	inline := fs.Bool("md-inline", false, "put the timeline plot inside report.md (a data URI) instead of linking timeline.png beside it")
	imageURL := fs.String("md-image-base", "", "the `URL` where the report's directory is published: report.md links URL/timeline.png")
	fs.Usage = func() { fmt.Fprint(stderr, reportUsage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagErr(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return usageErr("report: give one result.json")
	}
	res, err := reports.ReadResult(pos[0])
	if err != nil {
		return &exitError{exitUsage, err}
	}
	dir := *out
	if dir == "" {
		dir = filepath.Dir(pos[0])
	}
	o := reports.Options{MarkdownImage: *imageURL}
	if *inline {
		o.MarkdownImage = reports.MarkdownInline
	}
	if _, err := reports.WriteRun(dir, res, o); err != nil {
		return fmt.Errorf("writing the reports: %w", err)
	}
	fmt.Fprintf(stdout, "%s\n", filepath.Join(dir, "report.html"))
	if res.Verdict != model.Pass {
		return &exitError{exitFailed, fmt.Errorf("the stored run did not pass: %s", res.Verdict)}
	}
	return nil
}
