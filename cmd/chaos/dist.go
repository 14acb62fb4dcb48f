package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/virtual"
)

// runDistributions runs each scenario f.runs times on the virtual backend
// (seeds seed, seed+1, …) and writes each one's distribution.
func runDistributions(ctx context.Context, scs []model.Scenario, f runFlags, stdout io.Writer) error {
	if err := f.override(scs); err != nil {
		return err
	}
	var bad []string
	for _, sc := range scs {
		sc = named(sc.WithDefaults())
		d, dir, took, err := runDistribution(ctx, sc, f.runs, f.out, stdout, f.quiet)
		if d != nil {
			printDistribution(stdout, d, dir, took)
		}
		if ctx.Err() != nil {
			return &exitError{exitCanceled, errors.New("interrupted: the distribution of the runs done so far is written, marked incomplete")}
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

// runDistribution runs n seeds of sc on the virtual backend, GOMAXPROCS at
// once (sim.Seeds), into a reports.Distribution, which keeps only running
// statistics and the worst run, so memory does not grow with n. It writes
// <out>/<scenario>/runs-<first>-<last>/: distribution.json, .md, .html,
// histograms.svg/.png and worst/ (the worst run's full report).
func runDistribution(ctx context.Context, sc model.Scenario, n int, out string, stdout io.Writer, quiet bool) (*reports.Distribution, string, time.Duration, error) {
	start := time.Now()
	d := reports.NewDistribution(sc, virtual.Backend{}.Name(), n, func(seed int64, backend string) string {
		return reproduceOn(sc, seed, sc.TimeScale, backend)
	})
	// The progress line reads a count of its own: d is Seeds' to update.
	var done atomic.Int64
	stop := make(chan struct{})
	var ticker sync.WaitGroup
	if !quiet {
		ticker.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-tick.C:
					fmt.Fprintf(stdout, "%s: %d of %d runs\n", sc.Name, done.Load(), n)
				case <-stop:
					return
				}
			}
		})
	}
	runErr := sim.Seeds(ctx, sc, virtual.Backend{}, n, 0, func(res *model.Result) {
		d.Add(res)
		done.Add(1)
	})
	close(stop)
	ticker.Wait()
	if runErr != nil {
		return nil, "", 0, &exitError{exitUsage, runErr}
	}
	if d.Runs == 0 {
		return nil, "", 0, ctx.Err()
	}
	if ctx.Err() != nil {
		d.Incomplete = fmt.Sprintf("interrupted after %d of %d runs", d.Runs, n)
	}
	d.Finish()
	took := time.Since(start)
	dir := filepath.Join(out, sc.Name, fmt.Sprintf("runs-%d-%d", sc.Seed, sc.Seed+int64(n)-1))
	worst := "worst"
	if _, err := reports.WriteRun(filepath.Join(dir, worst), d.Worst, reports.Options{Command: reproduce(sc, d.Worst)}); err != nil {
		return d, dir, took, fmt.Errorf("writing the worst run's report: %w", err)
	}
	if err := reports.WriteDistribution(dir, d, worst); err != nil {
		return d, dir, took, fmt.Errorf("writing the distribution: %w", err)
	}
	latest := filepath.Join(out, sc.Name, "latest-runs")
	_ = os.Remove(latest)
	_ = os.Symlink(filepath.Base(dir), latest)
	return d, dir, took, nil
}

// printDistribution prints the distribution table on the terminal.
func printDistribution(w io.Writer, d *reports.Distribution, dir string, took time.Duration) {
	fmt.Fprintf(w, "%s: %d runs on the virtual backend in %v (%d workers), seeds %d–%d: %d pass, %d fail, %d unknown\n",
		d.Scenario, d.Runs, took.Round(time.Millisecond), runtime.GOMAXPROCS(0), d.FirstSeed, d.LastSeed, d.Verdicts.Pass, d.Verdicts.Fail, d.Verdicts.Unknown)
	if d.Incomplete != "" {
		fmt.Fprintf(w, "  INCOMPLETE: %s\n", d.Incomplete)
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
	fmt.Fprintf(w, "  worst run: seed %d (%s), report %s\n", d.WorstRun.Seed, d.WorstRun.Verdict, filepath.Join(dir, "worst", reports.FileHTML))
	for _, m := range d.Metrics {
		if m.Measured > 0 && m.Max > 0 && (m.Name == "max_overlap" || m.Name == "max_gap") {
			fmt.Fprintf(w, "  worst %s on the real backend: %s\n", m.Name, m.ReproduceReal)
		}
	}
	fmt.Fprintf(w, "  distribution: %s\n", filepath.Join(dir, reports.FileDistHTML))
}

func secs(s float64) string {
	return time.Duration(s * 1e9).Round(time.Millisecond).String()
}
