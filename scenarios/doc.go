// Package scenarios reads chaos scenarios (model.Scenario) from YAML files,
// checks them strictly, and carries the built-in suite.
//
// The model. A scenario is one run of a backend (sim.Run; the real one, sim/real): N instances
// (bare electors or full task runners) share one lease in a real Redis, each
// reaching it through its own Toxiproxy proxy; a schedule of faults (crash,
// stop, partition, latency, pause, clock drift, Redis restart, script flush)
// is injected at fixed times and healed; then the run goes on for a recovery
// period. The analysis measures believed leadership (gaps, overlaps,
// failovers) and, in runner mode, what happened to tasks and chores; the
// scenario's expectations are the limits those measurements must keep.
//
// A scenario file is written by a person, so the parser is strict and says
// exactly where something is wrong: it walks the YAML node tree itself
// (rather than unmarshalling into structs) so that every problem is reported
// as "file:line: field: what is wrong", all problems at once, unknown keys
// with the closest known key. It checks the file's form (syntax, keys,
// types, units, zeros that would read as defaults); the rules on values,
// conflicts between faults among them, are model.Scenario.Validate's, which
// sim.Run applies to a Go caller's scenario too, and each problem it finds
// is put on its line here. README.md documents the format.
//
// The built-in suite (Builtin, Lookup) is a set of such files embedded in the
// binary, each probing one claim of the leader-election spec or one hazard.
package scenarios
