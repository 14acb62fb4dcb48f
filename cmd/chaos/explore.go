package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/backends"
	"github.com/leaselab/leaselab/sweep"
)

const exploreUsage = `Usage: chaos explore NAME|FILE [flags]
       chaos explore merge [--out DIR] SHARD/result.json...

Searches the virtual backend for the worst schedule of a scenario, per
metric (max overlap, max gap, stale leadership, failover): each fault's
start over a renewal interval and a Wait, aligned to the elector's own
calls (within a few hundred µs of every send, arrival and reply), the
followers' starts over a Wait, the fault sizes over the --vary ranges, and
the seeds' jitter and backoff draws. Prints the worst measured beside its
predicted bound, formula and ratio; a measurement above its bound is a
finding ("BOUND VIOLATED"). Writes result.json, explore.md, index.html, and
per metric worst-METRIC.yaml (the schedule with its seed, the bound as its
expectation: 'chaos run FILE' reproduces it on either backend) with its run
report in worst-METRIC/. Deterministic for the same input; --shard i/n
searches the seeds of one shard, and 'chaos explore merge' combines them
byte for byte. An interrupt keeps what was found.

Examples:
  chaos explore partition-blackhole --out /tmp/explore
  chaos explore partition-blackhole-tuned --metric gap --vary for=1s..14s
  chaos explore latency --vary latency=100ms..2s --budget 200000 --confirm-real

Flags:
`

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

// cmdExplore runs `chaos explore` and `chaos explore merge`.
func cmdExplore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "merge" {
		return cmdExploreMerge(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		out, shard, metrics string
		vary                stringsFlag
		s                   sweep.Space
		workers             int
		quiet, confirmReal  bool
	)
	fs.StringVar(&out, "out", "./chaos-explore", "write the search to `DIR`/<name>/")
	fs.StringVar(&metrics, "metric", "", "the metrics to search, comma-separated: overlap, gap, stale, failover, and in runner mode the counts duplicate_chores, stale_chores, duplicate_tasks (default the four durations)")
	fs.Var(&vary, "vary", "a fault size to search, `PARAM=LO..HI` (repeat it): for, partition, pause, latency, rate, lag")
	fs.IntVar(&s.Budget, "budget", 0, fmt.Sprintf("runs in all (default %d)", sweep.DefaultExploreBudget))
	fs.IntVar(&s.Seeds, "seeds", 0, fmt.Sprintf("seeds searched, each a lane of the search (default %d)", sweep.DefaultExploreSeeds))
	fs.Int64Var(&s.FirstSeed, "first-seed", 0, "the first seed (default 1)")
	fs.DurationVar(&s.Window, "window", 0, "how far each fault's start moves, centred on the file's (default TTL/2 + jitter + Wait)")
	fs.BoolVar(&s.FixedStarts, "fixed-starts", false, "keep the instances' starts as the file has them")
	fs.DurationVar(&s.Tolerance, "tolerance", 0, "how far above its bound a measurement counts as a violation (default 1ms)")
	fs.StringVar(&shard, "shard", "", "search one shard of the seeds, `i/n` (0-based)")
	fs.IntVar(&workers, "workers", 0, "seeds searched at once (default GOMAXPROCS)")
	fs.BoolVar(&quiet, "quiet", false, "print only the summary")
	fs.BoolVar(&confirmReal, "confirm-real", false, "run each worst schedule on the real backend too and print its figure")
	fs.Usage = func() { fmt.Fprint(stderr, exploreUsage); fs.PrintDefaults() }
	var err error
	if s.Base, s.Metrics, err = scenarioAndMetrics(fs, args, "explore", &metrics); err != nil {
		return err
	}
	if s.Vary, err = parseVary(vary, sweep.ParseRange); err != nil {
		return err
	}
	o := sweep.ExploreOptions{Workers: workers}
	if shard != "" {
		if o.Shard, err = sweep.ParseShard(shard); err != nil {
			return usageErr("--shard: %v", err)
		}
	}
	o.Progress = sweepProgress(stdout, quiet)
	res, runErr := sweep.Explore(ctx, s, o)
	if res == nil {
		if runErr != nil && ctx.Err() == nil {
			return &exitError{exitUsage, runErr}
		}
		return &exitError{exitCanceled, errors.New("interrupted")}
	}
	dir := filepath.Join(out, res.Space.Name+o.Shard.DirSuffix())
	if err := writeExplore(dir, res, stderr); err != nil {
		return err
	}
	res.WriteTable(stdout)
	if confirmReal && runErr == nil {
		if err := confirmExplore(ctx, res, dir, stdout, stderr); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(dir, "index.html"))
	switch {
	case runErr != nil:
		return &exitError{exitCanceled, errors.New("interrupted: what was found is written, marked incomplete")}
	case len(res.Violations()) > 0:
		return &exitError{exitFailed, fmt.Errorf("%d bound(s) violated: see the worst-*.yaml files in %s", len(res.Violations()), dir)}
	}
	return nil
}

// parseVary reads a search command's --vary values with parse (explore's
// and prove's axes differ), as a usage error naming the flag.
func parseVary(vary []string, parse func(string) (sweep.Range, error)) ([]sweep.Range, error) {
	var out []sweep.Range
	for _, v := range vary {
		r, err := parse(v)
		if err != nil {
			return nil, usageErr("--vary: %v", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// scenarioAndMetrics parses a search command's flags from args and opens
// the one scenario they name (a built-in NAME or a FILE), and reads the
// --metric list the parse set (nil when empty: the command's default).
func scenarioAndMetrics(fs *flag.FlagSet, args []string, cmd string, metrics *string) (model.Scenario, []string, error) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return model.Scenario{}, nil, flagErr(err)
	}
	if len(pos) != 1 {
		return model.Scenario{}, nil, usageErr("%s takes one scenario, a built-in NAME or a FILE (see --help)", cmd)
	}
	sc, err := scenarios.Open(pos[0])
	if err != nil {
		return sc, nil, &exitError{exitUsage, err}
	}
	var ms []string
	if *metrics != "" {
		for _, m := range strings.Split(*metrics, ",") {
			name, err := sweep.ParseMetric(strings.TrimSpace(m))
			if err != nil {
				return sc, nil, usageErr("--metric: %v", err)
			}
			ms = append(ms, name)
		}
	}
	return sc, ms, nil
}

// writeExplore writes the search's files and its worst runs' reports
// (sweep.WriteExploreRuns), saying on stderr which report could not be.
func writeExplore(dir string, res *sweep.ExploreResult, stderr io.Writer) error {
	reportErrs, err := sweep.WriteExploreRuns(dir, res)
	for _, e := range reportErrs {
		printErr(stderr, e)
	}
	return err
}

// cmdExploreMerge combines shard results.
func cmdExploreMerge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("explore merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "./chaos-explore/merged", "write the merged search to `DIR`")
	fs.Usage = func() { fmt.Fprint(stderr, exploreUsage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagErr(err)
	}
	if len(pos) == 0 {
		return usageErr("explore merge needs the shards' result.json files")
	}
	shards, err := sweep.ReadShards(pos, sweep.ReadExploreResult)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	merged, err := sweep.MergeExplore(shards...)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if err := writeExplore(*out, merged, stderr); err != nil {
		return err
	}
	merged.WriteTable(stdout)
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(*out, "index.html"))
	if !merged.Complete {
		return &exitError{exitFailed, fmt.Errorf("the merged search is incomplete: %s", merged.Incomplete)}
	}
	if n := len(merged.Violations()); n > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d bound(s) violated", n)}
	}
	return nil
}

// confirmExplore runs, per metric, the robust schedule near the worst on
// the real backend (spawned redis-server, in-process Toxiproxy), all at
// once, and prints the real figure beside the virtual ones.
func confirmExplore(ctx context.Context, res *sweep.ExploreResult, dir string, stdout, stderr io.Writer) error {
	scs, robust, err := res.Confirmable()
	if err != nil {
		return err
	}
	if len(scs) == 0 {
		fmt.Fprintln(stdout, "real backend: no schedule to confirm")
		return nil
	}
	f := runFlags{backend: backends.Real, out: filepath.Join(dir, "real"), env: "embedded", quiet: true, set: map[string]bool{}}
	outs, _, err := runAll(ctx, scs, f, io.Discard, stderr)
	if err != nil {
		return err
	}
	runs := make([]sweep.RealRun, len(outs))
	for i, o := range outs {
		runs[i] = sweep.RealRun{Result: o.Result, Err: o.Err, Dir: o.Dir}
	}
	sweep.WriteConfirmation(stdout, robust, runs)
	return nil
}
