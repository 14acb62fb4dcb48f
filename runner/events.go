package runner

import "time"

// EventKind names what an Event reports. The values are stable strings.
type EventKind string

// Event kinds, and the Event fields each one sets besides Kind, At and
// Instance.
const (
	// EventLeadership: the elector promoted (Leader true) or demoted (Leader
	// false) this instance. At is the elector's decision time; Term and Token
	// (safe mode) name the term a promotion began. IsLeader changed at At
	// already: the event may come later (OnEvent runs on its own goroutine).
	EventLeadership EventKind = "leadership"
	// EventChore: a leader-only chore ran. Duration, Chore, N (scheduler: tasks moved;
	// metrics: samples read and reset; capacity: the capacity published),
	// Version (capacity), Metrics (metrics), Term and Token (safe mode: the
	// fencing token it ran under, checked by Redis).
	EventChore EventKind = "chore"
	// EventChoreFenced (safe mode): a leader-only chore's script refused to
	// write because the lease no longer held this instance's ID or the
	// token counter had moved past the term's token: a stale leader's chore,
	// which changed nothing. Chore, Term, Token, Err (the refusal).
	EventChoreFenced EventKind = "chore-fenced"
	// EventDelayedDue: the scheduler moved a delayed task or a retry into the
	// stream. TaskID, Task, Attempt, Lateness (after its due time, by the
	// Redis clock).
	EventDelayedDue EventKind = "delayed-due"
	// EventCapacityApplied: this instance resized its pool to a newly
	// published capacity (the leader publishes every tick; only a change of
	// capacity is reported). N, Version, From (the publishing leader).
	EventCapacityApplied EventKind = "capacity-applied"

	// EventTaskDispatched: Dispatch, DispatchDelayed or ScheduleAt stored a
	// task. TaskID, Task, Due (delayed only).
	EventTaskDispatched EventKind = "task-dispatched"
	// EventTaskReclaimed: this instance took over an entry that another (or
	// an earlier) consumer left pending for ClaimIdle. TaskID, Task, Attempt.
	EventTaskReclaimed EventKind = "task-reclaimed"
	// EventTaskDeferred: a delivery waited in the read-ahead queue so long
	// that it could still be running when another instance may reclaim it
	// (wait + Timeout > ClaimIdle, the wait counted from when the read that
	// delivered it was sent), so it was not started: it stays pending
	// and runs after ClaimIdle, here or on another instance. A steady
	// stream of these says the read-ahead holds tasks slower than its
	// window assumed (lower ReadAhead, or raise ClaimIdle). TaskID, Task,
	// Attempt, Duration (that wait).
	EventTaskDeferred EventKind = "task-deferred"
	// EventTaskStarted: a handler started. TaskID, Task, Attempt.
	EventTaskStarted EventKind = "task-started"
	// EventTaskAcknowledging: a handler returned nil and the entry's
	// acknowledgement is about to be sent. TaskID, Task, Attempt. It
	// matters only when no EventTaskCompleted follows: a runner killed
	// with the acknowledgement on the wire cannot know whether it applied,
	// and only Redis does (an entry that is no longer pending was
	// acknowledged: nothing else removes it). A harness that kills
	// runners uses it to tell a task acknowledged by a dying runner from a
	// lost one.
	EventTaskAcknowledging EventKind = "task-acknowledging"
	// EventTaskCompleted: a handler returned nil and the entry was
	// acknowledged. TaskID, Task, Attempt, Duration, Duplicate.
	EventTaskCompleted EventKind = "task-completed"
	// EventTaskFailed: a handler failed (error, panic or timeout). TaskID,
	// Task, Attempt, Duration, Err, Retry (a retry was scheduled).
	EventTaskFailed EventKind = "task-failed"
	// EventTaskDeadLettered: a failed task had no retries left and went to
	// the dead-letter stream. TaskID, Task, Attempt, Err.
	EventTaskDeadLettered EventKind = "task-dead-lettered"
	// EventTaskHandedBack: a graceful Stop ran out of time and returned an
	// unfinished task to the stream. TaskID, Task, Attempt.
	EventTaskHandedBack EventKind = "task-handed-back"

	// EventError: something failed and the runner carries on. Err.
	EventError EventKind = "error"
)

// Chore names a leader-only chore.
type Chore string

// The three leader-only chores of the spec.
const (
	ChoreScheduler Chore = "scheduler"
	ChoreMetrics   Chore = "metrics"
	ChoreCapacity  Chore = "capacity"
)

// Event is one thing that happened in a runner. Fields that do not apply to
// the Kind are zero.
type Event struct {
	Kind EventKind
	// At is when it happened by the runner's Clock (which may drift or be
	// frozen under a simulator; a harness should stamp events itself).
	At time.Time
	// Instance is the runner's ElectorID.
	Instance string

	// Leader is the new leadership state (EventLeadership).
	Leader bool
	// Chore is the chore that ran (EventChore).
	Chore Chore
	// N is the chore's effect (EventChore) or the capacity applied
	// (EventCapacityApplied).
	N int
	// Version and From identify a capacity publication: its version and the
	// leader that published it.
	Version int64
	From    string
	// Term is the elector's term (its promotion count) and Token the
	// fencing token of that term (safe mode; 0 in spec mode), for
	// EventLeadership, EventChore and EventChoreFenced.
	Term  uint64
	Token int64
	// Metrics is the metrics chore's report (EventChore, ChoreMetrics).
	Metrics *MetricsReport
	// TaskID is the task's ID, as Dispatch returned it; Task its name;
	// Attempt counts its runs, from 1.
	TaskID  string
	Task    string
	Attempt int
	// Due is when a delayed task is due, by the Redis clock.
	Due time.Time
	// Duration is how long the handler ran (task events), how long a
	// delivery waited since its read was sent (EventTaskDeferred), or the real time from a chore's
	// first Redis call to its last reply (EventChore): its writes landed
	// within it.
	Duration time.Duration
	// Lateness is how long after its due time a delayed task reached the
	// stream, by the Redis clock.
	Lateness time.Duration
	// Retry: the failed task will run again.
	Retry bool
	// Duplicate: another instance finished this entry first (the task ran
	// twice, as at-least-once delivery allows).
	Duplicate bool
	// Err is the error (EventError) or the handler's failure.
	Err error
}

// emit stamps e and hands it to OnEvent. A killed runner reports nothing
// more: it is meant to look like a crashed process.
func (r *Runner) emit(e Event) {
	if e.Kind == EventError {
		r.stats.errors.Add(1)
		if !r.killed.Load() {
			r.log.Error("runner error", "err", e.Err)
		}
	}
	if r.cfg.OnEvent == nil || r.killed.Load() {
		return
	}
	e.Instance = r.id
	if e.At.IsZero() {
		e.At = r.clock.Now()
	}
	r.cfg.OnEvent(e)
}

// fail reports err as an EventError.
func (r *Runner) fail(err error) { r.emit(Event{Kind: EventError, Err: err}) }
