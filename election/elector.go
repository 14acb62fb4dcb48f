// Package election is TaskRunner's cooperative leader election on a single
// Redis key, exactly as the spec (leader-election.md) describes it: the
// instance that holds the lease taskrunner:leader:<base32(sha1(Key))> is the
// leader; it renews the lease every TTL/2 + jitter; followers try to take it
// every Wait.
//
// The decisions live in Machine, a pure state machine (no goroutines, no
// clock, no I/O). Elector is the thin shell around it: one goroutine that
// feeds the machine timer fires and operation results and carries out its
// steps, the three Lua scripts, and an ordered signal dispatcher.
//
// The package fixes the defects known in ports of this design (see the
// Signals section of Elector): IDs come from crypto/rand; promote and demote
// are delivered in order and never block the election loop; errors never
// block it either; Stop is bounded and always leaves the elector stopped.
package election

import (
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"
)

// KeyPrefix is the prefix of every lease key.
const KeyPrefix = "taskrunner:leader:"

// LeaderKey returns the Redis key of the lease for name (the consumer group
// in TaskRunner): taskrunner:leader:<base32(sha1(name))>.
func LeaderKey(name string) string {
	sum := sha1.Sum([]byte(name))
	return KeyPrefix + base32.StdEncoding.EncodeToString(sum[:])
}

// HashTag returns the Redis Cluster hash tag of the lease of name:
// "{" + LeaderKey(name) + "}". The lease key itself has no braces, so its slot
// is the CRC16 of the whole key, which is exactly this tag's content: every
// key that carries the tag lives in the lease's slot. The fencing token
// (TokenKey) carries it, and so do the runner's keys, so that one Lua script
// can check the lease and the token and write them, on a Redis Cluster too.
// The tag never contains a brace (base32), whatever name is.
func HashTag(name string) string { return "{" + LeaderKey(name) + "}" }

// TokenKey returns the key of the fencing token counter of the lease of name
// (safe mode): taskrunner:{taskrunner:leader:<base32(sha1(name))>}:token, in
// the lease's hash slot. It has no TTL: it outlives every lease.
func TokenKey(name string) string { return "taskrunner:" + HashTag(name) + ":token" }

// ErrorBuffer is the capacity of the onError channel. Errors that find it
// full are dropped and counted (DroppedErrors): an unread error channel must
// never stall renewals.
const ErrorBuffer = 16

// Opts configures an Elector. Redis, Key, TTL and Wait are required; every
// other zero value means the documented default, which is the spec's
// behaviour.
type Opts struct {
	// Redis runs the lease scripts. *redis.Client and *redis.ClusterClient
	// both satisfy it (the lease is a single key, so one slot).
	Redis redis.Scripter
	// Key names the lease; the Redis key is LeaderKey(Key).
	Key string
	// TTL is how long the lease lives without renewal (PX, so whole
	// milliseconds; at least 2ms). The leader renews after TTL/2 + jitter.
	TTL time.Duration
	// Wait is how often a follower retries to acquire the lease, and the
	// delay before the next election after a lost or failed renewal.
	Wait time.Duration
	// JitterMS adds a uniform random [0, JitterMS) milliseconds to each
	// renewal interval. 0 means none.
	JitterMS int

	// Clock drives every timer and timestamps every signal. Default
	// clock.New(), the real clock. The one exception is Stop's bound, which
	// is real time: it is a promise to the caller, whose time is real.
	Clock clock.Clock
	// ID is the value this instance writes into the lease. Default: 128
	// random bits from crypto/rand, hex-encoded — never a time-seeded PRNG,
	// under which instances started together share an ID.
	ID string
	// OpTimeout bounds each acquire, renew and release with a context
	// deadline. 0 means none (the spec's behaviour): each call is bounded
	// only by the client's own timeouts. go-redis honours the deadline only
	// when the client has ContextTimeoutEnabled; otherwise its ReadTimeout
	// (and MaxRetries) decide how long a call to an unreachable Redis takes.
	// The deadline is taken from Clock, as a drifting process's would be.
	OpTimeout time.Duration
	// StopTimeout bounds Stop. Default TTL: after TTL an unreleased lease
	// has expired anyway, so waiting longer buys nothing.
	StopTimeout time.Duration
	// Logger receives debug logs of every transition. Default: none.
	Logger *slog.Logger
	// Jitter returns a uniform integer in [0, n); a simulator passes a
	// seeded source. Default: math/rand/v2.
	Jitter func(n int) int
}

// Validate reports the first problem with o, or nil.
func (o Opts) Validate() error {
	switch {
	case o.Redis == nil:
		return errors.New("election: Opts.Redis is nil")
	case o.TTL < 2*time.Millisecond:
		return fmt.Errorf("election: Opts.TTL is %v; it must be at least 2ms (the lease uses PX milliseconds)", o.TTL)
	case o.Wait <= 0:
		return fmt.Errorf("election: Opts.Wait is %v; it must be positive", o.Wait)
	case o.JitterMS < 0:
		return fmt.Errorf("election: Opts.JitterMS is %d; it must not be negative", o.JitterMS)
	case int64(o.JitterMS) >= ceilMS(o.TTL/2):
		// Renewal comes TTL/2 + jitter after the last one; jitter of TTL/2
		// or more could renew after the lease expired. Compared in whole
		// milliseconds, so a huge JitterMS cannot overflow a Duration.
		return fmt.Errorf("election: Opts.JitterMS is %d ms; it must be less than TTL/2 (%v)", o.JitterMS, o.TTL/2)
	case o.OpTimeout < 0:
		return fmt.Errorf("election: Opts.OpTimeout is %v; it must not be negative", o.OpTimeout)
	case o.StopTimeout < 0:
		return fmt.Errorf("election: Opts.StopTimeout is %v; it must not be negative", o.StopTimeout)
	}
	return nil
}

// ceilMS is d in milliseconds, rounded up.
func ceilMS(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// Elector runs the election for one instance. Create it with NewElector.
//
// Signals. onPromote and onDemote are unbuffered and fed by one dispatcher
// goroutine that hands over one signal at a time, in the order the machine
// decided them, from an unbounded queue. So a consumer that selects on both
// (as the spec's StartElection does) can never receive a demote before the
// promote it follows, no signal is lost while the elector runs, and a slow
// consumer delays only the dispatcher, never a renewal. Signals still queued
// when Stop's bound runs out are dropped (DroppedSignals). The channels are
// never closed. IsLeader is updated at the moment of the decision, before
// the signal is delivered.
type Elector struct {
	opts  Opts
	key   string
	id    string
	clock clock.Clock
	log   *slog.Logger

	promote, demote chan time.Time
	errs            chan error

	leading        atomic.Bool
	droppedErrors  atomic.Uint64
	droppedSignals atomic.Uint64

	mu         sync.Mutex
	started    bool
	stopping   bool
	stopCh     chan struct{}
	stopCtx    context.Context // set by Stop before stopCh is closed
	stopCancel context.CancelFunc
	done       chan struct{} // closed when the loop and the dispatcher have exited
	stopErr    error         // written by the loop before done is closed
	signals    chan signal   // loop -> dispatcher; closed when the loop exits
}

type signal struct {
	s  Signal
	at time.Time
}

// NewElector returns an elector and its promote, demote and error channels.
// It panics with the Validate error if the options are invalid: they are a
// programming error, and the spec's signature has no error result. Call
// Opts.Validate first to check options that come from configuration.
func NewElector(o Opts) (*Elector, <-chan time.Time, <-chan time.Time, <-chan error) {
	if err := o.Validate(); err != nil {
		panic(err)
	}
	if o.Clock == nil {
		o.Clock = clock.New()
	}
	if o.ID == "" {
		var b [16]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand docs)
		o.ID = hex.EncodeToString(b[:])
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = o.TTL
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Jitter == nil {
		o.Jitter = mrand.IntN
	}
	e := &Elector{
		opts:    o,
		key:     LeaderKey(o.Key),
		id:      o.ID,
		clock:   o.Clock,
		promote: make(chan time.Time),
		demote:  make(chan time.Time),
		errs:    make(chan error, ErrorBuffer),
		stopCh:  make(chan struct{}),
		done:    make(chan struct{}),
		signals: make(chan signal),
	}
	e.log = o.Logger.With("elector", e.id, "key", e.key)
	return e, e.promote, e.demote, e.errs
}

// ID returns the value this instance writes into the lease.
func (e *Elector) ID() string { return e.id }

// Key returns the Redis key of the lease.
func (e *Elector) Key() string { return e.key }

// IsLeader reports whether this instance currently believes it holds the
// lease. It turns false at Stop, before the lease is released.
func (e *Elector) IsLeader() bool { return e.leading.Load() }

// DroppedErrors counts errors dropped because onError was full.
func (e *Elector) DroppedErrors() uint64 { return e.droppedErrors.Load() }

// DroppedSignals counts promote/demote signals not delivered before Stop
// returned because nobody read them.
func (e *Elector) DroppedSignals() uint64 { return e.droppedSignals.Load() }

// Start runs the first election at once and keeps electing until Stop. It
// returns immediately. An elector runs once: Start after Stop, or a second
// Start, does nothing.
func (e *Elector) Start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started || e.stopping {
		return
	}
	e.started = true
	loopDone := make(chan struct{})
	go func() { defer close(loopDone); e.loop() }()
	go func() {
		e.dispatch()
		<-loopDone
		e.stopCancel() // the loop exits only after Stop set it
		close(e.done)
	}()
}

// Stop stops the elector: it cancels the timers, emits a demotion if this
// instance was leading (and clears IsLeader), then releases the lease if it
// may be ours (held, or an acquire or renew in flight whose write may still
// land; the release deletes the key only if it holds our ID).
//
// Stop returns within StopTimeout (default TTL) of real time, plus
// scheduling, whatever Redis does: a release or an in-flight call still
// running at the bound is cancelled and Stop returns an error saying so. The
// elector is fully stopped on return either way. A Redis call cancelled at
// the bound ends when the client notices: at once with ContextTimeoutEnabled,
// else within the client's ReadTimeout; until then its goroutine lingers,
// holding nothing and sending nowhere.
//
// Stop also delivers the signals still queued, its own demotion included,
// within the same bound: if nobody reads onPromote/onDemote any more, Stop
// takes the whole StopTimeout and counts them in DroppedSignals. Keep a
// reader running until Stop returns (as the spec's StartElection does).
//
// Stop is idempotent and safe to call concurrently with anything; every call
// returns the same error. Stop before Start returns nil and Start then does
// nothing.
func (e *Elector) Stop() error {
	e.mu.Lock()
	if !e.started {
		e.stopping = true
		e.mu.Unlock()
		return nil
	}
	if !e.stopping {
		e.stopping = true
		e.stopCtx, e.stopCancel = context.WithTimeout(context.Background(), e.opts.StopTimeout)
		close(e.stopCh)
	}
	e.mu.Unlock()
	<-e.done
	return e.stopErr
}

type result struct {
	op  Op
	ok  bool
	err error
}

// loop is the only goroutine that touches the machine.
func (e *Elector) loop() {
	m := NewMachine(MachineConfig{TTL: e.opts.TTL, Wait: e.opts.Wait, JitterMS: e.opts.JitterMS, Jitter: e.opts.Jitter})
	results := make(chan result, 1) // one op in flight at most, so sends never block
	var (
		timer    *clock.Timer
		timerC   <-chan time.Time
		cancelOp context.CancelFunc = func() {}
		stopCh                      = e.stopCh
		deadline <-chan struct{}
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		cancelOp()
		e.leading.Store(false)
		close(e.signals)
	}()

	step := m.Start()
	for {
		for _, s := range step.Signals {
			e.emit(s, step.Err)
		}
		if step.Run != OpNone {
			cancelOp = e.run(step.Run, results)
		}
		if step.Wake > 0 {
			if timer != nil {
				timer.Stop()
			}
			timer = e.clock.Timer(step.Wake)
			timerC = timer.C
		}
		if step.Done {
			e.stopErr = step.Err
			e.log.Debug("stopped", "err", step.Err)
			return
		}
		select {
		case <-timerC:
			timerC = nil
			step = m.Timer()
		case r := <-results:
			e.log.Debug("operation finished", "op", r.op, "ok", r.ok, "err", r.err)
			step = m.Result(r.op, r.ok, r.err)
		case <-stopCh:
			stopCh = nil
			if timer != nil {
				timer.Stop()
				timerC = nil
			}
			deadline = e.stopCtx.Done()
			// An acquire or renew in flight has no reason to go on.
			if m.InFlight() != OpRelease {
				cancelOp()
			}
			step = m.Stop()
		case <-deadline:
			e.stopErr = fmt.Errorf("election: stop: %v still in flight after StopTimeout %v; lease left to expire", m.InFlight(), e.opts.StopTimeout)
			return
		}
	}
}

// run starts op in its own goroutine, so that Stop never waits on Redis
// longer than its bound, and returns the call's cancel func.
func (e *Elector) run(op Op, results chan<- result) context.CancelFunc {
	parent := context.Background()
	if op == OpRelease {
		parent = e.stopCtx
	}
	var ctx context.Context
	var cancel context.CancelFunc
	if e.opts.OpTimeout > 0 {
		ctx, cancel = e.clock.WithTimeout(parent, e.opts.OpTimeout)
	} else {
		ctx, cancel = context.WithCancel(parent)
	}
	go func() {
		ok, err := RunOp(ctx, e.opts.Redis, op, e.key, e.id, e.opts.TTL)
		cancel()
		results <- result{op, ok, err}
	}()
	return cancel
}

// emit carries out one signal of a step.
func (e *Elector) emit(s Signal, err error) {
	switch s {
	case SignalPromote:
		e.leading.Store(true)
	case SignalDemote:
		e.leading.Store(false)
	case SignalError:
		e.log.Debug("error", "err", err)
		select {
		case e.errs <- err:
		default:
			e.droppedErrors.Add(1)
		}
		return
	}
	e.log.Debug("signal", "signal", s)
	e.signals <- signal{s, e.clock.Now()}
}

// dispatch hands promote and demote signals to the user one at a time, in
// order. It always accepts new signals, so the loop never waits on a reader.
func (e *Elector) dispatch() {
	var (
		queue    []signal
		in       = e.signals
		deadline <-chan struct{}
	)
	for in != nil || len(queue) > 0 {
		var out chan time.Time
		var next time.Time
		if len(queue) > 0 {
			next = queue[0].at
			out = e.promote
			if queue[0].s == SignalDemote {
				out = e.demote
			}
		}
		select {
		case s, ok := <-in:
			if !ok {
				in = nil
				// The loop only exits after Stop, so stopCtx is set.
				deadline = e.stopCtx.Done()
				continue
			}
			queue = append(queue, s)
		case out <- next:
			queue = queue[1:]
		case <-deadline:
			e.droppedSignals.Add(uint64(len(queue)))
			return
		}
	}
}
