// Package real is leaselab's real backend (a sim.Backend): every instance a
// goroutine of this process (a bare elector or a full task runner, with its
// own go-redis client, faulty.Gate and faulty.Clock) run by the real-time
// engine of package sim/realtime, which gives each its own Toxiproxy proxy
// to a real Redis, injects the schedule's faults, watches the lease in
// Redis and records one model.Timeline for sim.Run to analyze.
//
// The package is a spawner and nothing more: Backend hands the engine
// spawn, which makes an instance's realtime.Shell from its realtime.Slot
// (instance.go). What the faults do to an instance in-process (crash: its
// gate killed; pause: its gate held and its clock stalled; clock faults:
// its clock bent) is that Shell's.
package real
