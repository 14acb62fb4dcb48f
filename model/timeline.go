package model

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Kind names what an Event records. The values are stable strings: they are
// written to events.jsonl and read back by `chaos report`.
type Kind string

// Event kinds. "Believed" leadership (LeaderGained/LeaderLost) is what the
// instance acts on; RedisHolder is what Redis says, observed on an unproxied
// connection. The two lanes are kept apart on purpose: where they disagree
// is what a run measures (stale leadership, phantom leases).
const (
	InstanceStarted Kind = "instance-started" // Instance (ID = the new incarnation's elector id) began running
	InstanceCrashed Kind = "instance-crashed" // stopped dead: no release; its belief ends here
	InstanceStopped Kind = "instance-stopped" // graceful stop finished (lease released if held)
	InstancePaused  Kind = "instance-paused"  // clock frozen and traffic held
	InstanceResumed Kind = "instance-resumed" // pause over; carries on with what it believed

	LeaderGained Kind = "leader-gained" // the instance now acts as leader
	LeaderLost   Kind = "leader-lost"   // the instance no longer acts as leader
	ElectorError Kind = "elector-error" // an error on the elector's onError channel (Err)
	RunnerError  Kind = "runner-error"  // a runner error other than the elector's (fetch, ack, heartbeat...; Err)

	ChoreRan    Kind = "chore"        // a leader-only chore ran and its writes landed (Chore = kind, N = effect, Term, Token)
	ChoreFenced Kind = "chore-fenced" // safe mode: a chore's script refused to write, the caller no longer held the lease (Chore, Term, Token, Err)

	FaultApplied Kind = "fault-applied" // Fault = kind, FaultID = schedule index, Target, Detail = params
	FaultHealed  Kind = "fault-healed"  // the fault was undone; for an instant fault, its action finished
	FaultSkipped Kind = "fault-skipped" // the target role matched no instance at the moment (e.g. no leader); Detail says why

	RedisHolder Kind = "redis-holder" // the lease key now holds Holder ("" = no key); Lateness = notification lateness when known

	TaskDispatched Kind = "task-dispatched" // Task = task id
	TaskCompleted  Kind = "task-completed"
	// TaskAcknowledging: the task's handler finished and its instance sent
	// the acknowledgement (Task). Only Redis knows whether it applied when
	// the instance crashed before the reply: a task acknowledged this way
	// and gone from Redis at the end completed, unreported (see
	// Analysis.UnreportedTasks).
	TaskAcknowledging Kind = "task-acknowledging"
	TaskFailed        Kind = "task-failed"
	TaskReclaimed     Kind = "task-reclaimed"
	DelayedDue        Kind = "delayed-due" // a delayed task reached the stream; Lateness = how late after its due time
	// TaskHeld: at the end of the run, the task is still in Redis (Task;
	// Detail = "stream" or "delayed": to run, not completed, yet not lost;
	// "dead": dead-lettered, failed with no retries left, not lost either).
	TaskHeld Kind = "task-held"

	RunEnded Kind = "run-ended" // the last event of every timeline; Detail = "complete" or "incomplete: why"

	// StallKind: the harness measured itself late (Stall): Instance's
	// timer fired Lateness after its deadline, or (Instance -1) the
	// harness's wake-up probe woke Lateness late; At is when it fired.
	StallKind Kind = "stall"
)

// AgentStall is a StallKind event's Detail when an agent reported it
// (its own process woke late), not the harness's clock or probe.
const AgentStall = "agent"

// Event is one entry of the timeline. At is the offset from the start of the
// run on the harness's single monotonic clock, never an instance's clock
// (a fault may bend an instance's clock). Fields that do not apply to a Kind are left zero.
type Event struct {
	At       time.Duration `json:"at"`
	Kind     Kind          `json:"kind"`
	Instance int           `json:"instance"`           // instance index, -1 when the event belongs to none
	ID       string        `json:"id,omitempty"`       // elector id of the instance incarnation
	Holder   string        `json:"holder,omitempty"`   // RedisHolder: the id in the lease key
	Fault    string        `json:"fault,omitempty"`    // fault kind
	Mode     string        `json:"mode,omitempty"`     // partition mode of a partition fault
	FaultID  int           `json:"fault_id,omitempty"` // index of the fault in the schedule
	Target   []int         `json:"target,omitempty"`   // instances a fault hit
	Chore    string        `json:"chore,omitempty"`    // chore kind: "scheduler", "metrics", "capacity"
	N        int           `json:"n,omitempty"`        // chore effect (moved N, published capacity N, ...)
	Task     string        `json:"task,omitempty"`     // task id
	Lateness time.Duration `json:"lateness,omitempty"` // RedisHolder/DelayedDue lateness; an agent's event: how late the harness stamped it; StallKind: how late the timer fired
	// Took is how long a ChoreRan's Redis calls took, in real time, ending
	// at At: its writes landed within [At - Took, At].
	Took time.Duration `json:"took,omitempty"`
	// Instant marks a FaultApplied of a single action (redis-restart,
	// script-flush, a clock jump): its FaultHealed comes when the action
	// is done (for a restart, when Redis is back), and its reach ends at the
	// next stable leader (see FaultSpan.Reach).
	Instant bool `json:"instant,omitempty"`
	// Term and Token are the elector's term (its promotion count) and, in
	// safe mode, the fencing token of the leadership an event belongs to
	// (LeaderGained, ChoreRan, ChoreFenced).
	Term   uint64 `json:"term,omitempty"`
	Token  int64  `json:"token,omitempty"`
	Err    string `json:"err,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Uncertainty is how far At may be from when the event really happened,
	// either way. It is 0 for the harness's own recordings (one clock
	// measures them); a timeline built from outside a fleet (chaos observe)
	// places events by the clocks of instances and of Redis, each known
	// only so well.
	Uncertainty time.Duration `json:"uncertainty,omitempty"`
	// Late is how far after the event At may be, never before: an agent's
	// line the harness read late (its stamping lateness) says the agent
	// acted that much earlier. It adds to Uncertainty on the early side
	// only. A timeline with Late is judged over every timing its events
	// allow (Analysis.LateRange); past MaxStampUncertainty at a window's
	// end, its check is unknown unless it fails on every one.
	Late time.Duration `json:"late,omitempty"`
}

// Timeline is the ordered list of events of one run. Events are appended in
// At order by the recorder; Analyze sorts a copy stably anyway so hand-built
// timelines need not be ordered.
type Timeline []Event

// WriteJSONLines writes one JSON object per event.
func (t Timeline) WriteJSONLines(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i, e := range t {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("writing event %d: %w", i, err)
		}
	}
	return bw.Flush()
}

// ReadJSONLines reads a timeline written by WriteJSONLines.
func ReadJSONLines(r io.Reader) (Timeline, error) {
	var t Timeline
	dec := json.NewDecoder(r)
	for line := 1; ; line++ {
		var e Event
		if err := dec.Decode(&e); err == io.EOF {
			return t, nil
		} else if err != nil {
			return nil, fmt.Errorf("reading event %d: %w", line, err)
		}
		t = append(t, e)
	}
}
