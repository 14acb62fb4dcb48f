package sweep

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/virtual"
)

// SeedsOptions configure Seeds. Zero values mean the defaults named on each
// field.
type SeedsOptions struct {
	// Runs is how many seeds to run: sc.Seed, sc.Seed+1, …, sc.Seed+Runs-1.
	// At least 1.
	Runs int
	// Out is where the reports are written (see Seeds). "": nowhere.
	Out string
	// Command is the command that replays seed on a backend, for the
	// reports. Default: scenarios.Command of the scenario at its time scale.
	Command func(seed int64, backend string) string
	// Done, if not nil, is called as each run ends, one call at a time.
	Done func()
}

// Seeds runs o.Runs seeds of sc (validated, with its defaults) on the
// virtual backend, GOMAXPROCS at once (sim.Seeds), into a
// reports.Distribution, which keeps only running statistics and the worst
// run, so memory does not grow with the runs. It writes
// <Out>/<scenario>/runs-<first>-<last>/ — distribution.json, .md, .html,
// histograms.svg/.png and reports.DirDistWorst (the worst run's full report) — with a
// latest-runs link beside it, and returns that directory and how long the
// runs took.
//
// An interrupted distribution (ctx done) is of the runs done so far, marked
// incomplete; one in which no run ended is nil, with ctx's error. A run
// that could not start returns a nil distribution and its error; one that
// could not be written, the distribution and the error.
func Seeds(ctx context.Context, sc model.Scenario, o SeedsOptions) (*reports.Distribution, string, time.Duration, error) {
	start := time.Now()
	if o.Command == nil {
		o.Command = func(seed int64, backend string) string { return scenarios.Command(sc, seed, sc.TimeScale, backend) }
	}
	b := virtual.Backend{}
	d := reports.NewDistribution(sc, b.Name(), o.Runs, o.Command)
	runErr := sim.Seeds(ctx, sc, b, o.Runs, 0, func(res *verdict.Result) {
		d.Add(res)
		if o.Done != nil {
			o.Done()
		}
	})
	if runErr != nil {
		return nil, "", 0, runErr
	}
	if d.Runs == 0 {
		return nil, "", 0, ctx.Err()
	}
	if ctx.Err() != nil {
		d.Incomplete = fmt.Sprintf("interrupted after %d of %d runs", d.Runs, o.Runs)
	}
	d.Finish()
	took := time.Since(start)
	if o.Out == "" {
		return d, "", took, nil
	}
	dir := filepath.Join(o.Out, sc.Name, fmt.Sprintf("runs-%d-%d", sc.Seed, sc.Seed+int64(o.Runs)-1))
	cmd := o.Command(d.Worst.Seed, d.Worst.Backend)
	if _, err := reports.WriteRun(context.WithoutCancel(ctx), filepath.Join(dir, reports.DirDistWorst), d.Worst, reports.Options{Command: cmd}); err != nil {
		return d, dir, took, fmt.Errorf("writing the worst run's report: %w", err)
	}
	if err := reports.WriteDistribution(dir, d, reports.DirDistWorst); err != nil {
		return d, dir, took, fmt.Errorf("writing the distribution: %w", err)
	}
	reports.LinkLatest(dir, "latest-runs")
	return d, dir, took, nil
}
