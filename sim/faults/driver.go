package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/leaselab/leaselab/model"
)

// World is what a backend gives the Driver: the queries and primitives the
// fault kinds are driven with. Instances are named by index. The Driver
// calls it from one goroutine at a time (the backend's schedule).
type World interface {
	// Running reports whether instance i has a live incarnation (started,
	// its start-up done, not crashed or stopped).
	Running(i int) bool
	// Incarnation reports a token of instance i's live incarnation, one
	// that a later incarnation of the slot never repeats, and whether one
	// is live: a heal acts only on the incarnation its fault hit.
	Incarnation(i int) (n int, ok bool)
	// Leading reports whether instance i's live incarnation believes it
	// leads.
	Leading(i int) bool
	// Record records an event of the run, stamped with the run's clock.
	Record(e model.Event)
	// Fail notes a harness error: the run goes on, its result says it.
	Fail(err error)

	// Crash kills instance i's live incarnation (nothing if none), as
	// SIGKILL does.
	Crash(i int)
	// Stop stops it gracefully (it releases), as SIGTERM does.
	Stop(i int)
	// Restart starts instance i again with a new id once its last
	// incarnation is down; false if it is up already (another fault's
	// restart started it).
	Restart(i int) (bool, error)
	// Pause holds instance i's live incarnation (its traffic and its
	// timers) until Resume; suspend: its clock stops too. False if there
	// was nothing to pause.
	Pause(i int, suspend bool) bool
	// Resume releases what Pause held.
	Resume(i int)
	// Clock bends instance i's live clock: rate (0: unchanged; 1: real
	// time again) and jump (0: none).
	Clock(i int, rate float64, jump time.Duration) error
	// Partition turns fault's partition of the given mode
	// (model.Partition*) on or off on instance i's link to Redis. Two
	// faults' partitions may overlap on one link: each is added and
	// removed on its own, and the link is whole again once the last is
	// off. A failed Partition on undoes what part of it took.
	Partition(i, fault int, mode string, on bool) error
	// Latency adds (on) or removes l on instance i's link. A failed add
	// undoes what part of it took.
	Latency(i int, l Latency, on bool) error
	// RestartRedis restarts Redis empty, every connection dropped, and
	// calls done once it serves again.
	RestartRedis(ctx context.Context, done func(detail string)) error
	// FlushScripts empties the script cache of every Redis server.
	FlushScripts(ctx context.Context) error
	// Failover promotes a replica of the node that serves the lease, its
	// replication held back for lag first, and calls done at the switch
	// (detail: what was promoted, what was lost).
	Failover(ctx context.Context, lag time.Duration, done func(detail string)) error
	// PauseRedis pauses Redis's clients in mode (model.RedisPause*) until
	// the run's time reads end, the fault's HealAt (on: CLIENT PAUSE for
	// what is left until then, so that an injection that came late does
	// not push the pause's end past its heal), or ends the pause (off; end
	// unused): writes (or every command) block meanwhile and run at its
	// end.
	PauseRedis(ctx context.Context, mode string, end time.Duration, on bool) error
	// MigrateSlot moves the lease's hash slot to another primary and calls
	// done once the migration is over.
	MigrateSlot(ctx context.Context, done func(detail string)) error
}

// Latency is one latency fault on one instance's link: Delay ± Jitter on
// every chunk in the directions given.
type Latency struct {
	// Fault is the fault's id (its toxics are named after it).
	Fault int
	// Delay and Jitter are the fault's Latency and Jitter.
	Delay, Jitter time.Duration
	// Requests and Replies: the directions delayed.
	Requests, Replies bool
	// Rand draws the jitter, seeded from the scenario's seed, the fault
	// and the instance, so that a run's draws repeat; nil without jitter.
	Rand *rand.Rand
}

// kind is how one fault kind is driven (one file each).
type kind struct {
	// running: the kind acts on a running process, so an index target
	// that is not running is skipped (a role picks running ones only).
	running bool
	// apply drives the primitives on a.targets (none for a kind on
	// Redis), noting in a.acted what it acted on. On an error the Driver
	// heals what part took (heal) and records the fault healed with it.
	apply func(ctx context.Context, d *Driver, a *active) error
	// heal undoes the fault; nil: nothing to undo.
	heal func(d *Driver, a *active)
	// async: the primitive calls a.done when the fault's span ends, and
	// the Driver records the FaultHealed then (rather than at once).
	async bool
}

var kinds = map[model.FaultKind]kind{}

// register adds a kind's driver to the table (from its file's init).
func register(k model.FaultKind, d kind) {
	if _, dup := kinds[k]; dup {
		panic("faults: kind " + string(k) + " registered twice")
	}
	kinds[k] = d
}

// active is a fault applied and not yet healed.
type active struct {
	d       *Driver
	id      int
	f       model.Fault
	targets []int
	acted   []int  // the targets the fault took on, for heal
	incs    []int  // with tookOn: acted's incarnations (World.Incarnation)
	note    string // what the heal says, for its FaultHealed
}

// Driver drives one run's faults on a World.
type Driver struct {
	w      World
	sc     model.Scenario
	rng    *rand.Rand // the seeded target stream
	active []*active  // by fault id
	// ended: the run ended early (End): a heal restarts nothing.
	ended bool
}

// New returns the Driver of one run of sc (effective: defaults filled,
// scaled) on w.
func New(sc model.Scenario, w World) *Driver {
	return &Driver{
		w:      w,
		sc:     sc,
		rng:    rand.New(rand.NewPCG(uint64(sc.Seed), 0)),
		active: make([]*active, len(sc.Faults)),
	}
}

// resolve picks the instances target t hits now.
func (d *Driver) resolve(t model.Target) []int {
	var live []int
	leading := map[int]bool{}
	for i := range d.sc.Instances {
		if d.w.Running(i) {
			live = append(live, i)
			leading[i] = d.w.Leading(i)
		}
	}
	return t.Resolve(live, leading, d.rng.IntN)
}

// Inject applies fault id (its At has come).
func (d *Driver) Inject(ctx context.Context, id int) {
	f := d.sc.Faults[id]
	k, ok := kinds[f.Kind]
	if !ok {
		d.w.Fail(fmt.Errorf("applying fault %d: no driver for fault kind %q", id, f.Kind))
		return
	}
	a := &active{d: d, id: id, f: f}
	detail := f.Describe()
	if !f.Kind.OnRedis() {
		a.targets = d.resolve(f.Target)
		if k.running {
			// An index given by number may not be running (down, or an
			// agent still starting): the fault has nothing to act on
			// there, and the timeline says so rather than that it hit it.
			var live, not []int
			for _, i := range a.targets {
				if d.w.Running(i) {
					live = append(live, i)
				} else {
					not = append(not, i)
				}
			}
			if len(not) > 0 {
				why := fmt.Sprintf("instance %v not running (down, or started and its start-up not done)", not)
				if len(live) == 0 {
					d.skip(a, why)
					return
				}
				a.targets, detail = live, detail+"; skipped "+why
			}
		}
		if len(a.targets) == 0 {
			// A role that matches nobody (no leader right now, say) is not a
			// fault on everyone: nothing happens, and the timeline says so.
			d.skip(a, fmt.Sprintf("target %s matched no live instance", f.Target))
			return
		}
	}
	// Recorded before the action, so the analysis sees the fault come first
	// and the leaders it hit still leading at the moment of injection.
	d.w.Record(model.Event{Kind: model.FaultApplied, Instance: -1, Fault: string(f.Kind), Mode: f.Mode, FaultID: id,
		Target: a.targets, Detail: detail, Instant: f.Instant()})
	if err := k.apply(ctx, d, a); err != nil {
		// Undo what part of it took; the run goes on and says it failed.
		if k.heal != nil {
			k.heal(d, a)
		}
		d.w.Record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(f.Kind), FaultID: id, Target: a.targets, Err: err.Error()})
		d.w.Fail(fmt.Errorf("applying fault %d (%s): %w", id, f.Kind, err))
		return
	}
	switch {
	case k.async:
		// Healed when the primitive says its action is over.
	case f.Instant():
		// The action is over: the span ends here.
		d.healed(a, "")
	default:
		d.active[id] = a
	}
}

func (d *Driver) skip(a *active, why string) {
	d.w.Record(model.Event{Kind: model.FaultSkipped, Instance: -1, Fault: string(a.f.Kind), Mode: a.f.Mode, FaultID: a.id, Detail: why})
}

func (d *Driver) healed(a *active, detail string) {
	d.w.Record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(a.f.Kind), FaultID: a.id, Target: a.targets, Detail: detail})
}

// done is the completion an asynchronous kind's primitive calls when the
// fault's span ends.
func (a *active) done(detail string) { a.d.healed(a, detail) }

// Heal heals fault id if it is active (its HealAt has come).
func (d *Driver) Heal(id int) {
	a := d.active[id]
	if a == nil {
		return
	}
	d.active[id] = nil
	if h := kinds[a.f.Kind].heal; h != nil {
		h(d, a)
	}
	d.healed(a, a.note)
}

// HealAll heals every active fault, in fault order (the end of the fault
// phase).
func (d *Driver) HealAll() {
	for id := range d.active {
		d.Heal(id)
	}
}

// End heals every active fault as HealAll does, but for the run's early
// end (cancelled, or an instance failed to start): no heal restarts an
// instance, since nothing would measure it, and each heal that would have
// says so. A backend kills its instances first, so that no heal waits out
// a graceful stop.
func (d *Driver) End() {
	d.ended = true
	d.HealAll()
}

// tookOn notes that the fault took on instance i's live incarnation.
func (a *active) tookOn(i int) {
	n, _ := a.d.w.Incarnation(i)
	a.acted = append(a.acted, i)
	a.incs = append(a.incs, n)
}

// same reports whether acted[k]'s incarnation (tookOn) is still the live
// one: after a restart, the instance's new incarnation is not the fault's
// to heal (another fault may hold it).
func (a *active) same(k int) bool {
	n, ok := a.d.w.Incarnation(a.acted[k])
	return ok && n == a.incs[k]
}

// notRunning is the heal's note for the instances it found no longer
// running: nothing to heal there.
func notRunning(gone []int) string {
	return fmt.Sprintf("instance %v not running: nothing to heal there", gone)
}

// appendNote adds s to the heal's note.
func (a *active) appendNote(s string) {
	if a.note != "" {
		a.note += "; "
	}
	a.note += s
}
