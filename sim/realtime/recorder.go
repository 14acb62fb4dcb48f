package realtime

import (
	"sync"
	"time"

	"github.com/leaselab/leaselab/model"
)

// Recorder stamps and collects the events of one run. Every timestamp comes
// from one monotonic clock, the harness's, read at the moment Record is
// called — never from an instance's clock, which a fault may be bending.
type Recorder struct {
	start time.Time

	mu      sync.Mutex
	events  model.Timeline
	dead    map[model.Member]bool // crashed incarnations, whose later events are dropped
	ended   bool                  // RunEnded was recorded: nothing more is
	observe func(model.Event)
}

// NewRecorder starts the run's clock now. observe, if not nil, sees every
// event as it is recorded (for progress display); it must be fast.
func NewRecorder(observe func(model.Event)) *Recorder {
	return &Recorder{start: time.Now(), dead: map[model.Member]bool{}, observe: observe}
}

// Since returns the run's clock: the time since the run started.
func (r *Recorder) Since() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.start)
}

// Rebase restarts the run's clock at t, a moment since it started, and moves
// the events recorded so far with it (none before zero). The run calls it
// where its instances' elections begin (an in-process instance's at its
// Start, an agent process's at its hello), so that the fault schedule, on
// this clock, finds every backend's instances in the same phase.
func (r *Recorder) Rebase(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	shift := t.Sub(r.start)
	if shift <= 0 {
		return
	}
	r.start = t
	for i := range r.events {
		r.events[i].At = max(r.events[i].At-shift, 0)
	}
}

// Record stamps e with the run's clock and appends it. Events of an
// incarnation that crashed are dropped: a crashed instance emits nothing
// more, and its shell winding down must not look like it did. An
// incarnation is its index and its start, not its id: a lease value may
// repeat across restarts (a pod or host name) and across instances (a
// shared id), so a crash silences only its own index's id until that index
// starts again, under whatever id. RunEnded is the last event: what the
// teardown causes after it is not recorded.
func (r *Recorder) Record(e model.Event) {
	r.mu.Lock()
	e.At = time.Since(r.start)
	m := model.Member{Instance: e.Instance, ID: e.ID}
	if r.ended || (e.ID != "" && r.dead[m] && !survivesCrash(e.Kind)) {
		if e.Kind != model.InstanceStarted || r.ended {
			r.mu.Unlock()
			return
		}
		delete(r.dead, m) // restarted under the same id: a new incarnation
	}
	r.ended = e.Kind == model.RunEnded
	if e.Kind == model.InstanceCrashed {
		r.dead[m] = true
	}
	r.events = append(r.events, e)
	obs := r.observe
	r.mu.Unlock()
	if obs != nil {
		obs(e)
	}
}

// survivesCrash reports whether an event of a crashed incarnation is still
// recorded. A task completed or dispatched is a fact about Redis: its XACK or
// XADD reached Redis before the crash cut the traffic (after it, every call
// fails), only the report of it came late. An acknowledgement sent is kept
// for the same reason: it was sent before the crash, and whether it applied
// is read from Redis at the end. Everything else a crashed
// instance says — beliefs, chores, errors — is the shell winding down.
func survivesCrash(k model.Kind) bool {
	return k == model.InstanceCrashed || k == model.TaskCompleted || k == model.TaskDispatched || k == model.TaskAcknowledging
}

// Timeline returns a copy of the events so far.
func (r *Recorder) Timeline() model.Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(model.Timeline(nil), r.events...)
}
