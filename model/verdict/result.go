package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/bounds"

	"strings"
	"time"
)

// Versions are the versions of what a run used.
type Versions struct {
	Go        string `json:"go"`
	Redis     string `json:"redis"`
	Toxiproxy string `json:"toxiproxy"`
	Leaselab  string `json:"leaselab"`
}

// Result is everything a run produced. It is JSON-serializable and carries
// what is needed to re-render its reports and to reproduce it.
type Result struct {
	// RunID names this run (time and random suffix).
	RunID string `json:"run_id"`
	// Backend is what made the run: "real" (redis-server and Toxiproxy,
	// package sim/real) or "virtual" (the discrete-event model, sim/virtual).
	Backend string `json:"backend,omitempty"`
	// BackendAbout says what the backend is and what that means for the
	// run's figures, in a few words ("redis-server through Toxiproxy,
	// wall-clock time"); "" when the backend does not say. Reports show
	// it beside Backend, so that a new backend needs no change of theirs.
	BackendAbout string `json:"backend_about,omitempty"`
	// VirtualTime is true when the run's clock was a model's, not the
	// machine's (the virtual backend): its times are exact, with no
	// lateness of notifications or faults to measure.
	VirtualTime bool `json:"virtual_time,omitempty"`
	// Scenario is the scenario as given (with defaults filled, unscaled).
	Scenario model.Scenario `json:"scenario"`
	// Params are the effective timings of the run (scaled by TimeScale).
	Params    model.Params `json:"params"`
	Seed      int64        `json:"seed"`
	TimeScale float64      `json:"time_scale"`
	Versions  Versions     `json:"versions"`
	Started   time.Time    `json:"started"`
	// Elapsed is the run's length by the harness clock.
	Elapsed time.Duration `json:"elapsed"`
	// Complete is false when the run was cancelled or failed part-way;
	// Incomplete then says why.
	Complete   bool   `json:"complete"`
	Incomplete string `json:"incomplete,omitempty"`
	// Errors are problems of the harness during the run (a fault that could
	// not be applied or healed). They make the result untrustworthy.
	Errors []string `json:"errors,omitempty"`

	Timeline    model.Timeline      `json:"timeline"`
	Analysis    analysis.Analysis   `json:"analysis"`
	Predictions []bounds.Prediction `json:"predictions"`
	// Evaluation is the verdict: pass, fail or unknown, with its reasons
	// and the checks of every expectation. An incomplete run is unknown,
	// one with harness errors fails.
	Evaluation
	// Setup is how long the environment took to come up.
	Setup time.Duration `json:"setup"`
	// Cost is what the run cost the machine.
	Cost Cost `json:"cost"`
	// Observed is set when the timeline was observed from outside a live
	// fleet (Backend "observe") instead of recorded by the harness.
	Observed *analysis.Observed `json:"observed,omitempty"`
	// Agent is the agent a process-backend run's instances ran; nil for
	// another backend.
	Agent *RunAgent `json:"agent,omitempty"`
}

// RunAgent is the agent a process-backend run tested.
type RunAgent struct {
	// Command is the program and its arguments every instance ran.
	Command []string `json:"command"`
	// Override is true when the caller's agent replaced the scenario's own
	// or the default (a command line's --agent): rerunning the scenario
	// needs it given again.
	Override bool `json:"override,omitempty"`
	// Hello is how the agent named itself in its hello (name and version,
	// agent.Hello.Agent); "" when it did not.
	Hello string `json:"hello,omitempty"`
	// Client is the Redis client the agent declared in its hello, which
	// the predictions follow; nil: it declared none, and they assume
	// go-redis v9.23.0 with the scenario's client options.
	Client *bounds.DeclaredClient `json:"client,omitempty"`
	// Logs are the agents' stderr logs, one per incarnation (instance,
	// then incarnation), as the harness wrote them (chaos run: under
	// --out's agent-logs); none when it kept no logs.
	Logs []string `json:"logs,omitempty"`
}

// Settle folds the run's own state into the verdict: harness errors make
// its measurements untrustworthy (fail), an incomplete run measured only
// part of what it should (unknown at best). Their reasons are the Result's
// own Errors and Incomplete, which every report shows; Reasons stays the
// evaluation's.
func (res *Result) Settle() {
	if len(res.Errors) > 0 {
		res.Verdict = model.Fail
	}
	if !res.Complete {
		res.Verdict = model.Worse(res.Verdict, model.Unknown)
	}
}

// Distrust makes unknown each check whose limit is the prediction and
// whose metric is in beaten (metric → what beat it): a search of the
// scenario by the tool itself beat that bound, so neither a pass nor a
// fail against it says anything. The verdict and reasons follow; the
// run's own (not a check's) reasons stay.
func (res *Result) Distrust(beaten map[model.Metric]string) {
	was := map[string]bool{}
	for _, c := range res.Checks {
		if c.Verdict != model.Pass {
			was[c.String()] = true
		}
	}
	var reasons []string
	verdict := model.Verdict("")
	for _, r := range res.Reasons {
		if !was[r] {
			reasons = append(reasons, r)
			verdict = model.Unknown
		}
	}
	for i := range res.Checks {
		c := &res.Checks[i]
		if why, ok := beaten[c.Metric]; ok && c.Limit == "predicted" {
			c.Verdict = model.Unknown
			c.Detail = strings.TrimPrefix(c.Detail+"; the tool's own search beat this bound: "+why, "; ")
		}
		verdict = model.Worse(verdict, c.Verdict)
		if c.Verdict != model.Pass {
			reasons = append(reasons, c.String())
		}
	}
	if verdict == "" {
		verdict = model.Pass
	}
	res.Verdict, res.Reasons = verdict, reasons
	res.Settle()
}

// Cost is the harness's own resource use during a run (its process: the
// harness, the instances and, by default, Toxiproxy; not redis-server).
type Cost struct {
	CPU time.Duration `json:"cpu"`
	// CPUPerInstancePercent is CPU / elapsed / instances, in percent of one core.
	CPUPerInstancePercent float64 `json:"cpu_per_instance_percent"`
}

// Findings are the spec claims the run measured not held: a disagreement
// with the spec, whatever the verdict (which only StrictClaims makes them
// part of).
func (res *Result) Findings() []analysis.Claim {
	var out []analysis.Claim
	for _, c := range res.Analysis.Claims {
		if c.Verdict == analysis.NotHeld {
			out = append(out, c)
		}
	}
	return out
}

// FaultLateness is how late the worst fault was applied against its
// schedule (the scenario's At, scaled by the run's time scale): with the
// notification lateness, the measurement error of a run in wall-clock time.
func (res *Result) FaultLateness() time.Duration {
	k := res.TimeScale
	if k == 0 {
		k = 1
	}
	var late time.Duration
	for _, e := range res.Timeline {
		if e.Kind != model.FaultApplied || e.FaultID < 0 || e.FaultID >= len(res.Scenario.Faults) {
			continue
		}
		want := time.Duration(float64(res.Scenario.Faults[e.FaultID].At) * k)
		late = max(late, e.At-want)
	}
	return late
}
