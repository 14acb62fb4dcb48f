package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/leaselab/leaselab/election"
)

// Handler runs one task. ctx is cancelled at the task's Timeout, when the
// runner is killed, and when a graceful Stop runs out of time; a handler must
// return soon after. A returned error or a panic is a failure: the task is
// retried or dead-lettered.
type Handler func(ctx context.Context, payload []byte) error

// Task is one entry of the task registry.
type Task struct {
	// Handler runs the task. Required.
	Handler Handler
	// MaxRetries is how many times a failed task is run again before it is
	// dead-lettered. 0 means the default, 3; a negative value means none.
	MaxRetries int
	// Timeout cancels the handler's ctx. Default 30s.
	Timeout time.Duration
}

// Options configures a Runner. Zero values mean the documented defaults;
// Group and Tasks are required.
type Options struct {
	// Group is the consumer group, and the name everything else derives from:
	// the Redis keys (keys.go) and the lease (election.LeaderKey(Group)).
	Group string
	// Tasks is the registry: task name -> Task. Every instance of a group
	// should register the same tasks; Dispatch refuses an unknown name, and an
	// instance that receives a task it does not know dead-letters it.
	Tasks map[string]Task

	// Workers is the worker-pool capacity an instance starts with, and the
	// capacity the leader publishes when there is no backlog. Default 8.
	Workers int
	// MinWorkers and MaxWorkers bound the capacity the leader publishes.
	// Defaults: Workers and 4×Workers.
	MinWorkers, MaxWorkers int
	// DrainTarget is the time within which the leader sizes the fleet's pools
	// to drain the backlog, given the average task time. Default 1s.
	DrainTarget time.Duration
	// Batch is the most entries one XREADGROUP or XAUTOCLAIM asks for; an
	// instance never asks for more than its free workers plus its read-ahead
	// window (ReadAhead). Default 64.
	Batch int
	// ReadAhead is how many delivered entries an instance may hold beyond
	// its free workers, waiting in a local queue, so that a worker that
	// finishes takes its next task without a round trip to Redis, and reads
	// come in batches. The instance holds fewer when its tasks are slow: no
	// more than its workers start within 10 ms at the average time of the
	// tasks it ran lately (none before its first task finished), so that a
	// backlog of slow tasks is not hoarded by one instance. A waiting entry
	// is pending under this instance like a running one (a crash leaves it
	// for reclaim after ClaimIdle; a graceful Stop runs it or hands it back),
	// and one that waited so long that it could still run when ClaimIdle
	// expires is not started but left to be reclaimed. Default Batch;
	// negative means none (read only for free workers).
	ReadAhead int
	// AckBatch is the most successful tasks acknowledged in one script. A
	// worker hands a completed task to the acker and moves on; the acker
	// acknowledges what completed while its previous batch was on the wire.
	// A crash repeats (after ClaimIdle) up to 2×AckBatch + one per worker
	// alive (at most MaxWorkers) completed but unacknowledged tasks.
	// Default 64; negative acknowledges each task before its worker moves
	// on (the crash window of one task per worker).
	AckBatch int
	// Block is how long XREADGROUP waits for new entries. It is also how long
	// a graceful Stop may wait for the fetcher, and the pause after a Redis
	// error before the fetcher tries again. Default 1s, and at most half of
	// ClaimIdle minus the longest task Timeout: an entry may reach a
	// blocked read up to Block after it was sent, the earliest Redis may
	// have delivered it, and the runner counts ClaimIdle from that send, so
	// a longer Block would leave such an entry too little time to run
	// before another instance may reclaim it (it would be deferred instead).
	Block time.Duration
	// ClaimIdle is how long an entry must have been pending (delivered, not
	// acknowledged) before another instance takes it over. It must exceed
	// every task's Timeout, or a task that is still running would be run
	// twice. Default: 2× the longest Timeout in Tasks.
	ClaimIdle time.Duration
	// RetryBackoff is the delay before the first retry; it doubles with every
	// attempt, up to 5 minutes. Default 1s.
	RetryBackoff time.Duration

	// ChoreInterval is the period of the chore tick: on it every instance
	// heartbeats, applies the published capacity and reclaims idle entries,
	// and the leader runs the scheduler, the metrics and the capacity chores.
	// A due delayed task reaches the stream at most one ChoreInterval late
	// while there is a leader. Default 1s.
	ChoreInterval time.Duration

	// AvgThreshold and WaitThreshold make the metrics chore call OnThreshold
	// when a task's average execution time exceeds AvgThreshold, or the
	// predicted wait of a new task exceeds WaitThreshold. 0 disables each.
	AvgThreshold, WaitThreshold time.Duration
	// OnThreshold is the metrics hook. It runs on the chore goroutine, so it
	// must be fast: a slow hook delays the scheduler. It is called only
	// while the elector still leads in the term the report was computed in
	// (checked just before the call), but its side effects are not fenced:
	// a demotion can come during the call, and what it does outside Redis
	// the runner cannot refuse. A hook that must not act as a stale leader
	// hands MetricsReport.Token (safe mode) to the system it acts on.
	OnThreshold func(MetricsReport)

	// OnEvent receives every event (see EventKind), synchronously, from many
	// goroutines at once: it must be safe for concurrent use and fast. The
	// runner holds no lock while calling it, so a slow hook slows only the
	// goroutine that reports: a worker, the chore tick, or the goroutine that
	// reports the elector's signals (a hook slow on a leadership event delays
	// the next leadership events, coalesced by the elector meanwhile; it never
	// delays IsLeader, the chores' gate, or a renewal). Default: none.
	OnEvent func(Event)

	// Election holds the elector's options. Redis, Key and Clock are set by
	// the runner (its client, Group, and Clock). Defaults are the spec's: TTL
	// 5s, Wait 6s, JitterMS 5 (a negative JitterMS means no jitter). The
	// other fields (ID, OpTimeout, StopTimeout, Logger, Jitter, Safe,
	// SafeMargin) are passed on as they are; ID, when set, is also the
	// instance's consumer name. Safe also fences the leader-only chores (see
	// the package doc); every instance of a group must use the same mode.
	Election election.Opts

	// Clock drives the elector and every timer of the runner (chore tick,
	// reclaim pass, fetch retry pause, handler timeouts); a simulator passes
	// one it can freeze or drift. Delays of delayed tasks and retries are
	// measured by the Redis clock instead. Default: the real clock. (With the
	// default, a handler's ctx sets its timeout timer only when the handler
	// first asks for Done or Err; with a Clock given, every task gets the
	// Clock's WithTimeout.)
	Clock clock.Clock
	// Logger receives the runner's logs. Default: none.
	Logger *slog.Logger
}

// Defaults of the spec's StartElection (runner/election.go in the spec).
const (
	DefaultTTL      = 5 * time.Second
	DefaultWait     = 6 * time.Second
	DefaultJitterMS = 5
)

const (
	defaultWorkers       = 8
	defaultBatch         = 64
	defaultAckBatch      = 64
	defaultBlock         = time.Second
	defaultChoreInterval = time.Second
	defaultDrainTarget   = time.Second
	defaultRetryBackoff  = time.Second
	defaultMaxRetries    = 3
	defaultTaskTimeout   = 30 * time.Second
	maxRetryBackoff      = 5 * time.Minute
)

// Resolved returns c as New resolves it: every zero value replaced by its
// default (Block bounded by ClaimIdle, ClaimIdle from the longest task
// Timeout, the election's TTL, Wait and JitterMS), and the first problem
// found, if any. A model of the runner (the virtual backend) reads the
// timings it must keep from it.
func (c Options) Resolved() (Options, error) { return c.withDefaults() }

// withDefaults is Resolved.
func (c Options) withDefaults() (Options, error) {
	if c.Group == "" {
		return c, errors.New("runner: Options.Group is empty")
	}
	if len(c.Tasks) == 0 {
		return c, errors.New("runner: Options.Tasks is empty")
	}
	tasks := make(map[string]Task, len(c.Tasks))
	var longest time.Duration
	for name, t := range c.Tasks {
		if t.Handler == nil {
			return c, fmt.Errorf("runner: task %q has no Handler", name)
		}
		switch {
		case t.MaxRetries == 0:
			t.MaxRetries = defaultMaxRetries
		case t.MaxRetries < 0:
			t.MaxRetries = 0
		}
		if t.Timeout <= 0 {
			t.Timeout = defaultTaskTimeout
		}
		longest = max(longest, t.Timeout)
		tasks[name] = t
	}
	c.Tasks = tasks

	c.Workers = positive(c.Workers, defaultWorkers)
	c.MinWorkers = positive(c.MinWorkers, c.Workers)
	c.MaxWorkers = positive(c.MaxWorkers, 4*c.Workers)
	if c.MinWorkers > c.MaxWorkers {
		return c, fmt.Errorf("runner: MinWorkers %d exceeds MaxWorkers %d", c.MinWorkers, c.MaxWorkers)
	}
	c.Batch = positive(c.Batch, defaultBatch)
	switch {
	case c.ReadAhead == 0:
		c.ReadAhead = c.Batch
	case c.ReadAhead < 0:
		c.ReadAhead = 0
	}
	if c.AckBatch == 0 {
		c.AckBatch = defaultAckBatch
	}
	c.Block = positive(c.Block, defaultBlock)
	c.ChoreInterval = positive(c.ChoreInterval, defaultChoreInterval)
	c.DrainTarget = positive(c.DrainTarget, defaultDrainTarget)
	c.RetryBackoff = positive(c.RetryBackoff, defaultRetryBackoff)
	c.ClaimIdle = positive(c.ClaimIdle, 2*longest)
	if c.ClaimIdle <= longest {
		return c, fmt.Errorf("runner: ClaimIdle %v must exceed the longest task Timeout %v, or running tasks get run twice", c.ClaimIdle, longest)
	}
	if most := (c.ClaimIdle - longest) / 2; c.Block > most {
		c.Block = max(most, time.Millisecond)
	}
	if c.Block < time.Millisecond {
		return c, fmt.Errorf("runner: Block %v is below XREADGROUP's 1ms resolution (0 would block forever)", c.Block)
	}

	if c.Clock == nil {
		c.Clock = clock.New()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	e := &c.Election
	if e.TTL == 0 {
		e.TTL = DefaultTTL
	}
	if e.Wait == 0 {
		e.Wait = DefaultWait
	}
	switch {
	case e.JitterMS == 0:
		e.JitterMS = DefaultJitterMS
	case e.JitterMS < 0:
		e.JitterMS = 0
	}
	e.Key = c.Group
	e.Clock = c.Clock
	return c, nil
}

// positive returns v, or def when v is zero or negative.
func positive[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
