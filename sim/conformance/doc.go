// Package conformance holds the fault conformance test: a table of
// fault-overlap cases (a fault on a down, restarting, paused or cut-off
// instance; role targets when nobody leads; two faults on one instance) run
// on every backend (virtual, real, process with leaselab's own agent), each
// of which must record the same FaultApplied, FaultSkipped and FaultHealed
// events (kind, fault, targets, the class of the skip's or heal's reason)
// and reach the same verdict: the one rule of package faults, on every
// backend. It lives apart from sim, which imports no backend.
package conformance
