package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports/live"
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
		sc = named(sc.WithDefaults())
		tk := ticking(stdout, sc.Name, f.runs, f.quiet)
		d, dir, took, err := sweep.Seeds(ctx, sc, sweep.SeedsOptions{Runs: f.runs, Out: f.out, Done: tk.done})
		tk.stop()
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

// ticker prints how many of a distribution's runs are done, once a second.
type ticker struct {
	n    atomic.Int64
	quit chan struct{}
	wg   sync.WaitGroup
}

// ticking starts the ticker of name's n runs (none when quiet).
func ticking(w io.Writer, name string, n int, quiet bool) *ticker {
	t := &ticker{quit: make(chan struct{})}
	if quiet {
		return t
	}
	t.wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				fmt.Fprintf(w, "%s: %d of %d runs\n", name, t.n.Load(), n)
			case <-t.quit:
				return
			}
		}
	})
	return t
}

// done counts a run.
func (t *ticker) done() { t.n.Add(1) }

// stop stops the ticker.
func (t *ticker) stop() {
	close(t.quit)
	t.wg.Wait()
}
