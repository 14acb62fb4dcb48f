package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/leaselab/leaselab/sweep"
)

const proveUsage = `Usage: chaos prove NAME|FILE [flags]

Proves, on the virtual backend, the exact worst case of each metric (max
overlap, max gap, stale leadership) over a range of one fault's start
(--vary at=LO..HI, default a renewal interval and a Wait around the file's),
its length (--vary for=LO..HI) or an instance's start (--vary
start1=0s..6s: the first follower's phase), the rest and the seed fixed:
every schedule of the range on the model's nanosecond grid, not a
sample. It walks the range from breakpoint to breakpoint (where two of the
run's event times cross, so that a comparison could turn), checks each
segment's path at its end and at random points inside it, and takes each
metric's supremum at the segments' ends. Per metric: the worst value, where,
the bound (chaos bounds' prediction), and a verdict: proven (worst ≤
bound), COUNTEREXAMPLE (written as witness-METRIC.yaml, which 'chaos run
FILE' reproduces), or incomplete (the segment limit was reached: it says how
far it got). Writes result.json and per metric witness-METRIC.yaml.

What it proves is the calibrated virtual model with a fixed clock rate, spec
mode, one fault: it refuses safe mode, clock faults, several faults, runner
mode and failover rather than answer them wrongly (docs/prove.md).

Examples:
  chaos prove partition-blackhole
  chaos prove partition-blackhole --vary for=1s..14s --metric overlap
  chaos prove partition-blackhole --vary start1=0s..6s
  chaos prove my-scenario.yaml --vary at=5s..9s --seed 3

Flags:
`

// cmdProve runs `chaos prove`.
func cmdProve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("prove", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		out, metrics string
		vary         stringsFlag
		s            sweep.ProveSpace
	)
	fs.StringVar(&out, "out", "./chaos-prove", "write the proof to `DIR`/<name>/")
	fs.StringVar(&metrics, "metric", "", "the metrics to prove, comma-separated: overlap, gap, stale (default all three)")
	fs.Var(&vary, "vary", "the axis to walk, `PARAM=LO..HI`: at (the fault's start), for (its length) or startN (instance N's start)")
	fs.Int64Var(&s.Seed, "seed", 0, "the seed (jitter and backoff draws; default the file's, or 1)")
	fs.IntVar(&s.MaxSegments, "max-segments", 0, fmt.Sprintf("stop after this many segments, incomplete (default %d)", sweep.DefaultMaxSegments))
	fs.Usage = func() { fmt.Fprint(stderr, proveUsage); fs.PrintDefaults() }
	var err error
	if s.Base, s.Metrics, err = scenarioAndMetrics(fs, args, "prove", &metrics); err != nil {
		return err
	}
	for _, v := range vary {
		r, err := sweep.ParseProveRange(v)
		if err != nil {
			return usageErr("--vary: %v", err)
		}
		s.Vary = append(s.Vary, r)
	}
	res, err := sweep.Prove(ctx, s, sweep.ProveOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{exitCanceled, errors.New("interrupted")}
		}
		if errors.Is(err, sweep.ErrPathMismatch) {
			return err // the prover's own fault: exit 1, never a verdict
		}
		return &exitError{exitUsage, err}
	}
	dir := filepath.Join(out, res.Space.Name)
	if _, err := sweep.WriteProve(dir, res); err != nil {
		return fmt.Errorf("writing the proof: %w", err)
	}
	res.WriteTable(stdout)
	fmt.Fprintf(stdout, "written: %s\n", dir)
	var bad []string
	for _, p := range res.Proofs {
		if p.Verdict == sweep.VerdictCounterexample {
			bad = append(bad, p.Metric)
		}
	}
	switch {
	case len(bad) > 0:
		return &exitError{exitFailed, fmt.Errorf("counterexample to the bound of %s: see %s", strings.Join(bad, ", "), filepath.Join(dir, "witness-*.yaml"))}
	case !res.Complete:
		return &exitError{exitFailed, fmt.Errorf("incomplete: %s", res.Incomplete)}
	}
	return nil
}
