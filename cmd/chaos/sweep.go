package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports/live"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/backends"
	"github.com/leaselab/leaselab/sweep"
)

const sweepUsage = `Usage: chaos sweep FILE.yaml [flags]
       chaos sweep --scenario NAME --grid PARAM=VALUES [--grid ...] [flags]
       chaos sweep merge [--out DIR] SHARD/result.json...

Runs a scenario over a grid of timings and fault sizes, many seeds per
cell, on the virtual backend, and writes result.json, cells.csv, heatmaps
of the worst overlap and gap with the safe region drawn, and index.html.
A grid is a sweep file (see sweep/testdata/blackhole.yaml) or --grid flags:
PARAM=v1,v2,... or, for durations, PARAM=FROM..TO/STEPS. Params: ttl, wait,
jitter, op_timeout, read_timeout, max_retries, safe, pause, latency,
clock_rate, partition, fault_at, lag.

--shard i/n runs one shard (e.g. --shard $JOB_COMPLETION_INDEX/8 in a
Kubernetes Indexed Job); 'chaos sweep merge' combines the shards' result.json
files into the same reports, byte for byte those of the unsharded sweep; a
quoted pattern ('OUT/*-shard-*-of-8/result.json') is expanded by merge
itself, for a container without a shell.
An interrupt keeps what ran, marked incomplete.

Examples:
  chaos sweep sweep/testdata/blackhole.yaml --out /tmp/sweep
  chaos sweep --scenario partition-blackhole --grid ttl=1s..10s/10 --grid read_timeout=500ms,1s,5s --seeds 50
  chaos sweep merge --out /tmp/sweep shard-0/result.json shard-1/result.json

Flags:
`

const adviseUsage = `Usage: chaos advise --max-gap D [constraints] [envelope] [flags]

Recommends the TTL, Wait, jitter, client timeouts and retries, op_timeout
and spec or safe mode that keep your constraints under your platform's
faults, with the margin each constraint has, the formulas behind it and
what breaks first; found analytically, then confirmed by a search of the
worst schedule of each failure mode on the virtual backend (chaos explore;
a measurement above its prediction is a model error and fails it). If nothing meets the constraints it
says which one to relax, and by how much. The confirming scenarios are
written to --out, to keep checking on the real backend ('chaos run FILE'; --confirm-real runs them there now).

Examples:
  chaos advise --max-gap 12s --max-overlap 0s --max-pause 1s --max-drift 0.01 --partitions blackhole,refuse,reset
  chaos advise --max-gap 5s --max-overlap 0s --redis-restarts --out /tmp/advice

Flags:
`

// cmdSweep runs `chaos sweep` and `chaos sweep merge`.
func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "merge" {
		return cmdSweepMerge(args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		out, scenario, shard string
		grids                gridFlags
		seeds, workers       int
		quiet                bool
	)
	fs.StringVar(&out, "out", "./chaos-sweeps", "write the sweep to `DIR`/<name>/")
	fs.StringVar(&scenario, "scenario", "", "with --grid: the base scenario, a built-in `NAME` or a file")
	fs.Var(&grids, "grid", "an axis, `PARAM=VALUES` (repeat it; the last varies fastest)")
	fs.IntVar(&seeds, "seeds", 0, "seeds per cell (default: the file's, else 20)")
	fs.StringVar(&shard, "shard", "", "run one shard, `i/n` (0-based)")
	fs.IntVar(&workers, "workers", 0, "runs at once (default GOMAXPROCS)")
	fs.BoolVar(&quiet, "quiet", false, "print only the summary")
	fs.Usage = func() { fmt.Fprint(stderr, sweepUsage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagErr(err)
	}
	var g sweep.Grid
	switch {
	case len(pos) == 1 && scenario == "" && len(grids) == 0:
		if g, err = sweep.Load(pos[0]); err != nil {
			return &exitError{exitUsage, err}
		}
	case len(pos) == 0 && scenario != "" && len(grids) > 0:
		base, err := scenarios.Open(scenario)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		g = sweep.Grid{Name: base.Name, Base: base, Axes: grids, Limits: sweep.DefaultLimits()}
	default:
		return usageErr("sweep takes a sweep file, or --scenario with --grid axes (see --help)")
	}
	if seeds > 0 {
		g.Seeds = seeds
	}
	o := sweep.Options{Workers: workers}
	if shard != "" {
		if o.Shard, err = sweep.ParseShard(shard); err != nil {
			return usageErr("--shard: %v", err)
		}
	}
	o.Progress = sweepProgress(stdout, quiet)
	res, runErr := sweep.Run(ctx, g, o)
	if res == nil {
		if runErr != nil && ctx.Err() == nil {
			return &exitError{exitUsage, runErr}
		}
		return &exitError{exitCanceled, errors.New("interrupted")}
	}
	dir := filepath.Join(out, g.DirName(o.Shard))
	if _, err := sweep.WriteFiles(dir, res); err != nil {
		return fmt.Errorf("writing the sweep: %w", err)
	}
	fmt.Fprintf(stdout, "%s\n", res.Summary())
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(dir, "index.html"))
	if runErr != nil {
		return &exitError{exitCanceled, errors.New("interrupted: the partial sweep is written, marked incomplete")}
	}
	return nil
}

// cmdSweepMerge combines shard results.
func cmdSweepMerge(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep merge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "./chaos-sweeps/merged", "write the merged sweep to `DIR`")
	fs.Usage = func() { fmt.Fprint(stderr, sweepUsage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagErr(err)
	}
	if len(pos) == 0 {
		return usageErr("sweep merge needs the shards' result.json files")
	}
	if pos, err = expandPatterns(pos); err != nil {
		return &exitError{exitUsage, err}
	}
	shards, err := sweep.ReadShards(pos, sweep.ReadResult)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	merged, err := sweep.Merge(shards...)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if _, err := sweep.WriteFiles(*out, merged); err != nil {
		return fmt.Errorf("writing the merged sweep: %w", err)
	}
	fmt.Fprintf(stdout, "%s\nreport: %s\n", merged.Summary(), filepath.Join(*out, "index.html"))
	if !merged.Complete {
		return &exitError{exitFailed, fmt.Errorf("the merged sweep is incomplete: %s", merged.Incomplete)}
	}
	return nil
}

// expandPatterns expands each argument that is a glob pattern (and not a
// file of that name) into the files it matches, sorted, as a shell would:
// a container without a shell (the chaos image) passes the pattern itself.
// A pattern that matches nothing is an error.
func expandPatterns(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if !strings.ContainsAny(a, "*?[") {
			out = append(out, a)
			continue
		}
		if _, err := os.Lstat(a); err == nil {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%s matches no file", a)
		}
		out = append(out, m...)
	}
	return out, nil
}

// cmdAdvise runs `chaos advise`.
func cmdAdvise(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("advise", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		c              sweep.Constraints
		e              sweep.Envelope
		o              sweep.AdviseOptions
		maxStale       string
		partitions     string
		out            string
		jsonOut        bool
		confirmVirtual bool
		confirmReal    bool
		maxDupChores   int
	)
	fs.DurationVar(&c.MaxGap, "max-gap", 0, "the longest leaderless interval allowed (required)")
	fs.DurationVar(&c.MaxOverlap, "max-overlap", 0, "the longest believed split brain allowed (0: none)")
	fs.StringVar(&maxStale, "max-stale", "none", "the longest stale leadership allowed, a duration or none")
	fs.BoolVar(&c.NoStaleWrites, "no-stale-writes", false, "a stale leader's writes must not land (needs safe mode's fence unless no stale leadership is predicted)")
	fs.IntVar(&maxDupChores, "max-duplicate-chores", -1, "the most duplicate chores per failover a TaskRunner may see (3 chores a tick; -1: no limit), confirmed in runner mode")
	fs.DurationVar(&e.LatencyP99, "latency-p99", 0, "p99 one-way latency to Redis in normal operation")
	fs.DurationVar(&e.LatencyMax, "latency-max", 0, "worst one-way latency spike to survive")
	fs.DurationVar(&e.MaxPause, "max-pause", 0, "longest process pause (GC, VM steal, SIGSTOP)")
	fs.DurationVar(&e.MaxSuspend, "max-suspend", 0, "longest VM or host suspend (the instance's clock stops too)")
	fs.DurationVar(&e.MaxRedisPause, "max-redis-pause", 0, "longest pause of Redis's writes (CLIENT PAUSE WRITE: a FAILOVER, maintenance)")
	fs.Float64Var(&e.MaxClockDrift, "max-drift", 0, "how much slower than real time a clock may run, a fraction (0.01 = 1%)")
	fs.StringVar(&partitions, "partitions", "", "partition modes to survive, comma-separated: blackhole, refuse, reset, blackhole-requests, blackhole-replies")
	fs.BoolVar(&e.RedisRestarts, "redis-restarts", false, "Redis may restart empty (the lease is lost)")
	fs.DurationVar(&e.RedisDowntime, "redis-downtime", 0, "how long a restarting Redis is unreachable (default 1s)")
	fs.IntVar(&o.Seeds, "seeds", 0, "seeds the confirming search takes per failure mode (default 4)")
	fs.IntVar(&o.Budget, "budget", 0, "runs of the confirming search per failure mode (default 4000)")
	fs.BoolVar(&confirmVirtual, "confirm", true, "confirm the recommendation with a search of the worst schedules on the virtual backend")
	fs.BoolVar(&confirmReal, "confirm-real", false, "run the confirming scenarios on the real backend too, and put real beside virtual in the advice")
	fs.StringVar(&out, "out", "", "also write advice.md, advice.json and the confirming scenarios to `DIR`")
	fs.BoolVar(&jsonOut, "json", false, "print the advice as JSON")
	fs.Usage = func() { fmt.Fprint(stderr, adviseUsage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagErr(err)
	}
	if len(pos) > 0 {
		return usageErr("advise takes flags only, not %q", pos[0])
	}
	if maxDupChores >= 0 {
		c.MaxDuplicateChores = &maxDupChores
	}
	c.MaxStale = sweep.NoLimit
	if maxStale != "none" {
		if c.MaxStale, err = time.ParseDuration(maxStale); err != nil {
			return usageErr("--max-stale: %v (a duration, or none)", err)
		}
	}
	if partitions != "" {
		e.Partitions = strings.Split(partitions, ",")
	}
	o.Confirm = confirmVirtual
	adv, err := sweep.Advise(ctx, c, e, o)
	if err != nil {
		if ctx.Err() != nil {
			return &exitError{exitCanceled, errors.New("interrupted")}
		}
		return &exitError{exitUsage, err}
	}
	if confirmReal && len(adv.Scenarios) > 0 {
		dir := out
		if dir == "" {
			dir = "./chaos-advise"
		}
		if adv.Real, err = realBeside(ctx, adv.Scenarios, filepath.Join(dir, "real"), stderr); err != nil {
			return err
		}
	}
	if jsonOut {
		b, _ := json.MarshalIndent(adv, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		fmt.Fprint(stdout, adv.Markdown())
	}
	if out != "" {
		if err := sweep.WriteAdvice(out, adv); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nwritten to %s\n", out)
	}
	if err := adv.Verdict(); err != nil {
		return &exitError{exitFailed, err}
	}
	return nil
}

// realBeside runs the scenarios on the real backend (spawned redis-server,
// in-process Toxiproxy), all at once, and puts each one's figures beside
// the virtual backend's for the same file.
func realBeside(ctx context.Context, scs []model.Scenario, dir string, stderr io.Writer) ([]sweep.RealCheck, error) {
	f := runFlags{backend: backends.Real, out: dir, env: "embedded", quiet: true, set: map[string]bool{}}
	outs, _, err := runAll(ctx, append([]model.Scenario(nil), scs...), f, io.Discard, stderr)
	if err != nil {
		return nil, err
	}
	var checks []sweep.RealCheck
	for i, o := range outs {
		checks = append(checks, sweep.RealCheckOf(scs[i], o.Result, o.Err))
	}
	return checks, nil
}

// gridFlags are --grid axes.
type gridFlags []sweep.Axis

func (g *gridFlags) String() string { return fmt.Sprint(len(*g), " axes") }

// Set parses one --grid axis (sweep.ParseAxis).
func (g *gridFlags) Set(s string) error {
	ax, err := sweep.ParseAxis(s)
	if err != nil {
		return err
	}
	*g = append(*g, ax)
	return nil
}

// sweepProgress is live.Progress on w, nil when quiet.
func sweepProgress(w io.Writer, quiet bool) func(done, total int) {
	if quiet {
		return nil
	}
	return live.Progress(w, terminalSize(w) != nil)
}
