package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	tclog "github.com/testcontainers/testcontainers-go/log"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/env"
)

// runFlags are the flags of run and suite.
type runFlags struct {
	out           string
	seed          int64
	timeScale     float64
	strictClaims  bool
	safe          string
	redisAddr     string
	redisServer   string
	toxiproxyAddr string
	proxyPorts    string
	proxyUpstream string
	env           string
	junit         string
	parallel      int
	verbose       bool
	quiet         bool
}

func (f *runFlags) register(fs *flag.FlagSet, parallel int) {
	fs.StringVar(&f.out, "out", "./chaos-reports", "directory for reports: `DIR`/<scenario>/<run-id>/, with a 'latest' link")
	fs.Int64Var(&f.seed, "seed", 0, "override every scenario's seed (0: keep the scenario's)")
	fs.Float64Var(&f.timeScale, "time-scale", 0, "multiply every duration of the run by `F` (0.2 runs 5× faster; 0: keep the scenario's)")
	fs.StringVar(&f.redisAddr, "redis-addr", "", "use the Redis at `ADDR` instead of spawning redis-server (default $LEASELAB_REDIS_ADDR)")
	fs.StringVar(&f.redisServer, "redis-server", "", "the redis-server binary to spawn (default: found on PATH)")
	fs.StringVar(&f.toxiproxyAddr, "toxiproxy-addr", "", "use the Toxiproxy API at `ADDR` instead of an in-process one")
	fs.StringVar(&f.proxyPorts, "proxy-ports", "", "with --toxiproxy-addr of a Toxiproxy in a container: have the proxies listen on `RANGE` (e.g. 21000-21031), published on the host at the same numbers (docker-compose.yml does)")
	fs.StringVar(&f.proxyUpstream, "proxy-upstream", "", "Redis as Toxiproxy reaches it, `ADDR` (docker-compose.yml: redis:6379; default: --redis-addr)")
	fs.StringVar(&f.env, "env", "embedded", "where Redis and Toxiproxy run, `MODE`: embedded (spawned redis-server, in-process Toxiproxy, or the --redis-addr/--toxiproxy-addr ones) or container (testcontainers-go; images from $LEASELAB_REDIS_IMAGE and $LEASELAB_TOXIPROXY_IMAGE)")
	fs.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to `FILE`")
	fs.IntVar(&f.parallel, "parallel", parallel, "run up to `N` scenarios at once (each has its own Redis and proxies)")
	fs.StringVar(&f.safe, "safe", "", "the elector's safe mode for every scenario, `on` or off (lease guard and fenced chores; default: what each scenario says), to measure the same faults in both modes")
	fs.BoolVar(&f.strictClaims, "strict-claims", false, "fail a run in which a spec claim it exercised did not hold (split brain > TTL, gap > TTL + Wait), as `expect: {claims: held}` does; by default such a claim is a finding beside the verdict")
	fs.BoolVar(&f.verbose, "v", false, "print every timeline event as it happens")
	fs.BoolVar(&f.quiet, "quiet", false, "print only the final verdicts")
}

func (f *runFlags) provider() (env.Provider, error) {
	switch f.env {
	case "container":
		if f.redisAddr != "" || f.toxiproxyAddr != "" || f.proxyPorts != "" || f.proxyUpstream != "" {
			return nil, usageErr("--env container starts its own Redis and Toxiproxy: drop --redis-addr, --toxiproxy-addr, --proxy-ports and --proxy-upstream")
		}
		c := env.Containers{}
		if f.verbose {
			c.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, "testcontainers: "+format+"\n", args...) }
		} else {
			// testcontainers-go prints a banner through its global logger.
			tclog.SetDefault(tclog.NewNoopLogger())
		}
		return c, nil
	case "embedded":
	default:
		return nil, usageErr("--env: %q is neither embedded nor container", f.env)
	}
	if f.proxyPorts == "" && f.proxyUpstream == "" {
		return env.Embedded{RedisServer: f.redisServer, RedisAddr: f.redisAddr, ToxiproxyAddr: f.toxiproxyAddr}, nil
	}
	if f.redisAddr == "" || f.toxiproxyAddr == "" {
		return nil, usageErr("--proxy-ports and --proxy-upstream are for a Toxiproxy in a container: give --redis-addr and --toxiproxy-addr too")
	}
	ext := env.External{RedisAddr: f.redisAddr, ToxiproxyAddr: f.toxiproxyAddr, ProxyUpstream: f.proxyUpstream}
	if f.proxyPorts != "" {
		r, err := env.ParsePortRange(f.proxyPorts)
		if err != nil {
			return nil, usageErr("--proxy-ports: %v", err)
		}
		ext.ProxyPorts = r
	}
	return ext, nil
}

const runUsage = `Usage: chaos run NAME|FILE... [flags]

Runs each scenario — a built-in name (see 'chaos list') or a YAML file —
against a redis-server the harness spawns and an in-process Toxiproxy (or the
ones given by --redis-addr/--toxiproxy-addr), and writes its report to
<out>/<scenario>/<run-id>/ (report.html, report.md, result.json, events.jsonl,
timeline.svg, timeline.png, junit.xml) with a 'latest' link beside it.

Examples:
  chaos run leader-crash
  chaos run partition-blackhole --time-scale 0.2 --seed 7
  chaos run ./my-scenario.yaml --out /tmp/reports --junit junit.xml
  chaos run leader-crash pause --parallel 2 --redis-addr 127.0.0.1:6379
  chaos run leader-crash --env container
  chaos run leader-crash --redis-addr 127.0.0.1:6379 --toxiproxy-addr 127.0.0.1:8474 \
    --proxy-ports 21000-21031 --proxy-upstream redis:6379      # docker-compose.yml

Flags:
`

// parseRunFlags parses the flags of run or suite and returns the
// positional arguments.
func parseRunFlags(name, usage string, parallel int, args []string, stderr io.Writer) (runFlags, []string, *flag.FlagSet, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs, parallel)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return f, nil, fs, flagErr(err)
	}
	return f, pos, fs, nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, names, fs, err := parseRunFlags("run", runUsage, 1, args, stderr)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		fs.Usage()
		return usageErr("run: name at least one scenario")
	}
	var scs []model.Scenario
	for _, n := range names {
		sc, err := scenarios.Open(n)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		scs = append(scs, sc)
	}
	runs, err := runAll(ctx, scs, f, stdout, stderr)
	if err != nil {
		return err
	}
	if f.junit != "" {
		if err := writeJUnit(f.junit, runs); err != nil {
			return err
		}
	}
	return verdict(ctx, runs)
}

// parseInterleaved parses flags that may come after positional arguments
// ("chaos run leader-crash --seed 3"), which the flag package alone stops at.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func flagErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return &exitError{exitOK, errors.New("")}
	}
	return &exitError{exitUsage, errors.New("")} // the flag package printed it
}

// outcome is one scenario's run.
type outcome struct {
	sc  model.Scenario
	res *model.Result
	dir string // report directory, "" if none was written
	err error
}

// runAll runs the scenarios, up to f.parallel at once, writing each report
// as it finishes.
func runAll(ctx context.Context, scs []model.Scenario, f runFlags, stdout, stderr io.Writer) ([]outcome, error) {
	if f.parallel < 1 {
		return nil, usageErr("--parallel must be at least 1")
	}
	provider, err := f.provider()
	if err != nil {
		return nil, err
	}
	for i := range scs {
		if f.seed != 0 {
			scs[i].Seed = f.seed
		}
		if f.timeScale != 0 {
			if f.timeScale < 0 {
				return nil, usageErr("--time-scale must be positive")
			}
			scs[i].TimeScale = f.timeScale
		}
		switch f.safe {
		case "":
		case "on":
			scs[i].Params.Safe = true
		case "off":
			scs[i].Params.Safe, scs[i].Params.SafeMargin = false, 0
		default:
			return nil, usageErr(fmt.Sprintf("--safe %q: want on or off", f.safe))
		}
		if f.strictClaims {
			scs[i].StrictClaims = true
		}
		if err := scs[i].Validate(); err != nil {
			return nil, &exitError{exitUsage, err}
		}
	}
	prog := newProgress(stdout, f.verbose, f.quiet)
	defer prog.close()
	out := make([]outcome, len(scs))
	sem := make(chan struct{}, f.parallel)
	var wg sync.WaitGroup
	for i, sc := range scs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				out[i] = outcome{sc: sc, err: ctx.Err()}
				return
			}
			defer func() { <-sem }()
			out[i] = runOne(ctx, sc, f, provider, prog)
		}()
	}
	wg.Wait()
	for _, o := range out {
		// An interrupt during setup is an interrupt, not a broken environment.
		if o.res == nil && o.err != nil && errors.Is(o.err, env.ErrEnvironment) && ctx.Err() == nil {
			fmt.Fprintf(stderr, "chaos: %s: %v\n", o.sc.Name, o.err)
			if f.env == "container" {
				return out, &exitError{exitEnv, errors.New("environment error: the container environment needs a reachable Docker Engine and the images (README.md, Running with Docker)")}
			}
			return out, &exitError{exitEnv, errors.New("environment error: install redis-server (apt-get install redis-server) or pass --redis-addr")}
		}
	}
	return out, nil
}

// runOne runs one scenario and writes its report, also when the run was
// interrupted (the report is then marked incomplete).
func runOne(ctx context.Context, sc model.Scenario, f runFlags, provider env.Provider, prog *progress) outcome {
	sc = named(sc)
	track := prog.start(sc)
	res, err := sim.Run(ctx, sc, sim.Options{Provider: provider, Observe: track.observe})
	o := outcome{sc: sc, res: res, err: err}
	if res == nil {
		track.done(nil, err)
		return o
	}
	o.dir = filepath.Join(f.out, sc.Name, res.RunID)
	if _, werr := reports.WriteRun(o.dir, res, reports.Options{Command: reproduce(sc, res)}); werr != nil {
		o.err = errors.Join(o.err, fmt.Errorf("writing the report: %w", werr))
	} else {
		latest := filepath.Join(f.out, sc.Name, "latest")
		_ = os.Remove(latest)
		_ = os.Symlink(res.RunID, latest)
	}
	track.done(res, o.err)
	if o.dir != "" {
		prog.printf("  report: %s\n", filepath.Join(o.dir, "report.html"))
	}
	return o
}

// named gives an unnamed scenario a name for its report directory.
func named(sc model.Scenario) model.Scenario {
	if sc.Name == "" {
		sc.Name = "scenario"
	}
	return sc
}

// reproduce is the command that re-runs this exact scenario and seed.
func reproduce(sc model.Scenario, res *model.Result) string {
	name := sc.Name
	if _, ok := scenarios.Lookup(name); !ok {
		name = sc.Name + ".yaml"
	}
	return fmt.Sprintf("go run ./cmd/chaos run %s --seed %d --time-scale %g", name, res.Seed, res.TimeScale)
}

// verdict turns the outcomes into the exit code.
func verdict(ctx context.Context, runs []outcome) error {
	if ctx.Err() != nil {
		return &exitError{exitCanceled, errors.New("interrupted: partial reports written, marked incomplete")}
	}
	failed, unknown := 0, 0
	for _, o := range runs {
		switch {
		case o.err != nil || o.res == nil || o.res.Verdict == model.Fail:
			failed++
		case o.res.Verdict != model.Pass:
			unknown++
		}
	}
	if failed+unknown > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d of %d scenarios did not pass: %d failed, %d unknown", failed+unknown, len(runs), failed, unknown)}
	}
	return nil
}

func writeJUnit(path string, runs []outcome) error {
	var results []*model.Result
	for _, o := range runs {
		if o.res != nil {
			results = append(results, o.res)
		}
	}
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing JUnit: %w", err)
	}
	if err := reports.JUnit(fh, results); err != nil {
		fh.Close()
		return fmt.Errorf("writing JUnit: %w", err)
	}
	return fh.Close()
}

const suiteUsage = `Usage: chaos suite [flags]

Runs every built-in scenario (see 'chaos list'), several at once, each with
its own Redis and proxies; writes each report and a suite summary:
<out>/index.html, <out>/summary.md and <out>/junit.xml.

Examples:
  chaos suite
  chaos suite --time-scale 0.2 --parallel 4 --out /tmp/suite
  chaos suite --junit junit.xml --quiet

Flags:
`

func cmdSuite(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, rest, _, err := parseRunFlags("suite", suiteUsage, 4, args, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("suite takes no arguments (got %q); use 'chaos run' for chosen scenarios", rest)
	}
	var scs []model.Scenario
	for _, e := range scenarios.Builtin() {
		scs = append(scs, e.Scenario)
	}
	start := time.Now()
	runs, err := runAll(ctx, scs, f, stdout, stderr)
	if err != nil {
		return err
	}
	var suite []reports.SuiteRun
	for _, o := range runs {
		sr := reports.SuiteRun{Result: o.res, Err: o.err, Name: o.sc.Name}
		if o.dir != "" {
			sr.Dir, _ = filepath.Rel(f.out, o.dir)
		}
		suite = append(suite, sr)
	}
	if err := reports.WriteSuite(f.out, suite); err != nil {
		return fmt.Errorf("writing the suite summary: %w", err)
	}
	if f.junit != "" {
		if err := writeJUnit(f.junit, runs); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "suite: %d scenarios in %v; summary: %s\n", len(runs), time.Since(start).Round(time.Second), filepath.Join(f.out, "index.html"))
	return verdict(ctx, runs)
}
