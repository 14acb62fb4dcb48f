// Package real is leaselab's real-time backend (a sim.Backend): it runs a
// model.Scenario against a real Redis through real Toxiproxy and records
// what happened as one model.Timeline.
//
// Backend.Run starts N instances (bare electors or full task runners, each
// with its own proxy, go-redis client, gate and faulty clock), injects the
// schedule's faults on time (crashes, stops, partitions, latency, pauses,
// clock drift and jumps, Redis restarts, SCRIPT FLUSH, failovers, slot
// migrations), watches who holds the lease in Redis over an unproxied
// connection (the truth lane), and hands the timeline back to sim.Run, which
// analyzes it. Where Redis and Toxiproxy come from is package sim/env's job.
package real
