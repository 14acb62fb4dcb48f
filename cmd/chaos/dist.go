package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports/live"
	"github.com/leaselab/leaselab/sim/batch"
	"github.com/leaselab/leaselab/sweep"
)

// runDistributions runs each scenario f.runs times on the virtual backend
// (seeds seed, seed+1, …: sweep.Seeds) and writes each one's distribution.
func runDistributions(ctx context.Context, scs []model.Scenario, f runFlags, stdout io.Writer) error {
	if err := f.override(scs); err != nil {
		return err
	}
	var bad []string
	for _, sc := range scs {
		sc = batch.Named(sc.WithDefaults())
		var w io.Writer = stdout
		if f.quiet {
			w = nil
		}
		tk := live.NewTicker(w, sc.Name, f.runs, 0)
		d, dir, took, err := sweep.Seeds(ctx, sc, sweep.SeedsOptions{Runs: f.runs, Out: f.out, Done: tk.Done})
		tk.Stop()
		if d != nil {
			live.Distribution(stdout, d, dir, took, runtime.GOMAXPROCS(0))
		}
		if ctx.Err() != nil {
			return &exitError{exitCanceled, errors.New("interrupted: the distribution of the runs done so far is written, marked incomplete")}
		}
		if d == nil && err != nil {
			return &exitError{exitUsage, err} // a run could not start
		}
		if err != nil {
			return err
		}
		if n := d.Verdicts.Fail + d.Verdicts.Unknown; n > 0 {
			bad = append(bad, fmt.Sprintf("%s: %d of %d runs did not pass (%d fail, %d unknown)", sc.Name, n, d.Runs, d.Verdicts.Fail, d.Verdicts.Unknown))
		}
	}
	if len(bad) > 0 {
		return &exitError{exitFailed, errors.New(strings.Join(bad, "; "))}
	}
	return nil
}
