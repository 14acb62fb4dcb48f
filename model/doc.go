// Package model is the vocabulary of leaselab's pure core, shared by every
// backend and every report: what a chaos run is (Scenario, Params, Fault
// and its kinds, Expectation), what it recorded (Timeline, one Event per
// thing that happened, on the harness's single clock), the failure modes
// and fault sizes the bounds speak of, and the verdict a check reaches
// (Check, Verdict).
//
// The stages that give a run its meaning are packages below it, each
// importing only those before it:
//
//	model           the vocabulary (this package)
//	model/analysis  what the timeline shows: overlaps, gaps, stale
//	                leadership, failovers, the spec's claims (Analyze)
//	model/bounds    the analytic worst case of each failure mode, every
//	                term composed, formulas included (Predict)
//	model/verdict   the limits judged: pass, fail or unknown (Evaluate),
//	                and Result, all of it as stored in result.json
//
// Like etcd's raft, none of them has goroutines, I/O or a clock: a backend
// produces a Timeline, and everything after that is a function of it. They
// import only the standard library and leaselab's timing rules, so they
// build on every OS and can be tested on hand-built timelines.
//
// A fault kind is one file here, kind_<name>.go: its KindSpec holds what
// every stage needs of it (validation, plan, size, bound mode and terms,
// plot colour, starter entries), so a stage looks the kind up rather than
// switching on it.
package model
