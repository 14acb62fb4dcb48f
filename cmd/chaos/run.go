package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model/verdict"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/reports/live"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/backends"
	"github.com/leaselab/leaselab/sim/batch"
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
	redisURL      string
	redisServer   string
	toxiproxyAddr string
	proxyPorts    string
	proxyUpstream string
	env           string
	junit         string
	parallel      int
	verbose       bool
	checkBounds   bool
	quiet         bool
	mdInline      bool
	mdImageBase   string
	backend       string
	agent         string
	runs          int
	publish       bool
	// set are the flags given on the command line.
	set map[string]bool
}

func (f *runFlags) register(fs *flag.FlagSet, parallel int, withRuns bool) {
	fs.StringVar(&f.backend, "backend", backends.Real, "what runs the scenarios, `B`: real (redis-server through Toxiproxy, wall-clock time) or virtual (the deterministic discrete-event model around the production election.Machine: a run takes milliseconds; elector mode only), or process (every instance an agent process: real SIGKILL, SIGTERM, SIGSTOP; see --agent)")
	fs.StringVar(&f.agent, "agent", "", "with --backend process: the agent every instance runs, `\"CMD ARGS\"` split at spaces (default: this program's 'chaos agent', leaselab's own elector or runner; docs/agents.md)")
	if withRuns {
		fs.IntVar(&f.runs, "runs", 0, "with --backend virtual: run each scenario `N` times with seeds seed, seed+1, …, seed+N-1 and write their distribution (min/p50/p90/p99/max, worst seeds, histograms) instead of one report")
	}
	fs.StringVar(&f.out, "out", "./chaos-reports", "directory for reports: `DIR`/<scenario>/<run-id>/, with a 'latest' link")
	fs.Int64Var(&f.seed, "seed", 0, "override every scenario's seed (0: keep the scenario's)")
	fs.Float64Var(&f.timeScale, "time-scale", 0, "multiply every duration of the run by `F` (0.2 runs 5× faster; 0: keep the scenario's)")
	fs.StringVar(&f.redisAddr, "redis-addr", "", "use the Redis at `ADDR` instead of spawning redis-server (default $LEASELAB_REDIS_ADDR; its password from $LEASELAB_REDIS_PASSWORD)")
	fs.StringVar(&f.redisURL, "redis-url", "", "use the Redis at `URL`, go-redis's form: redis://[user:password@]host:port[/db], rediss:// for TLS (default $LEASELAB_REDIS_URL; the password is never printed, prefer the variable to keep it out of ps)")
	fs.StringVar(&f.redisServer, "redis-server", "", "the redis-server binary to spawn (default: found on PATH)")
	fs.StringVar(&f.toxiproxyAddr, "toxiproxy-addr", "", "use the Toxiproxy API at `ADDR` instead of an in-process one")
	fs.StringVar(&f.proxyPorts, "proxy-ports", "", "with --toxiproxy-addr of a Toxiproxy in a container: have the proxies listen on `RANGE` (e.g. 21000-21031), published on the host at the same numbers (docker-compose.yml does)")
	fs.StringVar(&f.proxyUpstream, "proxy-upstream", "", "Redis as Toxiproxy reaches it, `ADDR` (docker-compose.yml: redis:6379; default: --redis-addr)")
	fs.StringVar(&f.env, "env", "embedded", "where Redis and Toxiproxy run, `MODE`: embedded (spawned redis-server, in-process Toxiproxy, or the --redis-addr/--toxiproxy-addr ones) or container (testcontainers-go; images from $LEASELAB_REDIS_IMAGE and $LEASELAB_TOXIPROXY_IMAGE)")
	fs.StringVar(&f.junit, "junit", "", "also write a JUnit XML report to `FILE`")
	fs.IntVar(&f.parallel, "parallel", parallel, "run up to `N` scenarios at once, started in the order given (each has its own Redis and proxies); 0: every scenario at once, up to 16 per core")
	fs.StringVar(&f.safe, "safe", "", "the elector's safe mode for every scenario, `on` or off (lease guard and fenced chores; default: what each scenario says), to measure the same faults in both modes")
	fs.BoolVar(&f.strictClaims, "strict-claims", false, "fail a run in which a spec claim it exercised did not hold (split brain > TTL, gap > TTL + Wait), as `expect: {claims: held}` does; by default such a claim is a finding beside the verdict")
	fs.BoolVar(&f.mdInline, "md-inline", false, "put the timeline plot inside report.md (a data URI) instead of linking timeline.png beside it, so the text can be pasted anywhere that shows data URIs (not GitHub)")
	fs.StringVar(&f.mdImageBase, "md-image-base", "", "the `URL` where --out is published (a CI artifact link): report.md links the plot as URL/<scenario>/<run-id>/timeline.png, which survives being pasted into a PR")
	fs.BoolVar(&f.publish, "publish", false, "the instances publish their transitions as production does (package publish), to the group named after the scenario, so that `chaos observe --group NAME` can watch the run from outside (real and process backends: an agent is asked to with LEASELAB_PUBLISH=1, which chaos agent does; give --redis-addr for a Redis both can reach, or watch the spawned one it prints)")
	fs.BoolVar(&f.checkBounds, "check-bounds", false, "check each scenario's predicted bounds with a short search of its schedule (chaos explore, 1,000 runs on the virtual backend, ≤ 2 s): a check whose bound the search beat is unknown, with the schedule written under its report's search/")
	fs.BoolVar(&f.verbose, "v", false, "print every timeline event as it happens")
	fs.BoolVar(&f.quiet, "quiet", false, "print only the final verdicts")
}

// flagNames are how env.Choice's and backends.Request's errors name their
// fields: as the flags that set them.
var flagNames = map[string]string{"Env": "--env", "RedisURL": "--redis-url", "RedisAddr": "--redis-addr", "RedisServer": "--redis-server",
	"ToxiproxyAddr": "--toxiproxy-addr", "ProxyPorts": "--proxy-ports", "ProxyUpstream": "--proxy-upstream",
	"Name": "--backend", "Agent": "--agent", "Runs": "--runs", "Seed": "--seed"}

// envChoice is where the flags (and their variables) say Redis and
// Toxiproxy come from.
func (f *runFlags) envChoice(stderr io.Writer) env.Choice {
	c := env.Choice{Env: f.env, RedisURL: f.redisURL, RedisAddr: f.redisAddr, RedisServer: f.redisServer,
		ToxiproxyAddr: f.toxiproxyAddr, ProxyPorts: f.proxyPorts, ProxyUpstream: f.proxyUpstream,
		Getenv: os.Getenv, Names: flagNames,
		Fallback: func() {
			fmt.Fprintln(stderr, "chaos: no redis-server on PATH; a Docker Engine answers, so Redis and Toxiproxy run as containers (--env container)")
		}}
	if f.verbose {
		c.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, "testcontainers: "+format+"\n", args...) }
	}
	return c
}

// provider is where Redis and Toxiproxy come from (env.Choice.Provider); a
// choice it refuses is a usage error.
func (f *runFlags) provider(ctx context.Context, stderr io.Writer) (env.Provider, error) {
	c := f.envChoice(stderr)
	if err := c.Validate(); err != nil {
		return nil, usageErr("%v", err)
	}
	return c.Provider(ctx)
}

const runUsage = `Usage: chaos run NAME|FILE... [flags]

Runs each scenario — a built-in name (see 'chaos list') or a YAML file —
against a redis-server the harness spawns and an in-process Toxiproxy (or the
ones given by --redis-addr/--toxiproxy-addr), and writes its report to
<out>/<scenario>/<run-id>/ (report.html, report.md, result.json, events.jsonl,
timeline.svg, timeline.png, junit.xml) with a 'latest' link beside it.

With --backend virtual the scenario runs in virtual time against a model of
Redis, the network and go-redis around the production election.Machine (a
run takes milliseconds; elector mode only). With --runs N it then runs seeds
seed, seed+1, …, seed+N-1 on every core and writes, instead of one report,
<out>/<scenario>/runs-<first>-<last>/: distribution.json, distribution.md,
distribution.html, histograms.svg/.png and worst/ (the worst run's report),
with a 'latest-runs' link. It prints min/p50/p90/p99/max per metric and the
commands that replay each metric's worst seed on either backend.

Examples:
  chaos run leader-crash
  chaos run partition-blackhole --time-scale 0.2 --seed 7
  chaos run ./my-scenario.yaml --out /tmp/reports --junit junit.xml
  chaos run leader-crash pause --parallel 2 --redis-addr 127.0.0.1:6379
  chaos run leader-crash --env container
  chaos run partition-blackhole --backend virtual --seed 7
  chaos run partition-blackhole --backend virtual --runs 10000
  chaos run my.yaml --backend virtual --runs 500 --safe on
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
	f.register(fs, parallel, name == "run")
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return f, nil, fs, flagErr(err)
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	return f, pos, fs, f.check()
}

// check refuses flag combinations that cannot mean anything
// (backends.Request.Check).
func (f *runFlags) check() error {
	if f.mdInline && f.mdImageBase != "" {
		return usageErr("give --md-inline or --md-image-base, not both")
	}
	given := map[string]bool{}
	for field, flag := range flagNames {
		given[field] = f.set[strings.TrimPrefix(flag, "--")]
	}
	if err := (backends.Request{Name: f.backend, Given: given, Runs: f.runs, Names: flagNames}).Check(); err != nil {
		return usageErr("%v", err)
	}
	return nil
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
			return &exitError{exitUsage, scenarios.Capped(err)}
		}
		// Asked for by name: a scenario a computing backend (the
		// virtual one) cannot run is a usage error, before anything runs;
		// its refusal needs no environment.
		if b := backends.Named(f.backend); sim.Computes(b) {
			if err := b.Refuses(sc); err != nil {
				return usageErr("%s: %v", n, err)
			}
		}
		scs = append(scs, sc)
	}
	if f.runs > 0 {
		return runDistributions(ctx, scs, f, stdout)
	}
	runs, _, err := runAll(ctx, scs, f, stdout, stderr)
	if err != nil {
		return err
	}
	if f.junit != "" {
		if err := reports.WriteJUnitRuns(f.junit, batch.SuiteRuns(runs, "")); err != nil {
			return err
		}
	}
	return runVerdict(ctx, runs, stdout)
}

// runVerdict is verdict for chaos run, where every scenario was named to
// be run: one the backend refused (not run) fails the command, exit 1, as
// a lone refused one does; the suite's refusals (chaos suite: expected of
// a whole suite on a backend) do not. With more than one scenario a last
// line counts them.
func runVerdict(ctx context.Context, runs []batch.Outcome, stdout io.Writer) error {
	err := exitVerdict(ctx, runs)
	var refused []string
	for _, o := range runs {
		if o.Refused != nil {
			refused = append(refused, batch.Named(o.Scenario).Name)
		}
	}
	if len(runs) > 1 {
		c := batch.Count(runs)
		fmt.Fprintf(stdout, "run: %d scenarios: %d passed, %d failed, %d unknown, %d refused", len(runs), c.Passed, c.Failed, c.Unknown, c.Refused)
		if len(refused) > 0 {
			fmt.Fprintf(stdout, " (%s: not run)", strings.Join(refused, ", "))
		}
		fmt.Fprintln(stdout)
	}
	if len(refused) == 0 {
		return err
	}
	why := fmt.Sprintf("%d of %d scenarios refused by the backend, not run: %s", len(refused), len(runs), strings.Join(refused, ", "))
	var ee *exitError
	switch {
	case err == nil:
		return &exitError{exitFailed, errors.New(why)}
	case errors.As(err, &ee) && ee.code == exitFailed:
		// The last line names the refusals beside what did not pass.
		return &exitError{exitFailed, fmt.Errorf("%w; %s", ee.err, why)}
	}
	return err
}

// parseInterleaved parses flags that may come after positional arguments
// ("chaos run leader-crash --seed 3"), which the flag package alone stops at.
// Its errors are parseFlags'.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
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

// parseFlags is fs.Parse with the CLI's errors: --help prints the
// command's usage (fs.Usage) and is exit 0; a bad flag is one line saying
// what is wrong (the flag meant, for a typo; the unit a duration needs) and
// how to get help, not the usage after it.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
		return &exitError{exitOK, errors.New("")}
	}
	return usageErr("%s (run 'chaos %s --help' for its flags)", explainFlagErr(fs, err), fs.Name())
}

// explainFlagErr rewords the flag package's error: the flag meant by an
// unknown one, and for a duration given without a unit ("parse error"),
// that it needs one.
func explainFlagErr(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		var known []string
		fs.VisitAll(func(f *flag.Flag) { known = append(known, f.Name) })
		if s := scenarios.Suggest(name, known); s != "" {
			return fmt.Sprintf("unknown flag --%s; did you mean --%s?", name, s)
		}
		return fmt.Sprintf("unknown flag --%s", name)
	}
	// invalid value "5" for flag -ttl: parse error
	var value, name string
	if _, scanErr := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &name); scanErr == nil {
		name = strings.TrimSuffix(name, ":")
		if f := fs.Lookup(name); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isDur := g.Get().(time.Duration); isDur {
					if _, numErr := strconv.ParseFloat(value, 64); numErr == nil {
						return fmt.Sprintf("--%s %s: a duration needs a unit, e.g. %ss", name, value, value)
					}
					return fmt.Sprintf("--%s %q: not a duration (e.g. 5s, 500ms, 1m30s)", name, value)
				}
			}
		}
	}
	return msg
}

// flagErr is the error of a failed parse: parseFlags' own.
func flagErr(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return err
	}
	if errors.Is(err, flag.ErrHelp) {
		return &exitError{exitOK, errors.New("")}
	}
	return usageErr("%v", err)
}

// testSize, set by tests, makes the live view a live area for a terminal of
// that size.
var testSize func() (int, int)

// runAll runs the scenarios on the backend f names (batch.Run: up to
// f.parallel at once, each report written as it ends) and returns it.
func runAll(ctx context.Context, scs []model.Scenario, f runFlags, stdout, stderr io.Writer) ([]batch.Outcome, sim.Backend, error) {
	if f.parallel < 0 {
		return nil, nil, usageErr("--parallel must be at least 1 (0: every scenario at once)")
	}
	if !f.set["backend"] {
		// Without --backend, the scenarios' own backend: if they agree.
		if b := model.SharedBackend(scs); b != "" {
			f.backend = b
			if err := f.check(); err != nil {
				return nil, nil, err
			}
		}
	}
	backend, err := f.newBackend(ctx, stderr)
	if err != nil {
		return nil, nil, err
	}
	if err := f.override(scs); err != nil {
		return nil, nil, err
	}
	size := testSize
	if size == nil {
		size = terminalSize(stdout)
	}
	// An environment error ends the command with one message.
	o := batch.Options{Out: f.out, MarkdownInline: f.mdInline, MarkdownImageBase: f.mdImageBase, Parallel: f.parallel,
		View: live.Options{Out: stdout, Size: size, Verbose: f.verbose, Quiet: f.quiet, Unprinted: func(err error) bool { return errors.Is(err, env.ErrEnvironment) }}}
	if f.checkBounds {
		o.Amend = func(sc model.Scenario, res *verdict.Result, dir string) { checkRunBounds(ctx, sc, res, dir, stderr) }
	}
	out := batch.Run(ctx, backend, scs, o)
	// One precise message for a broken environment, however many runs
	// met it; an interrupt during setup is an interrupt, not a broken
	// environment.
	for _, o := range out {
		if o.Result == nil && o.Err != nil && errors.Is(o.Err, env.ErrEnvironment) && ctx.Err() == nil {
			return out, backend, &exitError{exitEnv, f.envChoice(stderr).Explain(o.Err)}
		}
	}
	return out, backend, nil
}

// newBackend is the backend f names (backends.New), configured from the
// flags. A backend that computes (the virtual one) has no environment: no
// provider is made.
func (f *runFlags) newBackend(ctx context.Context, stderr io.Writer) (sim.Backend, error) {
	if b := backends.Named(f.backend); sim.Computes(b) {
		if f.publish {
			return nil, usageErr("--publish needs the real backend: the %s one has no Redis to publish to", b.Name())
		}
		return b, nil
	}
	provider, err := f.provider(ctx, stderr)
	if err != nil {
		return nil, err
	}
	c := backends.Config{Provider: provider, Publish: f.publish, OnPublish: func(group, addr string) {
		fmt.Fprintf(stderr, "%s: publishing transitions: chaos observe --redis-addr %s --group %s\n", group, addr, group)
	}}
	if f.backend == backends.Process {
		// The scenario's own agent, unless --agent replaces it. With
		// --publish each agent is asked to publish (LEASELAB_PUBLISH=1).
		if c.Agent, err = f.agentCommand(); err != nil {
			return nil, err
		}
		c.AgentWins, c.LogDir = f.set["agent"], filepath.Join(f.out, "agent-logs")
	}
	return backends.New(f.backend, c), nil
}

// override applies the flags that override every scenario (--seed,
// --time-scale, --strict-claims, --safe: model.Overrides) and validates the
// result.
func (f *runFlags) override(scs []model.Scenario) error {
	if len(scs) == 0 {
		return nil
	}
	o := model.Overrides{Seed: f.seed, StrictClaims: f.strictClaims}
	if f.set["time-scale"] {
		if err := checkTimeScale(f.timeScale); err != nil {
			return err
		}
		o.TimeScale = f.timeScale
	}
	switch f.safe {
	case "":
	case "on", "off":
		on := f.safe == "on"
		o.Safe = &on
	default:
		return usageErr("--safe %q: want on or off", f.safe)
	}
	if err := o.ApplyAll(scs); err != nil {
		return &exitError{exitUsage, scenarios.Capped(err)}
	}
	return nil
}

// checkTimeScale refuses a --time-scale that is not a finite factor in the
// model's range (NaN, Inf, 1e-300, 0 and 1000 included): a flag given 0
// would otherwise mean the scenario's own.
func checkTimeScale(k float64) error {
	if !model.ValidTimeScale(k) {
		return usageErr("--time-scale %v: want a factor from %v to %v (0.2 runs 5× faster)", k, model.MinTimeScale, model.MaxTimeScale)
	}
	return nil
}

// agentCommand is --agent split at spaces, or this program's `chaos agent`.
func (f *runFlags) agentCommand() ([]string, error) {
	if argv := strings.Fields(f.agent); len(argv) > 0 {
		return argv, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program for its 'chaos agent' (or give --agent): %w", err)
	}
	return []string{self, "agent"}, nil
}

// exitVerdict turns the outcomes into the exit code.
func exitVerdict(ctx context.Context, runs []batch.Outcome) error {
	if ctx.Err() != nil {
		return &exitError{exitCanceled, errors.New("interrupted: partial reports written, marked incomplete")}
	}
	if err := batch.Verdict(runs); err != nil {
		return &exitError{exitFailed, err}
	}
	return nil
}

const suiteUsage = `Usage: chaos suite [DIR|FILE|NAME...] [flags]

Runs a suite of scenarios — by default every built-in one (see 'chaos
list'); or the scenario files (*.yaml, *.yml) in DIR, the FILEs, or
built-ins by NAME, in the order given — all at once by default (each with
its own Redis and proxies, up to 16 per core; --parallel N for fewer).
Writes each report and a suite summary: <out>/index.html, <out>/summary.md
and <out>/junit.xml. The last lines give the counts and the findings: every
spec claim a run measured not held, per scenario.

A scenario the backend cannot run is refused: redis: replicated |
cluster when the run is given its own Redis (--redis-url, --redis-addr,
--env container), and with --backend process what the agent does not
declare (runner, safe, clock, cluster): listed as REFUSED with the reason
(a skipped JUnit testcase), not run, neither pass nor fail.
Interrupted (Ctrl-C), the scenarios not yet started are listed as NOT
STARTED (a skipped JUnit testcase) and the exit code is 130.

Examples:
  chaos suite
  chaos suite ./ci-scenarios/                # your own suite, same index and JUnit
  chaos suite ci/a.yaml ci/b.yaml leader-crash
  chaos suite --backend virtual
  chaos suite --time-scale 0.2 --parallel 4 --out /tmp/suite
  chaos suite --junit junit.xml --quiet

Flags:
`

func cmdSuite(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, rest, _, err := parseRunFlags("suite", suiteUsage, 0, args, stderr)
	if err != nil {
		return err
	}
	// Every invalid file is reported before anything runs.
	scs, err := scenarios.OpenSuite(rest)
	if err != nil {
		return &exitError{exitUsage, scenarios.Capped(err)}
	}
	start := time.Now()
	runs, backend, err := runAll(ctx, scs, f, stdout, stderr)
	if err != nil {
		return err
	}
	suite := batch.SuiteRuns(runs, f.out)
	if err := reports.WriteSuite(f.out, suite); err != nil {
		return fmt.Errorf("writing the suite summary: %w", err)
	}
	if f.junit != "" {
		if err := reports.WriteJUnitRuns(f.junit, batch.SuiteRuns(runs, "")); err != nil {
			return err
		}
	}
	batch.Summary(stdout, suite, backend, time.Since(start), filepath.Join(f.out, "index.html"))
	return exitVerdict(ctx, runs)
}
