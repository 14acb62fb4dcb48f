package sim

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/leaselab/leaselab/model"
)

// Suite runs many scenarios on one backend, as chaos suite and chaos run do:
// up to Parallel at once, started in the order given, each through Run. A Go
// test or another tool calls it the same way. Zero values mean the defaults
// named on each field.
type Suite struct {
	// Backend runs every scenario. Required.
	Backend Backend
	// Parallel is how many scenarios run at once. 0: DefaultParallel.
	Parallel int
	// Stagger separates the starts of the first wave (the first Parallel
	// scenarios): environments that all come up at once contend for the
	// CPU, which moves a real run's phase-dependent figures. 0:
	// DefaultStagger for a backend whose runs wait, none for one that
	// computes (it has no environment); negative: none.
	Stagger time.Duration
	// Start, if not nil, is called as each scenario starts, on the run's
	// goroutine, with its index; what it returns observes that run.
	Start func(i int, sc model.Scenario) RunObserver
	// NotStarted, if not nil, is called for each scenario still queued when
	// ctx is cancelled, in order, as the suite stops starting them.
	NotStarted func(i int, sc model.Scenario)
}

// PerCPU is how many scenarios a suite runs at once per core by default
// on a backend whose runs wait (DefaultParallel). Runs mostly wait on
// timers: measured on 2 cores (docs/cli.md, "Suites and parallelism"),
// the 25 built-ins on the real backend all at once took 37.6 s (12 at a
// time: 75.8 s; 4: 188 s) and 18.9 s of CPU, a quarter of the machine,
// with notification lateness ≤ 10.2 ms (≤ 11.2 ms at 4) and faults
// ≤ 21 ms late (≤ 29 ms at 4). 16 per core keeps the CPU near half the
// machine, the limit chosen from that measurement.
const PerCPU = 16

// DefaultStagger separates the starts of the first wave on a backend whose
// runs wait (Suite.Stagger). Measured (docs/cli.md, "Suites and
// parallelism"): 25 real environments coming up at once took 1.3–1.8 s
// each instead of ~50 ms, and the CPU contention spread the instances'
// start-up, which moved phase-dependent figures (leader-stop's gap
// 0.02–0.08 s instead of 5.74 s). 150 ms apart, setup stays ≤ 55 ms and
// the figures are those of 4 at a time; the suite takes 39 s instead of 38.
const DefaultStagger = 150 * time.Millisecond

// DefaultParallel is how many of n scenarios a suite runs at once on b by
// default: on a backend that computes (Computes), one per core; on one
// whose runs wait, PerCPU per core.
func DefaultParallel(b Backend, n int) int {
	if Computes(b) {
		return min(n, runtime.GOMAXPROCS(0))
	}
	return min(n, PerCPU*runtime.GOMAXPROCS(0))
}

// RunObserver watches one run of a suite. Nil fields observe nothing.
type RunObserver struct {
	// Event is Options.Observe for the run: each event as it is recorded.
	Event func(model.Event)
	// Done is called when the run ended (refused or not), on the run's
	// goroutine, before the suite counts it finished. It may add to r.Err
	// (a report it could not write, say).
	Done func(r *SuiteRun)
}

// SuiteRun is one scenario's outcome in a suite.
type SuiteRun struct {
	// Scenario is the scenario as given.
	Scenario model.Scenario
	// Result is what Run returned (nil when it could not start, was
	// refused, or never started).
	Result *verdict.Result
	// Err is Run's error (also a partial run's ctx error), or what Done
	// added; nil for a refusal.
	Err error
	// Refused is the backend's reason when it refused the scenario: nothing
	// ran, and the run is neither passed nor failed.
	Refused error
	// NotStarted: ctx was cancelled before this scenario started.
	NotStarted bool
}

// Run runs the scenarios and returns their outcomes, in the order given.
// Cancelling ctx interrupts the runs under way (their partial results are
// kept) and starts no more: those are marked NotStarted.
func (s Suite) Run(ctx context.Context, scs []model.Scenario) []SuiteRun {
	parallel := s.Parallel
	if parallel <= 0 {
		parallel = max(DefaultParallel(s.Backend, len(scs)), 1)
	}
	stagger := s.Stagger
	if stagger == 0 && !Computes(s.Backend) {
		stagger = DefaultStagger
	}
	out := make([]SuiteRun, len(scs))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, sc := range scs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			for j := i; j < len(scs); j++ {
				out[j] = SuiteRun{Scenario: scs[j], NotStarted: true, Err: ctx.Err()}
				if s.NotStarted != nil {
					s.NotStarted(j, scs[j])
				}
			}
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = s.runOne(ctx, i, sc)
		}()
		if stagger > 0 && i < len(scs)-1 && i < parallel-1 {
			// The first wave one by one (see Stagger).
			t := time.NewTimer(stagger)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
	}
	wg.Wait()
	return out
}

func (s Suite) runOne(ctx context.Context, i int, sc model.Scenario) SuiteRun {
	var obs RunObserver
	if s.Start != nil {
		obs = s.Start(i, sc)
	}
	r := SuiteRun{Scenario: sc}
	res, err := Run(ctx, sc, s.Backend, Options{Observe: obs.Event})
	if IsRefusal(err) {
		r.Refused = err
	} else {
		r.Result, r.Err = res, err
	}
	if obs.Done != nil {
		obs.Done(&r)
	}
	return r
}

// Counts are a suite's verdicts.
type Counts struct {
	// Failed failed, or has an error or no result (one that could not
	// start, or never started).
	Failed int
	// Unknown ran and measured too little for a verdict.
	Unknown int
	// Refused were refused by the backend.
	Refused int
	// Passed passed.
	Passed int
}

// Count tallies the outcomes as the suite's verdict sees them: a refusal is
// neither pass nor fail; an error, a missing result or a fail fails; any
// other verdict than pass is unknown. A scenario not started counts as
// failed (it has no result): an interrupted suite is not a pass.
func Count(runs []SuiteRun) Counts {
	var c Counts
	for _, r := range runs {
		switch {
		case r.Refused != nil:
			c.Refused++
		case r.Err != nil || r.Result == nil || r.Result.Verdict == model.Fail:
			c.Failed++
		case r.Result.Verdict != model.Pass:
			c.Unknown++
		default:
			c.Passed++
		}
	}
	return c
}

// Verdict is a suite's verdict as an error: nil when every scenario that
// ran passed; else how many did not (failed, unknown: Count), or that the
// backend refused every one, so that nothing ran and nothing passed.
func Verdict(runs []SuiteRun) error {
	c := Count(runs)
	if c.Failed+c.Unknown > 0 {
		return fmt.Errorf("%d of %d scenarios did not pass: %d failed, %d unknown", c.Failed+c.Unknown, len(runs), c.Failed, c.Unknown)
	}
	if c.Refused == len(runs) {
		return errors.New("every scenario was refused by the backend: nothing ran")
	}
	return nil
}
