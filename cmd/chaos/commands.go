package main

import (
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leaselab/leaselab/internal/printable"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
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
	if err := parseFlags(fs, args); err != nil {
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
	if err := parseFlags(fs, args); err != nil {
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
			fmt.Fprintln(stderr, printable.Text(scenarios.Capped(err).Error()))
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
	outDir := fs.String("out", "./chaos-bounds", "with a scenario: where a schedule that beats a formula is written, `DIR`/<name>/")
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
	size := bounds.ScheduledFaultSize(eff)
	size.Latency, size.Pause = max(size.Latency, latency), max(size.Pause, pause)
	if rate > 0 {
		size.ClockRate = rate
	}
	// A mode whose size nobody gave (no flag, no fault in the scenario) has
	// no bound: the table says so, with the flag that gives it.
	ex := bounds.ExampleFaultSize
	out := reports.Bounds{Params: p, Predictions: bounds.PredictGiven(p, size), SizeHint: map[string]string{
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
	if len(pos) == 1 {
		if err := checkBoundsBySearch(ctx, sc, *outDir, stdout, stderr); err != nil {
			return err
		}
	}
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
	if _, err := reports.WriteRun(context.Background(), dir, res, o); err != nil {
		return fmt.Errorf("writing the reports: %w", err)
	}
	fmt.Fprintf(stdout, "%s\n", filepath.Join(dir, "report.html"))
	if res.Verdict != model.Pass {
		return &exitError{exitFailed, fmt.Errorf("the stored run did not pass: %s", res.Verdict)}
	}
	return nil
}

// BoundsSearchBudget is the runs of bounds FILE's own search of the file:
// about 0.4 s on one core of this machine (≈ 2,600 runs/s), within the
// 2 s a check per scenario may take.
const BoundsSearchBudget = 1000

// checkBoundsBySearch runs a short call-aligned explore of sc on the
// virtual backend and says, per metric, whether it beat the formula; a
// schedule that does is a finding, written as a scenario file (explore's
// worst-METRIC.yaml) under dir, and the exit code is 1.
func checkBoundsBySearch(ctx context.Context, sc model.Scenario, dir string, stdout, stderr io.Writer) error {
	if len(sc.Faults) == 0 {
		return nil
	}
	if err := virtual.Refuses(sc); err != nil {
		fmt.Fprintf(stdout, "\nnot searched: %v\n", err)
		return nil
	}
	res, err := sweep.Explore(ctx, sweep.Space{Base: sc, Budget: BoundsSearchBudget, Seeds: 4}, sweep.ExploreOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{exitCanceled, errors.New("interrupted")}
		}
		return fmt.Errorf("searching %s: %w", sc.Name, err)
	}
	fmt.Fprintf(stdout, "\nsearched %s: %d runs of its schedule on the virtual backend (chaos explore, call-aligned)\n", sc.Name, res.Runs)
	for _, w := range res.Worst {
		fmt.Fprintf(stdout, "  %-17s %s: %s\n", w.Metric, w.BesideBound(), searchVerdict(w))
	}
	if s := res.SkippedText(); s != "" {
		fmt.Fprintf(stdout, "  %s\n", s)
	}
	v, d, err := writeSearchFindings(res, dir, stdout, stderr)
	if err != nil || len(v) == 0 {
		return err
	}
	return &exitError{exitFailed, fmt.Errorf("the search beat %d formula(s): see %s", len(v), d)}
}

// searchVerdict says how a search's worst compares with its bound.
func searchVerdict(w sweep.Worst) string {
	switch {
	case !w.Found:
		return "not measured"
	case w.Violated:
		return "THE SEARCH BEAT THE FORMULA"
	}
	return "within its bound"
}

// writeSearchFindings writes the schedules of a search that beat their
// formulas as scenario files (explore's files, under dir/<name>/) and
// prints each as a finding; it returns them and the directory.
func writeSearchFindings(res *sweep.ExploreResult, dir string, stdout, stderr io.Writer) ([]sweep.Worst, string, error) {
	v := res.Violations()
	if len(v) == 0 {
		return nil, "", nil
	}
	d := filepath.Join(dir, res.Space.Name)
	if err := writeExplore(d, res, stderr); err != nil {
		return nil, "", err
	}
	for _, w := range v {
		fmt.Fprintf(stdout, "finding: the search beat the %s formula (%s): %s; chaos run %s reproduces it\n",
			w.Metric, w.Formula, w.BesideBound(), filepath.Join(d, sweep.WorstFile(w.Metric)))
	}
	return v, d, nil
}

// searchPredict is the predictions checkRunBounds's search judges by (nil:
// bounds.Predict's); a test makes one too low to see a check distrusted.
var searchPredict func(model.Params, model.FaultSize) []bounds.Prediction

// checkRunBounds checks a run's predicted bounds with the tool's own
// search (chaos run/suite --check-bounds): a short call-aligned explore of
// its scenario on the virtual backend (BoundsSearchBudget runs). A check
// of a predicted limit whose formula the search beat becomes unknown
// (verdict.Result.Distrust), naming the explored worst and the schedule,
// written under the run's report directory (dir/search/).
func checkRunBounds(ctx context.Context, sc model.Scenario, res *verdict.Result, dir string, stderr io.Writer) {
	predicted := slices.ContainsFunc(sc.Expect, func(e model.Expectation) bool {
		return strings.TrimSpace(e.Max) == "predicted" && slices.Contains(sweep.ExploreMetrics, string(e.Metric))
	})
	if !predicted || len(sc.Faults) == 0 || virtual.Refuses(sc) != nil {
		return
	}
	r, err := sweep.Explore(ctx, sweep.Space{Base: sc, Budget: BoundsSearchBudget, Seeds: 4}, sweep.ExploreOptions{Predict: searchPredict})
	if err != nil {
		if ctx.Err() == nil {
			printErr(stderr, fmt.Errorf("checking the bounds of %s: %w", sc.Name, err))
		}
		return
	}
	v := r.Violations()
	if len(v) == 0 {
		return
	}
	d := filepath.Join(dir, "search")
	if err := writeExplore(d, r, stderr); err != nil {
		printErr(stderr, fmt.Errorf("checking the bounds of %s: %w", sc.Name, err))
	}
	beaten := map[model.Metric]string{}
	for _, w := range v {
		beaten[model.Metric(w.Metric)] = fmt.Sprintf("a search of this scenario (chaos explore, %d runs on the virtual backend) measured %s against %s; chaos run %s reproduces it",
			r.Runs, w.BesideBound(), cmp.Or(w.Formula, "the formula"), filepath.Join(d, sweep.WorstFile(w.Metric)))
	}
	res.Distrust(beaten)
}
