package main

import (
	"github.com/leaselab/leaselab/model/analysis"

	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/term"

	"github.com/leaselab/leaselab/internal/userfile"
	"github.com/leaselab/leaselab/observe"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/env"
)

const observeUsage = `Usage: chaos observe (--redis-addr ADDR | --redis-url URL | --sentinel ADDRS --master NAME) (--group G | --key KEY) [flags]
       chaos observe --from observed.jsonl [flags]

Watches a live fleet whose instances publish their leadership transitions
(package publish: election.Opts.OnTransition = publisher.Observe) and the
lease key itself, for --for D or until Ctrl-C, and writes the same failover
report as chaos run (report.html with the timeline plot, report.md,
result.json, junit.xml) plus the recording (observed.jsonl), from which
--from rebuilds the same report offline.

The watch writes nothing to the Redis it watches. The lease key is followed
by keyspace notifications where the server already sends them (read with
CONFIG GET), else by polling GET and PTTL every --interval; the lane and its
resolution are printed and reported. --enable-notifications turns them on
where they are off: it adds the missing classes to notify-keyspace-events
and leaves them on at the end (another client may rely on them by then). Every time is an estimate on Redis's clock and every
window is reported with its uncertainty.

A failover moves the watch to the new primary: named by the Sentinels
(--sentinel, --master: at once on +switch-master), or, without them, found
when the node watched stops answering or is no longer a primary, among the
replicas its ROLE listed and --nodes. The move, when it happened, and what
the watch may have missed in it are printed and reported.

--max-overlap, --max-gap and --max-stale make it a check: exit 1 when a
window is longer than its limit, or when the limit lies within the window's
uncertainty (unknown).

Examples:
  chaos observe --redis-addr 127.0.0.1:6379 --group my-app --for 10m --out gameday
  chaos observe --redis-url rediss://default@redis.internal:6380/0 --group my-app --max-overlap 0s
  chaos observe --sentinel 10.0.0.5:26379,10.0.0.6:26379 --master mymaster --group my-app --for 30m
  chaos observe --from gameday/observed.jsonl --out gameday-again

Flags:
`

func cmdObserve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("observe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	redisAddr := fs.String("redis-addr", "", "the Redis that serves the lease, `ADDR` (default $LEASELAB_REDIS_ADDR; password from $LEASELAB_REDIS_PASSWORD)")
	redisURL := fs.String("redis-url", "", "the Redis as a `URL`: redis://[user:password@]host:port[/db], rediss:// for TLS (default $LEASELAB_REDIS_URL)")
	group := fs.String("group", "", "the lease's `NAME` (election.Opts.Key, the runner's Group)")
	key := fs.String("key", "", "the lease's Redis `KEY` itself (taskrunner:leader:...), instead of --group")
	runFor := fs.Duration("for", 0, "watch for `D` (default: until Ctrl-C)")
	out := fs.String("out", "", "write the report and the recording to `DIR` (default chaos-reports/observe-<group>/<time>)")
	interval := fs.Duration("interval", observe.DefaultInterval, "poll the key every `D` (the poll lane; a backstop on the notification lane)")
	poll := fs.Bool("poll", false, "poll even where the server sends keyspace notifications")
	enable := fs.Bool("enable-notifications", false, "where keyspace notifications are off, turn them on: add the classes the watch needs to notify-keyspace-events (CONFIG SET; none removed, and left on at the end, since another client may rely on them by then). Default: write nothing, poll")
	nodes := fs.String("nodes", "", "other data nodes `ADDR,ADDR` to look for the primary on after a failover (the primary's replicas in ROLE are looked at without it)")
	sentinel := fs.String("sentinel", "", "follow the primary the Sentinels at `ADDR,ADDR` name (password from $LEASELAB_SENTINEL_PASSWORD); --redis-url/--redis-addr then only give the data nodes' auth")
	master := fs.String("master", "", "the `NAME` the Sentinels monitor the primary under (with --sentinel)")
	from := fs.String("from", "", "rebuild the report from a recording `FILE` (observed.jsonl) instead of watching")
	var maxOverlap, maxGap, maxStale time.Duration
	fs.DurationVar(&maxOverlap, "max-overlap", 0, "fail when two instances led at once for longer than `D` (0s: any overlap fails)")
	fs.DurationVar(&maxGap, "max-gap", 0, "fail when no instance led for longer than `D`")
	fs.DurationVar(&maxStale, "max-stale", 0, "fail when an instance believed it led while Redis held another value for longer than `D`")
	fs.Usage = func() { fmt.Fprint(stderr, observeUsage); fs.PrintDefaults() }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("observe: unexpected argument %q", fs.Arg(0))
	}
	// A limit given, even 0s, is a check; one not given is none.
	var lim observe.Limits
	var limitFlags []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "max-overlap":
			lim.MaxOverlap = &maxOverlap
		case "max-gap":
			lim.MaxGap = &maxGap
		case "max-stale":
			lim.MaxStale = &maxStale
		default:
			return
		}
		limitFlags = append(limitFlags, "--"+f.Name+" "+f.Value.String())
	})

	var rec *observe.Recording
	var dir string
	if *from != "" {
		if *redisAddr != "" || *redisURL != "" || *group != "" || *key != "" || *runFor != 0 || *nodes != "" || *sentinel != "" || *master != "" || *enable {
			return usageErr("observe: --from rebuilds from a recording: drop --redis-addr/--redis-url/--sentinel/--master/--nodes/--group/--key/--for/--enable-notifications")
		}
		// Opened here, not by observe.ReadRecordingFile, so that a FIFO or
		// a device is refused at once (userfile.Open); a recording is not
		// size-limited: it grows with the watch.
		f, err := userfile.Open(*from)
		if err != nil {
			return usageErr("observe: %v", err)
		}
		rec, err = observe.ReadRecording(ctx, f, *from)
		f.Close()
		if err != nil {
			if ctx.Err() != nil {
				return &exitError{exitCanceled, errors.New("interrupted while reading the recording")}
			}
			return usageErr("observe: %v", err)
		}
		dir = *out
		if dir == "" {
			dir = filepath.Dir(*from)
		}
	} else {
		if (*group == "") == (*key == "") {
			return usageErr("observe: give --group or --key (one of them)")
		}
		if (*sentinel == "") != (*master == "") {
			return usageErr("observe: --sentinel and --master go together")
		}
		if *sentinel != "" && *nodes != "" {
			return usageErr("observe: --nodes is for a Redis without Sentinel: the Sentinels name the primary")
		}
		addr, auth, err := observeRedis(*redisAddr, *redisURL, *sentinel != "")
		if err != nil {
			return err
		}
		dir = *out
		if dir == "" {
			dir = observe.DefaultDir(*group, *key, time.Now())
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return &exitError{exitEnv, fmt.Errorf("observe: %w", err)}
		}
		nodeOpts := auth.Apply(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
		o := observe.Options{DB: auth.DB, Group: *group, Key: *key, Interval: *interval, Poll: *poll,
			EnableNotifications: *enable, Addrs: splitList(*nodes)}
		if *sentinel != "" {
			o.Sentinel = &observe.SentinelOptions{Addrs: splitList(*sentinel), Master: *master,
				Password: os.Getenv("LEASELAB_SENTINEL_PASSWORD"), NodeOptions: nodeOpts}
		} else {
			o.Redis, o.Source = redis.NewClient(nodeOpts), "redis "+addr
		}
		show := &observe.Show{Out: stdout, Status: stderr}
		if file, ok := stderr.(*os.File); ok {
			show.Live = term.IsTerminal(int(file.Fd()))
		}
		if rec, err = observe.Record(ctx, o, filepath.Join(dir, analysis.ObservedRecording), *runFor, show); err != nil {
			return &exitError{exitEnv, err}
		}
	}
	bctx := ctx
	if *from == "" {
		// Ctrl-C ended the watch; another ends the build of its report
		// (the recording is complete: --from builds it later).
		var stop context.CancelFunc
		bctx, stop = signal.NotifyContext(context.WithoutCancel(ctx), os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	res, err := observe.Build(bctx, rec, lim)
	if err != nil && bctx.Err() != nil {
		return &exitError{exitCanceled, fmt.Errorf("interrupted while building the report (chaos observe --from %s builds it)",
			filepath.Join(dir, analysis.ObservedRecording))}
	}
	if err != nil {
		return usageErr("observe: %v", err)
	}
	cmd := scenarios.Program() + " observe --from " + filepath.Join(dir, analysis.ObservedRecording)
	if *from != "" {
		cmd = scenarios.Program() + " observe --from " + *from
	}
	for _, f := range limitFlags {
		cmd += " " + f
	}
	// Kept in result.json: chaos report prints it again.
	res.Observed.Command = cmd
	if _, err := reports.WriteRun(bctx, dir, res, reports.Options{Command: cmd}); err != nil {
		if bctx.Err() != nil {
			return &exitError{exitCanceled, fmt.Errorf("interrupted while writing the report, its files removed (%s writes it)", cmd)}
		}
		return fmt.Errorf("observe: writing the reports: %w", err)
	}
	observe.Headline(stdout, res)
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(dir, reports.FileHTML))
	if err := observe.Verdict(res); err != nil {
		return &exitError{exitFailed, err}
	}
	if ctx.Err() != nil && *runFor == 0 && *from == "" {
		return nil // Ctrl-C is how an open-ended watch ends
	}
	return nil
}

// observeRedis is the Redis given by flags or their variables, as chaos
// run reads them. With Sentinels the address is not needed.
func observeRedis(addr, url string, sentinel bool) (string, env.Auth, error) {
	a, auth, err := env.Choice{RedisAddr: addr, RedisURL: url, Getenv: os.Getenv, Names: flagNames}.Redis()
	if err != nil {
		return "", env.Auth{}, usageErr("%v", err)
	}
	if a == "" && !sentinel {
		return "", env.Auth{}, usageErr("observe: give --redis-addr or --redis-url (the Redis that serves the lease)")
	}
	return a, auth, nil
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
