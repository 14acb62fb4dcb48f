// Package analysis measures a run's timeline against the parameters it ran
// with: who believed it led when (Belief), overlap windows (two leaders at
// once), leadership gaps, stale leadership (a leader while Redis held
// another value), failovers, chores and tasks, and the spec's claims. It is
// model's second stage: it reads model's vocabulary and is read by
// model/bounds and model/verdict.
//
// Analyze is pure. Where agents' lines or Redis's notifications were
// stamped late, each window also carries how much longer or shorter it may
// really have been (Window.Uncertainty, LateRange), and Measure gives a
// metric's value with what keeps it undecided, so that a verdict is never
// firmer than the measurement.
package analysis
