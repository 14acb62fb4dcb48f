package sim

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"time"

	"github.com/leaselab/leaselab/model"
)

// Backend runs scenarios: it is what differs between the real, the virtual
// and any further backend. Everything before (validation, defaults,
// scaling) and after (analysis, bounds, verdicts) is Run's.
type Backend interface {
	// Name names the backend in results and reports ("real", "virtual").
	Name() string
	// Refuses returns why the backend cannot run sc (the scenario with its
	// defaults filled, unscaled), or nil if it can. A refusal says the
	// scenario is outside what the backend does, not that it is wrong.
	Refuses(sc model.Scenario) error
	// Run runs eff, a validated scenario with its defaults filled and
	// scaled, and returns what it recorded. observe, if not nil, is called
	// with each event as it is recorded, on the recording goroutine (it must
	// be fast); a backend that does not run in real time may not call it.
	//
	// It returns a nil Recording and an error when the run could not start.
	// Cancelling ctx stops the run: Run then returns the partial recording
	// and ctx's error. Nothing the run started is left running when Run
	// returns.
	Run(ctx context.Context, eff model.Scenario, observe func(model.Event)) (*Recording, error)
}

// ContextRefuser is a Backend whose refusal may take time (the process
// backend starts its agent once to read the capabilities it declares):
// Run asks RefusesContext, with its ctx, instead of Refuses, and a ctx done
// meanwhile is Run's error, not a refusal.
type ContextRefuser interface {
	RefusesContext(ctx context.Context, sc model.Scenario) error
}

// refuses asks b whether it refuses sc, with ctx where b takes one.
func refuses(ctx context.Context, b Backend, sc model.Scenario) error {
	if c, ok := b.(ContextRefuser); ok {
		return c.RefusesContext(ctx, sc)
	}
	return b.Refuses(sc)
}

// Recording is what a backend measured in one run: the timeline and the
// facts about the run itself. Run turns it into a verdict.Result.
type Recording struct {
	// RunID names the run (verdict.Result.RunID).
	RunID string
	// Versions are the versions of what the run used.
	Versions verdict.Versions
	// Started is when the run started (zero for a run in virtual time).
	Started time.Time
	// Setup is how long the environment took to come up.
	Setup time.Duration
	// Elapsed is the run's length by the recording clock.
	Elapsed time.Duration
	// Cost is what the run cost the machine.
	Cost verdict.Cost
	// Errors are problems of the harness during the run (verdict.Result.Errors).
	Errors []string
	// Timeline is every event, by the recording clock.
	Timeline model.Timeline
	// Agent is the agent the process backend's instances ran (verdict.Result.Agent).
	Agent *verdict.RunAgent
}

// Options configure Run. Zero values mean the defaults named on each field.
type Options struct {
	// Observe, if not nil, is handed to Backend.Run: it sees every event
	// as it is recorded (see Backend.Run).
	Observe func(model.Event)
	// SkipAnalysis leaves Analysis, Predictions and Evaluation empty (for
	// benchmarks of a backend alone).
	SkipAnalysis bool
	// Analysis are the analysis's settings (analysis.AnalyzeWith); the
	// zero value is analysis.Analyze.
	Analysis analysis.Options
}

// RefusedError is Run's error when the backend refuses the scenario:
// nothing ran. Its message is the backend's reason.
type RefusedError struct {
	// Backend is the refusing backend's Name.
	Backend string
	// Reason is Backend.Refuses's answer.
	Reason error
}

func (e *RefusedError) Error() string { return e.Reason.Error() }

// Unwrap returns the backend's reason, so errors.Is finds its sentinel.
func (e *RefusedError) Unwrap() error { return e.Reason }

// ErrElectorOnly is what a backend's refusal wraps when the only reason is
// that its instances run no task runner (an agent that does not declare
// the runner capability): Run then runs the scenario's elector part
// (model.Scenario.ElectorPart) instead of refusing it.
var ErrElectorOnly = errors.New("the instances run only an elector")

// IsRefusal reports whether err says a backend refused the scenario (the
// scenario is outside the backend, not wrong).
func IsRefusal(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

// Run runs the scenario on the backend and returns what it measured. It
// returns an error only when the run could not start (an invalid scenario,
// a refusal — see IsRefusal —, the backend's environment); problems during
// the run land in Result.Errors. Cancelling ctx stops the run and returns
// the partial result, marked incomplete, with ctx's error.
func Run(ctx context.Context, sc model.Scenario, b Backend, o Options) (*verdict.Result, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return RunUnvalidated(ctx, sc, b, o)
}

// RunUnvalidated is Run without Scenario.Validate, for a test that drives
// the backends through a schedule Validate refuses on fixed indexes but
// role targets, resolved at run time, can still make: a fault on an
// instance a crash took down, a crash of one a restart has down (the
// conformance table of sim/conformance). Everything else should call Run:
// a scenario Validate refuses may be one no backend can run.
func RunUnvalidated(ctx context.Context, sc model.Scenario, b Backend, o Options) (*verdict.Result, error) {
	sc = sc.WithDefaults()
	if err := refuses(ctx, b, sc); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, err
		}
		part, ok := sc.ElectorPart()
		if !ok || !errors.Is(err, ErrElectorOnly) {
			return nil, &RefusedError{Backend: b.Name(), Reason: err}
		}
		// Instances that run only an elector are judged on what an
		// elector does: the scenario's elector part.
		if err := refuses(ctx, b, part); err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return nil, err
			}
			return nil, &RefusedError{Backend: b.Name(), Reason: err}
		}
		sc = part
	}
	eff := sc.Scaled()
	// The runner's instances share one pool per process, as in production.
	eff.Params.Client.SharedPool = eff.Mode == model.ModeRunner
	rec, runErr := b.Run(ctx, eff, o.Observe)
	if rec == nil {
		return nil, runErr
	}
	if rec.Agent != nil && rec.Agent.Client != nil {
		// The agent's own client, as it declared it, decides how long its
		// failing calls take: the predictions follow it.
		eff.Params = rec.Agent.Client.Apply(eff.Params)
	}
	res := &verdict.Result{
		Backend:      b.Name(),
		BackendAbout: About(b),
		VirtualTime:  Computes(b),
		RunID:        rec.RunID,
		Scenario:     sc,
		Params:       eff.Params,
		Seed:         sc.Seed,
		TimeScale:    sc.TimeScale,
		Versions:     rec.Versions,
		Started:      rec.Started,
		Elapsed:      rec.Elapsed,
		Complete:     runErr == nil,
		Errors:       rec.Errors,
		Timeline:     rec.Timeline,
		Setup:        rec.Setup,
		Agent:        rec.Agent,
		Cost:         rec.Cost,
	}
	if runErr != nil {
		res.Incomplete = runErr.Error()
	}
	if !o.SkipAnalysis {
		res.Analysis = analysis.AnalyzeWith(res.Timeline, eff.Params, o.Analysis)
		res.Predictions = bounds.Predict(eff.Params, bounds.AppliedFaultSize(eff, res.Analysis))
		res.Evaluation = verdict.Evaluate(eff, res.Analysis, res.Predictions)
		res.Settle()
	}
	return res, runErr
}

// TaskTimeout is the Timeout of the runner-mode instances' one task,
// "work", in eff (an effective, scaled scenario): ten times the workload's
// TaskDuration plus TTL/5. It scales with the run, and so does the
// runner's ClaimIdle (twice the longest Timeout), so that a crashed
// instance's tasks are reclaimed within the recovery at any time scale.
// Every backend that runs the runner gives its task this timeout.
func TaskTimeout(eff model.Scenario) time.Duration {
	return 10*eff.Workload.TaskDuration + eff.Params.TTL/5
}
