// Package model is leaselab's pure core, shared by every backend and every
// report: what a chaos run is (Scenario, Params, Fault, Expectation), what
// it recorded (Timeline, one Event per thing that happened, on the harness's
// single clock), and what that means (Analyze: overlaps, gaps, stale
// leadership, failovers, the spec's claims; Predict: the analytic worst case
// of each failure mode, formulas included; Evaluate: the verdict, pass, fail
// or unknown; Result: all of it, as stored in result.json).
//
// Like etcd's raft, it has no goroutines, no I/O and no clock: a backend
// (sim/real against real Redis and Toxiproxy, or sim/virtual in virtual time)
// produces a Timeline, and everything after that is a function of it. It
// imports only the standard library and leaselab's timing rules, so it
// builds on every OS and can be tested on hand-built timelines.
package model
