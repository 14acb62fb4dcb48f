package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/leaselab/leaselab/sweep"
)

const proveUsage = `Usage: chaos prove NAME|FILE [flags]

Proves, on the virtual backend, the exact worst case of each metric (max
overlap, max gap, stale leadership; failover when asked for with --metric)
over a range of one fault's start
(--vary at=LO..HI, default a renewal interval and a Wait around the file's),
its length (--vary for=LO..HI) or an instance's start (--vary
start1=0s..6s: the first follower's phase), the rest and the seed fixed;
in a scenario of several faults atK and forK move faults[K] (at and for
are faults[0]'s), the others staying where the file has them:
every schedule of the range on the model's nanosecond grid, not a
sample. Two to four --vary flags prove a box (the fault's start × its
length, two followers' phases, or all four at once): cut into cells where
every run takes the same path, their schedules counted exactly to certify
that the cells cover the box. It walks the range from breakpoint to breakpoint (where two of the
run's event times cross, so that a comparison could turn), checks each
segment's path at its end and at random points inside it, and takes each
metric's supremum at the segments' ends. Per metric: the worst value, where,
the bound (chaos bounds' prediction), and a verdict: proven (worst ≤
bound), COUNTEREXAMPLE (written as witness-METRIC.yaml, which 'chaos run
FILE' reproduces), or incomplete (the segment limit was reached: it says how
far it got). Writes result.json, per metric witness-METRIC.yaml, and a report:
prove.md and index.html (a walk's with each metric plotted along the axis,
curve-METRIC.svg/.png, and its values in curves.csv; a box's with each
mapped over it, map-METRIC.svg/.png: over a box of three or four axes,
on the plane of its first two through the metric's worst schedule). The
seed fixes the
jitter and backoff draws: --seeds N proves each of N seeds in turn.

What it proves is the calibrated virtual model, spec or safe mode, each clock
fault at its fixed rate: a drifting clock rounds its readings to the
nanosecond, so the range is proven one residue class of its times at a time
(5 classes modulo 5ns at rate 0.2; a box of two axes, 25; a box of
more axes with a drifting clock is refused). It refuses rates that need
more classes, and runner mode, rather than answer them wrongly
(docs/prove.md).

Examples:
  chaos prove partition-blackhole
  chaos prove partition-blackhole --vary for=1s..14s --metric overlap
  chaos prove partition-blackhole --vary start1=0s..6s
  chaos prove partition-blackhole --vary at=2s..10.5s --vary for=1s..14s --metric overlap
  chaos prove partition-blackhole --vary at=2.4s..2.7s --vary for=9.9s..10.1s --vary start1=3.9s..4.1s
  chaos prove flapping-network --vary at2=11s..15s   # the third flap's start
  chaos prove my-scenario.yaml --vary at=5s..9s --seed 3
  chaos prove partition-blackhole --seeds 5      # seeds 1..5, each proven
  chaos prove partition-blackhole --metric failover
  chaos prove clock-drift                        # the leader's clock at 0.2x

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
	fs.StringVar(&metrics, "metric", "", "the metrics to prove, comma-separated: overlap, gap, stale, failover (default the first three)")
	fs.Var(&vary, "vary", "the axis to walk, `PARAM=LO..HI`: at (the fault's start), for (its length), startN (instance N's start), atK or forK (faults[K]'s start or length); two to four times for a box")
	fs.Int64Var(&s.Seed, "seed", 0, "the seed (jitter and backoff draws; default the file's, or 1)")
	var seeds int
	fs.IntVar(&seeds, "seeds", 1, "prove for `N` seeds in turn, from --seed on: each seed's own proof under DIR/<name>/seed-K/, and the worst over them")
	fs.IntVar(&s.MaxSegments, "max-segments", 0, fmt.Sprintf("stop after this many segments, incomplete (default %d)", sweep.DefaultMaxSegments))
	var o sweep.ProveOptions
	fs.BoolVar(&o.FullOrder, "full-order", false, "record every run's full order, every pair of events (finer cuts, the same worst values; to check the partial order against)")
	fs.Usage = func() { fmt.Fprint(stderr, proveUsage); fs.PrintDefaults() }
	var err error
	if s.Base, s.Metrics, err = scenarioAndMetrics(fs, args, "prove", &metrics); err != nil {
		return err
	}
	if s.Vary, err = parseVary(vary, sweep.ParseProveRange); err != nil {
		return err
	}
	if seeds < 1 {
		return usageErr("--seeds %d: want 1 or more", seeds)
	}
	first := s.Seed
	if first == 0 {
		first = max(s.Base.Seed, 1)
	}

	var (
		bad        []string // "METRIC (seed K)", counterexamples
		incomplete []string
		results    []*sweep.ProveResult
		dirs       []string
	)
	for k := range int64(seeds) {
		s.Seed = first + k
		res, err := sweep.Prove(ctx, s, o)
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
		if seeds > 1 {
			dir = filepath.Join(dir, fmt.Sprintf("seed-%d", s.Seed))
		}
		if _, err := sweep.WriteProve(dir, res); err != nil {
			return fmt.Errorf("writing the proof: %w", err)
		}
		res.WriteTable(stdout)
		fmt.Fprintf(stdout, "written: %s\n", dir)
		for _, p := range res.Proofs {
			switch {
			case p.Verdict == sweep.VerdictCounterexample:
				bad = append(bad, fmt.Sprintf("%s (seed %d: %s)", p.Metric, s.Seed, filepath.Join(dir, sweep.WitnessFile(p.Metric))))
			case p.Verdict == sweep.VerdictIncomplete && res.Complete:
				// The walk covered the range, but this metric's worst
				// is not known everywhere in it.
				incomplete = append(incomplete, fmt.Sprintf("seed %d: %s: %s", s.Seed, p.Metric, p.Why))
			}
		}
		if !res.Complete {
			incomplete = append(incomplete, fmt.Sprintf("seed %d: %s", s.Seed, res.Incomplete))
		}
		results, dirs = append(results, res), append(dirs, dir)
	}
	if seeds > 1 {
		sweep.WriteSeedsSummary(stdout, results)
		var md strings.Builder
		var rel []string
		for _, d := range dirs {
			rel = append(rel, filepath.Base(d))
		}
		if err := sweep.SeedsMarkdown(&md, results, rel); err != nil {
			return err
		}
		top := filepath.Join(out, results[0].Space.Name)
		// The seeds' summary takes the place of one seed's proof there.
		if err := sweep.ClearProve(top); err != nil {
			return err
		}
		sum := filepath.Join(top, "seeds.md")
		if err := os.WriteFile(sum, []byte(md.String()), 0o644); err != nil {
			return fmt.Errorf("writing the seeds' summary: %w", err)
		}
		fmt.Fprintf(stdout, "written: %s\n", sum)
	}
	switch {
	case len(bad) > 0:
		return &exitError{exitFailed, fmt.Errorf("counterexample to the bound of %s", strings.Join(bad, ", "))}
	case len(incomplete) > 0:
		return &exitError{exitFailed, fmt.Errorf("incomplete: %s", strings.Join(incomplete, "; "))}
	}
	return nil
}
