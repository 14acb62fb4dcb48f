package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/leaselab/leaselab/election"
	"github.com/redis/go-redis/v9"
)

// Runner is one TaskRunner instance. Create it with New, run it with Start,
// end it with Stop (graceful) or by cancelling Start's context (a crash).
type Runner struct {
	cfg   Options
	rdb   redis.UniversalClient
	keys  keys
	clock clock.Clock
	log   *slog.Logger
	id    string
	// realClock: Options.Clock was nil, so handlers get a handlerCtx.
	realClock bool

	elector      *election.Elector
	promote      <-chan time.Time
	demote       <-chan time.Time
	electionErrs <-chan error

	pool   *pool
	killed atomic.Bool
	// splitBrain makes the chores act as leader whatever the elector says:
	// tests only, to create two leaders on purpose.
	splitBrain atomic.Bool
	stats      counters
	// ran counts the handlers that returned here, ranNS their total time:
	// the fetcher's read-ahead window follows their average (taskMeter).
	ran, ranNS atomic.Int64

	mu      sync.Mutex
	state   int                  // stateNew, stateRunning or stateStopped
	flights map[string]*delivery // stream entry id -> delivery held here (inflight.go)
	// claiming: an XAUTOCLAIM pass is on the wire; lateSettled collects
	// the entries settled meanwhile, which its reply may still return
	// (inflight.go).
	claiming    bool
	lateSettled map[string]struct{}
	applied     published // the capacity this instance applied last

	// Set by Start, read-only after.
	ctx            context.Context // Start's: cancelled means killed
	taskCtx        context.Context // parent of every handler's ctx
	cancelTasks    context.CancelFunc
	cancelFetch    context.CancelFunc
	cancelChores   context.CancelFunc
	fetchDone      chan struct{}
	choreDone      chan struct{}
	electionDone   chan struct{}
	electorStopped chan struct{}
	stopReq        chan context.Context
	// stopping is closed when a graceful Stop begins, at stopAt (by Clock,
	// written before the close).
	stopping chan struct{}
	stopAt   time.Time
	done     chan struct{}
	stopErr  error // written before done is closed

	// The acker (acks.go). ackClosed is guarded by ackMu.
	acks      chan ack
	ackMu     sync.RWMutex
	ackClosed bool
	ackStop   chan struct{}
	ackDone   chan struct{}
	ackHook   func(n int) // tests only: called before each batch is sent
	// claimHook (tests only) is called when an XAUTOCLAIM pass returned
	// entries, before they are registered.
	claimHook func()
	// resendHook (tests only) is called before the pause that precedes each
	// re-send of an acknowledgement, with the attempt to come (2, 3, ...).
	resendHook func(attempt int)

	lastAvg time.Duration // the leader's last known average task time; chore goroutine only
}

const (
	stateNew = iota
	stateRunning
	stateStopped
)

// New returns a runner for cfg that talks to Redis through rdb. rdb may be a
// *redis.Client or a *redis.ClusterClient; the runner never closes it.
func New(rdb redis.UniversalClient, cfg Options) (*Runner, error) {
	realClock := cfg.Clock == nil
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Runner{
		cfg:         cfg,
		rdb:         rdb,
		keys:        keysFor(cfg.Group),
		clock:       cfg.Clock,
		realClock:   realClock,
		pool:        newPool(cfg.Workers, cfg.ReadAhead),
		flights:     make(map[string]*delivery),
		lateSettled: make(map[string]struct{}),
		stopping:    make(chan struct{}),
		done:        make(chan struct{}),
	}
	r.applied.capacity = cfg.Workers
	cfg.Election.Redis = leaseClient{Scripter: rdb, r: r}
	if err := cfg.Election.Validate(); err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	r.elector, r.promote, r.demote, r.electionErrs = election.NewElector(cfg.Election)
	r.id = r.elector.ID()
	r.log = cfg.Logger.With("instance", r.id, "group", cfg.Group)
	return r, nil
}

// ElectorID returns the instance's ID: the value its elector writes into the
// lease, and its consumer name in the group.
func (r *Runner) ElectorID() string { return r.id }

// LeaseKey returns the Redis key of the group's lease.
func (r *Runner) LeaseKey() string { return r.keys.lease }

// IsLeader reports whether this instance acts as the leader: the elector's
// own decision (election.Elector.IsLeader), checked before every chore. It
// changes at the moment the elector decides, whatever OnEvent does; the
// EventLeadership events that report it may come later.
func (r *Runner) IsLeader() bool { return r.elector.IsLeader() }

// Leadership returns the elector's current decision: leader or not, term,
// fencing token and, in safe mode, the lease guard's deadline.
func (r *Runner) Leadership() election.Leadership { return r.elector.Leadership() }

// Safe reports whether the runner runs in safe mode (Options.Election.Safe):
// its elector guards the lease and its leader-only chores are fenced.
func (r *Runner) Safe() bool { return r.elector.Safe() }

// Done is closed when every goroutine of the runner has returned, after Stop
// or after Start's context was cancelled.
func (r *Runner) Done() <-chan struct{} { return r.done }

// Start creates the stream and the consumer group if needed, then starts the
// elector, the fetcher and the chore ticker, and returns.
//
// Cancelling ctx kills the runner: it stops dead, as if its process had
// crashed. It releases nothing, acknowledges nothing, sends no more Redis
// commands (the lease is left to expire, the tasks it was running to be
// reclaimed by others) and reports no more events. Done is closed once its
// goroutines have returned: like Stop, it waits for the fetcher's read in
// flight (up to Block + 10 s when its reply is lost). To simulate a crash
// fully, also close its client, which also ends that read at once.
func (r *Runner) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != stateNew {
		return errors.New("runner: Start called twice, or after Stop")
	}
	if err := r.ensureGroup(ctx); err != nil {
		return err
	}
	r.state = stateRunning
	r.ctx = ctx
	r.taskCtx, r.cancelTasks = context.WithCancel(ctx)
	fetchCtx, cancelFetch := context.WithCancel(ctx)
	choreCtx, cancelChores := context.WithCancel(ctx)
	r.cancelFetch, r.cancelChores = cancelFetch, cancelChores
	r.fetchDone = make(chan struct{})
	r.choreDone = make(chan struct{})
	r.electionDone = make(chan struct{})
	r.electorStopped = make(chan struct{})
	r.stopReq = make(chan context.Context)

	r.startAcker()
	r.pool.open(r.worker)
	go r.watchElection()
	_ = r.elector.Start() // new in New and never stopped before: it starts
	go r.fetch(fetchCtx)
	go r.chores(choreCtx)
	go r.supervise()
	return nil
}

// ensureGroup creates the group at the start of the stream (and the stream),
// so that tasks dispatched before any instance ran are not skipped.
func (r *Runner) ensureGroup(ctx context.Context) error {
	err := r.rdb.XGroupCreateMkStream(ctx, r.keys.stream, r.cfg.Group, "0").Err()
	if err != nil && !strings.HasPrefix(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("runner: creating consumer group %q on %s: %w", r.cfg.Group, r.keys.stream, err)
	}
	return nil
}

// Stop stops the runner gracefully: it stops fetching, lets the tasks in
// flight finish until ctx is done, then hands the unfinished ones back to the
// stream and cancels their handlers, stops the chores, steps down and
// releases the lease (so another instance promotes on its next election
// tick), and leaves the group.
//
// Every goroutine of the runner has returned when Stop returns, so Stop takes
// as long as they do: ctx bounds the tasks in flight; the fetcher's current
// read takes up to Block — or, when its reply is lost, go-redis's
// blocking-read timeout, Block + 10 s, since go-redis does not end a read
// when its context is cancelled (closing the client does); the hand-back and leave calls, and the re-sends of
// an unanswered acknowledgement of the tasks that completed, are bounded by
// the elector's StopTimeout (default TTL), and so is the elector's release.
// Against an unreachable Redis, go-redis honours those bounds only with
// ContextTimeoutEnabled; otherwise its ReadTimeout and MaxRetries decide. The
// one exception is a handler that ignores its cancelled ctx: Stop gives up on
// it after StopTimeout, says so in its error, and leaves it running.
//
// Stop after a kill only waits for the runner to wind down and returns nil.
// Stop is idempotent; Stop before Start makes a later Start fail.
func (r *Runner) Stop(ctx context.Context) error {
	r.mu.Lock()
	if r.state != stateRunning {
		if r.state == stateNew {
			r.state = stateStopped
			close(r.done)
		}
		r.mu.Unlock()
		<-r.done
		return r.stopErr
	}
	r.mu.Unlock()
	select {
	case r.stopReq <- ctx:
	case <-r.done:
	}
	<-r.done
	return r.stopErr
}

// supervise waits for the end, graceful or not, and carries it out.
func (r *Runner) supervise() {
	defer close(r.done)
	select {
	case <-r.ctx.Done():
		r.kill()
	case ctx := <-r.stopReq:
		r.stopErr = r.shutdown(ctx)
	}
	r.mu.Lock()
	r.state = stateStopped
	r.mu.Unlock()
}

// kill winds the runner down after Start's context was cancelled. Every
// goroutine sees the cancellation; the lease client refuses to run the
// release, so the elector stops without a word to Redis.
func (r *Runner) kill() {
	r.killed.Store(true)
	<-r.fetchDone
	<-r.choreDone
	// Handlers saw the cancellation; one that ignores it is abandoned after
	// the stop bound, as in a graceful stop, so Done is never held forever.
	wait, cancel := context.WithTimeout(context.Background(), r.stopBound())
	_ = r.pool.waitIdle(wait)
	cancel()
	r.stopWorkers()
	// The acker acknowledges nothing more: the completed tasks it held are
	// reclaimed. It may be inside a Redis call: wait for it within the bound.
	acked := make(chan struct{})
	go func() { r.closeAcks(); close(acked) }()
	select {
	case <-acked:
	case <-time.After(r.stopBound()):
	}
	_ = r.stopElection()
	r.cancelTasks()
	r.cancelFetch()
	r.cancelChores()
}

// stopWorkers closes the pool and waits for its workers to exit: every one,
// but those still in a handler that ignores its cancelled ctx, which exit when
// their handler returns. Idle workers exit at once; the wait is bounded all
// the same.
func (r *Runner) stopWorkers() {
	r.pool.close()
	wait, cancel := context.WithTimeout(context.Background(), r.stopBound())
	defer cancel()
	_ = r.pool.waitWorkers(wait)
}

// stopBound is how long a stop waits for what it cannot hurry: the
// elector's StopTimeout, which defaults to its TTL.
func (r *Runner) stopBound() time.Duration {
	if b := r.cfg.Election.StopTimeout; b > 0 {
		return b
	}
	return r.cfg.Election.TTL
}

// shutdown is Stop's work.
func (r *Runner) shutdown(ctx context.Context) error {
	r.stopAt = r.clock.Now()
	close(r.stopping)
	bound := r.stopBound()
	var errs []error
	r.cancelFetch()
	<-r.fetchDone
	if r.pool.waitIdle(ctx) != nil {
		// Out of time: return what is unfinished to the stream first, so the
		// handlers' cancellation below does not count as a failure.
		cleanup, cancel := context.WithTimeout(r.ctx, bound)
		errs = append(errs, r.handBackAll(cleanup))
		r.cancelTasks()
		if r.pool.waitIdle(cleanup) != nil {
			_, busy := r.pool.state()
			errs = append(errs, fmt.Errorf("runner: stop: %d handlers ignored their cancelled ctx for %v; left running", busy, bound))
		}
		cancel()
	}
	r.stopWorkers()
	// Every completed task is acknowledged before the instance leaves.
	r.closeAcks()
	r.cancelChores()
	<-r.choreDone
	errs = append(errs, r.stopElection())
	cleanup, cancel := context.WithTimeout(r.ctx, bound)
	errs = append(errs, r.leave(cleanup))
	cancel()
	r.cancelTasks()
	return errors.Join(errs...)
}

// leave removes this instance from the live set, and its consumer from the
// group when it holds no pending entry (it would only clutter XINFO), in one
// script: a read of this consumer landing between a separate check and the
// delete (a fetch still on the wire, a client's retry) would leave entries
// delivered and no longer pending, which no XAUTOCLAIM returns.
func (r *Runner) leave(ctx context.Context) error {
	if err := leaveScript.Run(ctx, r.rdb, []string{r.keys.instances, r.keys.stream}, r.id, r.cfg.Group).Err(); err != nil {
		return fmt.Errorf("runner: stop: leaving the group (heartbeat, consumer %s): %w", r.id, err)
	}
	return nil
}
