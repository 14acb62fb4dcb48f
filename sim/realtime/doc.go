// Package realtime is leaselab's real-time engine: it runs a
// model.Scenario in wall-clock time against a real Redis through real
// Toxiproxy and records what happened as one model.Timeline. The backends
// that run in real time (sim/real: instances as goroutines; sim/process:
// instances as OS processes) are spawners on top of it: each gives the
// Engine a Spawner, which makes one instance's Shell from its Slot.
//
// Engine.Run sets the environment up (package sim/env), gives each instance
// its own Toxiproxy proxy (one per node with redis: cluster), starts the
// instances through their shells, injects the schedule's faults on time
// (the one fault driver of package sim/faults, over the primitives in
// faults.go: the shells' crash, stop, pause and clock, the proxies' toxics,
// the environment's Redis), drives the workload, watches who holds the
// lease in Redis over an unproxied connection (the truth lane, Truth), and
// stamps every event with the run's one clock (Recorder).
package realtime
