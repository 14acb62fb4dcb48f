package sim

import (
	"context"
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
	// Parallel is how many scenarios run at once. 0: all at once.
	Parallel int
	// Stagger separates the starts of the first wave (the first Parallel
	// scenarios): environments that all come up at once contend for the
	// CPU, which moves a real run's phase-dependent figures. 0: no stagger.
	Stagger time.Duration
	// Start, if not nil, is called as each scenario starts, on the run's
	// goroutine, with its index; what it returns observes that run.
	Start func(i int, sc model.Scenario) RunObserver
	// NotStarted, if not nil, is called for each scenario still queued when
	// ctx is cancelled, in order, as the suite stops starting them.
	NotStarted func(i int, sc model.Scenario)
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
	Result *model.Result
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
		parallel = len(scs)
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
		if s.Stagger > 0 && i < len(scs)-1 && i < parallel-1 {
			// The first wave one by one (see Stagger).
			t := time.NewTimer(s.Stagger)
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
