// Package faults drives a scenario's faults on any backend: the one rule
// for applying and healing a fault, which every backend shares.
//
// A backend implements World: primitives on its instances (crash, stop,
// restart, pause and resume, bend a clock), on each instance's link to
// Redis (a partition mode on or off, a latency added or removed) and on
// Redis (restart it, flush its scripts, pause its clients, fail it over,
// migrate the lease's slot), and two queries (which instances are running, which lead). It
// calls Driver.Inject at each fault's At, Driver.Heal at its HealAt and
// Driver.HealAll at the end of the fault phase (model.Scenario.FaultPlan's
// schedule, in the backend's own time), or Driver.End if the run ends
// early (its heals restart nothing). The Driver does the rest:
//
//   - it resolves the fault's target at the moment of injection (an index
//     list, or a role among the running instances: the leader, a follower
//     or any instance drawn from the seeded target stream, or all);
//   - it skips what has nothing to act on: a role that matches nobody (no
//     leader right now), and, for the kinds that act on a running process
//     (pause, suspend, clock), an index that is not running, named in the
//     FaultApplied's or FaultSkipped's Detail;
//   - it records FaultApplied before the primitives act (the analysis sees
//     the fault first and the leaders it hit still leading), FaultSkipped,
//     and FaultHealed: at once for an instant fault, at the heal for the
//     others, and, for the kinds whose span ends asynchronously (Redis back
//     after a restart, a failover's switch, a migration done), when the
//     primitive calls the completion it was given (the virtual world from
//     its event loop later, the real one when its action returns);
//   - a heal that finds an instance no longer running has nothing to undo
//     there and says so in the FaultHealed's Detail; an error of a
//     primitive is a harness error (World.Fail), with what part of the
//     fault took undone.
//
// Each kind is one file here (crash.go, stop.go, partition.go, latency.go,
// pause.go, clock.go, redis_restart.go, script_flush.go,
// redis_failover.go, slot_migration.go, redis_pause.go) that registers how it is driven in
// a table keyed by model.FaultKind, as Toxiproxy registers its toxics: what
// it needs of its targets, the primitives it applies them with, and how it
// heals. No backend switches on fault kinds.
package faults
