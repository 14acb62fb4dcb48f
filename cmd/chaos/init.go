package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sweep"
)

const initUsage = `Usage: chaos init DIR [--ttl D --wait D --read-timeout D ...] [--max-gap L ...]
       chaos init DIR --from-advice advice.json

Writes a starter suite for your timings into DIR, one scenario per failure
mode an elector meets: a leader crash, a graceful stop, each partition mode
(blackhole, refuse, reset, requests or replies only), latency, a pause and a
Redis restart, on bare electors with the fault on the leader. Each expects
your limits (--max-gap, --max-overlap, --max-stale: a duration or an
expression such as 'ttl + wait') and, where you give none, the worst case
the bound calculator predicts for the timings. 'chaos suite DIR' is then a
CI gate: it fails when a change of timings, client options or elector breaks
a limit. It prints the predicted worst cases, and warns where one exceeds
your limit (that scenario will fail: run 'chaos advise').

--from-advice takes the advice.json 'chaos advise --out DIR' writes: its
recommended timings, its constraints as limits for the failure modes of its
envelope (the others expect the prediction), and its latency and pause.

Examples:
  chaos init ./chaos-scenarios
  chaos init ./chaos-scenarios --ttl 10s --wait 2s --read-timeout 1s --max-retries -1 --max-gap 15s
  chaos advise --max-gap 12s --max-overlap 0s --out advice && chaos init ./chaos-scenarios --from-advice advice/advice.json

Flags:
`

// timingFlags are the elector's timings and go-redis options as flags, for
// the commands that take them (bounds, init). Only the flags given change a
// scenario's parameters.
type timingFlags struct {
	fs                           *flag.FlagSet
	ttl, wait, opTimeout, readTO time.Duration
	safeMargin                   time.Duration
	maxRetries                   int
	jitter                       int
	ctxTimeouts, safe            bool
}

func newTimingFlags(fs *flag.FlagSet) *timingFlags {
	t := &timingFlags{fs: fs, jitter: -1}
	fs.DurationVar(&t.ttl, "ttl", 0, "lease TTL (default 5s)")
	fs.DurationVar(&t.wait, "wait", 0, "follower retry interval (default 6s)")
	fs.Var((*optInt)(&t.jitter), "jitter", "renewal jitter in `ms` (default 5)")
	fs.DurationVar(&t.opTimeout, "op-timeout", 0, "per-call context deadline (default none)")
	fs.DurationVar(&t.readTO, "read-timeout", 0, "go-redis ReadTimeout (default 5s)")
	fs.IntVar(&t.maxRetries, "max-retries", 0, "go-redis MaxRetries (default 3; -1 none)")
	fs.BoolVar(&t.ctxTimeouts, "context-timeouts", false, "go-redis ContextTimeoutEnabled (makes --op-timeout count)")
	fs.BoolVar(&t.safe, "safe", false, "the elector's safe mode (lease guard and fenced chores)")
	fs.DurationVar(&t.safeMargin, "safe-margin", 0, "safe mode's guard margin (default TTL/100 + 2ms)")
	return t
}

// given says whether any timing flag was set.
func (t *timingFlags) given() bool {
	any := false
	t.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "ttl", "wait", "jitter", "op-timeout", "read-timeout", "max-retries", "context-timeouts", "safe", "safe-margin":
			any = true
		}
	})
	return any
}

// apply overrides p with the flags given.
func (t *timingFlags) apply(p model.Params) model.Params {
	t.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "ttl":
			p.TTL = t.ttl
		case "wait":
			p.Wait = t.wait
		case "safe":
			p.Safe = t.safe
		case "safe-margin":
			p.SafeMargin = t.safeMargin
		case "jitter":
			p.JitterMS = t.jitter
			if t.jitter == 0 {
				p.JitterMS = -1 // explicit: none
			}
		case "op-timeout":
			p.OpTimeout = t.opTimeout
		case "read-timeout":
			p.Client.ReadTimeout = t.readTO
		case "max-retries":
			p.Client.MaxRetries = t.maxRetries
		case "context-timeouts":
			p.Client.ContextTimeoutEnabled = t.ctxTimeouts
		}
	})
	return p
}

func cmdInit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timing := newTimingFlags(fs)
	var (
		fromAdvice, maxGap, maxOverlap, maxStale string
		latency, pause                           time.Duration
		instances                                int
		force                                    bool
	)
	fs.StringVar(&fromAdvice, "from-advice", "", "the advice.json of 'chaos advise --out': its timings, limits and envelope")
	fs.StringVar(&maxGap, "max-gap", "", "the longest leaderless interval allowed, a duration or an expression (default: the prediction)")
	fs.StringVar(&maxOverlap, "max-overlap", "", "the longest believed split brain allowed (default: the prediction)")
	fs.StringVar(&maxStale, "max-stale", "", "the longest stale leadership allowed (default: the prediction)")
	fs.DurationVar(&latency, "latency", 0, "one-way latency of the latency scenario (default min(200ms, TTL/10))")
	fs.DurationVar(&pause, "pause", 0, "how long the pause scenario freezes the leader (default 1s)")
	fs.IntVar(&instances, "instances", 0, "electors per scenario (default 3)")
	fs.BoolVar(&force, "force", false, "overwrite scenario files that exist")
	fs.Usage = func() { fmt.Fprint(stderr, initUsage); fs.PrintDefaults() }
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return flagErr(err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return usageErr("init: name one directory to write the suite into")
	}
	dir := pos[0]

	var o scenarios.StarterOptions
	if fromAdvice != "" {
		if timing.given() {
			return usageErr("init: --from-advice sets the timings; drop the timing flags (or drop --from-advice)")
		}
		adv, err := sweep.ReadAdvice(fromAdvice)
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("init: %w", err)}
		}
		o = adv.Starter()
		if !adv.Feasible {
			fmt.Fprintln(stderr, "chaos init: the advice found no timings that meet its constraints; the suite uses its closest miss and will fail until the constraints or the envelope change (see its advice.md)")
		}
	} else {
		o.Params = timing.apply(model.Params{})
	}
	limits := map[model.Metric]string{model.MetricMaxGap: maxGap, model.MetricMaxOverlap: maxOverlap, model.MetricStaleLeadership: maxStale}
	for m, l := range limits {
		if l == "" {
			continue
		}
		if o.Limits == nil {
			o.Limits = map[model.Metric]string{}
		}
		o.Limits[m] = l
	}
	if latency != 0 {
		o.Latency = latency
	}
	if pause != 0 {
		o.Pause = pause
	}
	if instances != 0 {
		o.Instances = instances
	}
	suite, err := scenarios.Starter(o)
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("init: %w", err)}
	}

	// Each fault where a short search finds its worst case for these
	// timings: at a fixed phase a starter suite missed the headline split
	// brain (TTL 5 s, Wait 6 s, read timeout 5 s: 3.07 s of overlap with
	// the fault at the TTL, 5.55 s at its worst phase).
	// The same search checks the tool's own bounds for each scenario.
	notes := map[string]string{}
	var searches []*sweep.ExploreResult
	for i, sc := range suite {
		placed, note, res, err := sweep.WorstPhase(ctx, sc, 0)
		if err != nil {
			return fmt.Errorf("init: %w", err)
		}
		suite[i], notes[sc.Name] = placed, note
		if res != nil {
			searches = append(searches, res)
		}
	}

	var exists *scenarios.ExistsError
	var invalid *scenarios.Error
	var fsErr *os.PathError
	switch err := scenarios.WriteFiles(dir, suite, notes, force); {
	case errors.As(err, &exists):
		return &exitError{exitUsage, fmt.Errorf("init: %w (--force overwrites it)", err)}
	case errors.As(err, &invalid):
		return &exitError{exitUsage, fmt.Errorf("init: %w", err)}
	case errors.As(err, &fsErr):
		return &exitError{exitEnv, fmt.Errorf("init: %w", err)}
	case err != nil:
		return fmt.Errorf("init: %w", err)
	}
	if err := reports.WriteStarter(stdout, dir, suite, o.Params); err != nil {
		return err
	}
	return selfCheck(searches, filepath.Join(dir, "search"), stdout, stderr)
}

// selfCheck says what the searches of a generated suite found against the
// tool's own bounds: a schedule that beat a formula is a finding, written
// as a scenario file under dir (outside the suite's own files).
func selfCheck(searches []*sweep.ExploreResult, dir string, stdout, stderr io.Writer) error {
	if len(searches) == 0 {
		return nil
	}
	runs, found := 0, 0
	for _, res := range searches {
		runs += res.Runs
		v, _, err := writeSearchFindings(res, dir, stdout, stderr)
		if err != nil {
			return err
		}
		found += len(v)
	}
	if found == 0 {
		fmt.Fprintf(stdout, "\nself-check: a search of each scenario's schedule (chaos explore, %d runs in all on the virtual backend) stayed within every predicted bound\n", runs)
		return nil
	}
	fmt.Fprintf(stdout, "\nself-check: the search beat %d predicted bound(s) (above): a model error, not your timings; their checks may fail where the formula is wrong\n", found)
	return nil
}
