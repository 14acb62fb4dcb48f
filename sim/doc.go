// Package sim is leaselab's simulator: it runs a model.Scenario on a
// Backend and turns what the backend recorded into a verdict.Result.
//
// The one pipeline, Run, is the same for every backend:
//
//	Validate → WithDefaults → Backend.Refuses → Scaled → Backend.Run
//	  → analysis.Analyze → bounds.Predict (the applied fault size) → verdict.Evaluate
//
// A backend only runs a validated, scaled scenario (its schedule is
// model.Scenario.FaultPlan) and records one model.Timeline by one clock;
// everything after the timeline is shared. Suite runs many scenarios at once
// (parallelism, start stagger, refusals, interrupt, per-run observers), as
// chaos suite does; Seeds runs one over many seeds. sim
// imports no backend: the caller picks one and hands it in. The backends
// live beside this package: sim/real (goroutine instances against a real
// redis-server through real Toxiproxy; where Redis and Toxiproxy come from is
// sim/env's job), sim/virtual (the production election.Machine against a
// discrete-event model of Redis, the network and go-redis) and sim/process
// (every instance an agent process, on the real backend's environment).
package sim
