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
// are delivered in order, coalesced so the queue stays bounded, and never
// block the election loop; errors never block it either; Stop is bounded,
// releases the lease only after the reader received the demotion, and always
// leaves the elector stopped.
//
// Safe mode (Opts.Safe, off by default: the zero value is the spec's elector)
// adds a lease guard — the leader counts its lease from the send time of its
// last successful acquire or renew and demotes itself at sentAt + TTL −
// SafeMargin, even while a renewal hangs, without relying on the client's
// timeouts — an acquire that takes back a lease holding our own ID, and a
// fencing token per promotion (Leadership().Token, kept in TokenKey, in the
// lease's Redis Cluster slot: HashTag) for writers to check.
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

	"github.com/leaselab/leaselab/election/timing"

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
func TokenKey(name string) string { return tokenKeyOf(LeaderKey(name)) }

// OwnerKey returns the key that holds the process nonce of the safe-mode
// elector that last acquired the lease of name:
// taskrunner:{taskrunner:leader:<base32(sha1(name))>}:owner, in the lease's
// hash slot. It expires with the lease (the safe acquire and renew give it
// the lease's TTL, the safe release deletes it with the lease). It tells two processes that share an ID apart
// (ErrDuplicateID).
func OwnerKey(name string) string { return ownerKeyOf(LeaderKey(name)) }

// tokenKeyOf and ownerKeyOf derive the safe mode's keys from the lease key.
func tokenKeyOf(lease string) string { return "taskrunner:{" + lease + "}:token" }
func ownerKeyOf(lease string) string { return "taskrunner:{" + lease + "}:owner" }

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
	// Key names the lease; the Redis key is LeaderKey(Key). Required, in
	// spec mode too (Validate refuses ""): the spec derives the lease from a
	// consumer group's name, and an empty name is a missing setting — every
	// group that missed it would share one lease.
	Key string
	// TTL is how long the lease lives without renewal (PX, so whole
	// milliseconds; at least 2ms; a fraction of a millisecond is cut off in
	// Redis, which safe mode refuses unless SafeMargin exceeds it). The
	// leader renews after TTL/2 + jitter.
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
	// under which instances started together share an ID. An ID must be
	// unique per process. Safe mode detects two processes sharing one (each
	// elector also writes a random nonce of its own to OwnerKey(Key) when it
	// acquires, and its acquire and renew refuse a lease that holds its ID
	// under another nonce: ErrDuplicateID, and its release leaves such a
	// lease alone), so only the one that acquired last leads. Spec mode cannot tell them apart (the spec's scripts
	// compare the ID only): once one of them acquires, both renew the same
	// lease and both lead.
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

	// Safe turns on safe mode (the zero value, false, is the spec's elector
	// exactly):
	//   - the lease guard: a leader counts its lease from the send time of
	//     the last successful acquire or renew and demotes itself at
	//     sentAt + TTL − SafeMargin by Clock, even while a renew is still in
	//     flight; each acquire and renew gets a deadline from the validity
	//     left (the shell stops waiting at it and ignores a late reply,
	//     whatever the client's timeouts; the call's context carries it too);
	//   - acquire also takes a lease that already holds this ID and this
	//     elector's nonce (no phantom lease after a lost reply); a lease
	//     holding this ID for another process is refused (ErrDuplicateID);
	//   - fencing: each promotion carries a token (Leadership().Token) that
	//     grows with every promotion of the group (see Leadership.Token for
	//     exactly when), kept in TokenKey(Key), in the lease's Cluster slot.
	//     Writers check it (the runner's chores do), so a stale leader's late
	//     write changes nothing.
	// Every instance of a group must use the same mode.
	Safe bool
	// SafeMargin (safe mode) is taken off the lease's validity. Default
	// DefaultMargin(TTL) = TTL/100 + 2ms. The guard holds — the leader
	// demotes before Redis expires its key — while the leader's clock runs
	// at least (1 − SafeMargin/TTL) as fast as Redis's and its guard timer
	// fires late by less than what is left of the margin: by default about
	// 1% of the TTL of clock drift plus ~2ms of timer and scheduling
	// lateness. Beyond that (a clock at 0.3×, a process paused past the
	// margin) a stale leader may still believe it leads for a while, but
	// fenced writes are still refused: the fence is checked by Redis, not
	// by a clock.
	SafeMargin time.Duration

	// OnTransition, if set, receives every promotion, demotion (with its
	// reason) and error, called by the election loop itself as each is
	// decided. It MUST NOT block or take long: the loop waits for it, so a
	// slow hook delays renewals. Hand the transition off instead (a
	// publish.Publisher only appends it to a bounded buffer). Default: none.
	OnTransition func(Transition)
}

// Validate reports the first problem with o, or nil.
func (o Opts) Validate() error {
	if o.Redis == nil {
		return errors.New("election: Opts.Redis is nil")
	}
	if o.Key == "" {
		return errors.New("election: Opts.Key is empty; it names the lease (LeaderKey(Key))")
	}
	if ps := o.timings().Problems(); len(ps) > 0 {
		return errors.New("election: Opts." + ps[0].String())
	}
	return nil
}

// timings are the options the timing rules check.
func (o Opts) timings() timing.Lease {
	return timing.Lease{TTL: o.TTL, Wait: o.Wait, JitterMS: o.JitterMS, OpTimeout: o.OpTimeout,
		StopTimeout: o.StopTimeout, Safe: o.Safe, SafeMargin: o.SafeMargin}
}

// margin is the safe mode's margin, defaulted.
func (o Opts) margin() time.Duration { return o.timings().Margin() }

// Elector runs the election for one instance. Create it with NewElector.
//
// Signals. onPromote and onDemote are unbuffered and fed by one dispatcher
// goroutine that hands over one signal at a time, in the order the machine
// decided them. So a consumer that selects on both (as the spec's
// StartElection does) can never receive a demote before the promote it
// follows, and a slow consumer delays only the dispatcher, never a renewal.
//
// The queue is coalesced, so it is bounded: the dispatcher keeps only what
// the reader must see to go from the state it last received to the current
// one — nothing, a promote, a demote, or a demote then a promote (it led,
// and leads again in a new term) — and counts every signal it merged away
// (MergedSignals). A promote the reader never received and its demote cancel
// out: the reader never acted on that term. Each delivered signal carries
// the time of its decision (for a demote: when the term the reader saw
// ended). Leadership reports the current state, term and token at any time.
// The channels are never closed. IsLeader is updated at the moment of the
// decision, before the signal is delivered.
//
// The contract, against the spec's example (a goroutine that stores true on
// onPromote and false on onDemote): once the reader has caught up, its flag
// equals IsLeader; while it lags, it holds the state it last received, and
// what it receives next moves it toward the current state in order. The
// spec's "fired once when this instance wins the lease" holds for every win
// the reader keeps up with; a term that began and ended while the reader
// lagged is not signalled at all (it never acted on it). A reader that must
// see every term (to count promotions, to audit) reads Leadership().Term, or
// takes Opts.OnTransition, which reports every transition, uncoalesced.
// Nobody reading at all is allowed: nothing is delivered, IsLeader and
// Leadership stay current, and Stop releases the lease at once (no
// promotion was received, so none must be revoked first). A reader that
// received a promotion and then stopped reading is the one case Stop cannot
// release in: it waits StopTimeout for the demotion to be received, then
// leaves the lease to expire (ErrDemotionNotDelivered).
type Elector struct {
	opts  Opts
	key   string
	token string // TokenKey(Key), safe mode
	id    string
	nonce string // safe mode: this elector's, in OwnerKey while it holds the lease
	clock clock.Clock
	log   *slog.Logger

	promote, demote chan time.Time
	errs            chan error

	belief         atomic.Pointer[belief] // non-nil while leading: what IsLeader reads, in one load
	droppedErrors  atomic.Uint64
	droppedSignals atomic.Uint64
	mergedSignals  atomic.Uint64
	// resolved is the serial of the last signal after which the dispatcher
	// had nothing left to hand over; drained (buffer 1) wakes the loop when
	// it moves.
	resolved atomic.Uint64
	drained  chan struct{}

	lmu       sync.Mutex
	lead      Leadership
	leadGuard *guard // lead's guard deadline, for Leadership's check

	mu         sync.Mutex
	started    bool
	stopping   bool
	stopCh     chan struct{}
	stopCtx    context.Context // set by Stop before stopCh is closed
	stopCancel context.CancelFunc
	done       chan struct{} // closed when stopped (loop and dispatcher exited)
	doneOnce   sync.Once
	stopErr    error       // written before done is closed
	signals    chan signal // loop -> dispatcher; closed when the loop exits
}

// Leadership is what the elector has decided, as of the decision (signals
// may still be on their way to the reader).
type Leadership struct {
	// Leader: this instance believes it holds the lease (IsLeader).
	Leader bool
	// Term counts this elector's promotions; while Leader it names the
	// current term, and a reader can tell a new term from the one it saw.
	Term uint64
	// Token is the fencing token of term Term (safe mode; 0 in spec mode).
	// Tokens grow with every promotion of any instance of the group while
	// the token counter (TokenKey) survives. When it is lost (a restart
	// without persistence, FLUSHALL, a lossy failover), the next token is
	// still above every token issued before the issuing Redis's clock
	// reading (it is at least that clock in µs) and above every token the
	// winner has seen (its own terms; the counter its failed acquires read).
	// Only when all three fail — counter lost, that Redis's clock behind the
	// last token's issue, and a winner that never saw the last token (a new
	// instance, or a follower whose last attempt came before it) — can a
	// token repeat or go back. The runner's fence compares tokens for
	// equality with the counter and is unaffected.
	Token int64
	// Since is when Leader last changed, by the elector's Clock.
	Since time.Time
	// GuardDeadline (safe mode, while Leader) is when the lease guard will
	// demote this instance unless a renewal succeeds first: the send time
	// of the last successful acquire or renew + TTL − SafeMargin, by the
	// elector's Clock. Zero otherwise.
	GuardDeadline time.Time
	// Safe reports whether safe mode is on.
	Safe bool
}

type signal struct {
	s      Signal
	at     time.Time
	term   uint64
	serial uint64
}

// ErrDemotionNotDelivered is wrapped by Stop's error when the reader did not
// receive the demotion within StopTimeout. The lease is then NOT released
// (it expires after TTL): a reader that has not seen the demotion may still
// act as leader. The usual cause is Stop called from the goroutine that reads
// the signals: call `go e.Stop()` there instead and keep reading until Done
// is closed (then e.Stop() returns the result at once).
var ErrDemotionNotDelivered = errors.New("the demotion was not received by the signal reader")

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
		o.ID = randomHex()
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
	if o.Safe {
		o.SafeMargin = o.margin()
	}
	e := &Elector{
		opts:    o,
		key:     LeaderKey(o.Key),
		token:   TokenKey(o.Key),
		id:      o.ID,
		nonce:   randomHex(),
		clock:   o.Clock,
		promote: make(chan time.Time),
		demote:  make(chan time.Time),
		errs:    make(chan error, ErrorBuffer),
		drained: make(chan struct{}, 1),
		stopCh:  make(chan struct{}),
		done:    make(chan struct{}),
		signals: make(chan signal),
	}
	e.lead.Safe = o.Safe
	e.log = o.Logger.With("elector", e.id, "key", e.key)
	return e, e.promote, e.demote, e.errs
}

// randomHex is 128 random bits from crypto/rand, hex-encoded.
func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand docs)
	return hex.EncodeToString(b[:])
}

// ID returns the value this instance writes into the lease.
func (e *Elector) ID() string { return e.id }

// Key returns the Redis key of the lease.
func (e *Elector) Key() string { return e.key }

// TokenKey returns the Redis key of the fencing token counter (used in safe
// mode): TokenKey(Opts.Key).
func (e *Elector) TokenKey() string { return e.token }

// Safe reports whether safe mode is on.
func (e *Elector) Safe() bool { return e.opts.Safe }

// Margin returns the safe mode's margin in force (0 in spec mode).
func (e *Elector) Margin() time.Duration { return e.opts.SafeMargin }

// IsLeader reports whether this instance currently believes it holds the
// lease. It turns false at Stop, before the lease is released. In safe mode
// it is also false from the guard deadline on (Leadership.GuardDeadline, by
// the elector's Clock), checked at each call: a starved election loop that
// has not yet acted on the guard cannot extend the belief.
func (e *Elector) IsLeader() bool {
	b := e.belief.Load()
	return b != nil && b.g.holds(e.clock)
}

// belief is a leader's state as IsLeader sees it: one pointer, so that a
// reader never pairs the flag of one decision with the guard of another
// (a demotion published between two loads read true after the deadline).
type belief struct {
	g *guard // safe mode: the guard deadline; nil in spec mode
}

// guard is a safe-mode leader's guard deadline: in after base, a reading of
// the elector's Clock (the send of the call that set the lease).
type guard struct {
	base time.Time
	in   time.Duration
}

// left is the time left until the deadline, measured as Clock.Since of the
// base reading (as Go's monotonic clock does: a wall-clock step moves none
// of it).
func (g *guard) left(c clock.Clock) time.Duration { return g.in - c.Since(g.base) }

// holds reports whether the deadline has not passed; a nil guard always holds.
func (g *guard) holds(c clock.Clock) bool { return g == nil || g.left(c) > 0 }

// deadline is the deadline as an instant of the Clock (zero for nil), for
// Leadership.GuardDeadline.
func (g *guard) deadline() time.Time {
	if g == nil {
		return time.Time{}
	}
	return g.base.Add(g.in)
}

// Leadership returns the current leadership decision: state, term, fencing
// token, and in safe mode the guard deadline. In safe mode, once the guard
// deadline has passed it reports Leader false (Since the deadline, no
// GuardDeadline) even if the election loop has not yet acted on it, as
// IsLeader does.
func (e *Elector) Leadership() Leadership {
	e.lmu.Lock()
	l, g := e.lead, e.leadGuard
	e.lmu.Unlock()
	if l.Leader && !g.holds(e.clock) {
		l.Leader, l.Since, l.GuardDeadline = false, l.GuardDeadline, time.Time{}
	}
	return l
}

// DroppedErrors counts errors dropped because onError was full.
func (e *Elector) DroppedErrors() uint64 { return e.droppedErrors.Load() }

// DroppedSignals counts promote/demote signals not delivered before Stop
// returned because nobody read them.
func (e *Elector) DroppedSignals() uint64 { return e.droppedSignals.Load() }

// MergedSignals counts promote/demote signals coalesced away because the
// reader lagged: pairs of a promote and a demote it never needed to see.
func (e *Elector) MergedSignals() uint64 { return e.mergedSignals.Load() }

// Done is closed once the elector has stopped (after Stop, or Stop before
// Start). Then Stop returns at once, with the stop's error.
func (e *Elector) Done() <-chan struct{} { return e.done }

// ErrStopped and ErrStarted are what Start returns when it did not start
// the election: an elector runs once, so Start after Stop or a second Start
// changes nothing. Create a new Elector to run again.
var (
	ErrStopped = errors.New("election: Start after Stop: an elector runs once; create a new one")
	ErrStarted = errors.New("election: Start called twice: the election is already running")
)

// Start runs the first election at once and keeps electing until Stop. It
// returns immediately, with nil. An elector runs once: Start after Stop
// returns ErrStopped, a second Start ErrStarted, and neither changes
// anything. (The spec's Start has no result; a call that ignores it, as the
// spec's example does, still compiles and behaves the same.)
func (e *Elector) Start() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.stopping:
		return ErrStopped
	case e.started:
		return ErrStarted
	}
	e.started = true
	loopDone := make(chan struct{})
	go func() { defer close(loopDone); e.loop() }()
	go func() {
		e.dispatch()
		<-loopDone
		e.stopCancel() // the loop exits only after Stop set it
		e.doneOnce.Do(func() { close(e.done) })
	}()
	return nil
}

// Stop stops the elector: it cancels the timers, emits a demotion if this
// instance was leading (and clears IsLeader), then releases the lease if it
// may be ours (held, or an acquire or renew in flight whose write may still
// land; the release deletes the key only if it holds our ID and, in safe
// mode, the owner key holds our nonce) — but only once
// the reader has received the demotion, so that no other instance can lead
// while this one's user still acts as leader. A demotion for a promotion the
// reader never received needs no delivery (it was never acted on).
//
// Stop returns within StopTimeout (default TTL) of real time, plus
// scheduling, whatever Redis and the reader do:
//   - a release or an in-flight call still running at the bound is
//     cancelled and Stop returns an error saying so;
//   - a demotion the reader has not received by the bound is dropped
//     (DroppedSignals), the lease is not released (it expires after TTL),
//     and the error wraps ErrDemotionNotDelivered. Calling Stop from the
//     goroutine that reads the signals ends this way, since nobody can
//     receive the demotion: there, call `go e.Stop()`, keep reading until
//     Done is closed, then take the result from e.Stop().
//
// The elector is fully stopped on return either way. A Redis call cancelled
// at the bound ends when the client notices: at once with
// ContextTimeoutEnabled, else within the client's ReadTimeout; until then
// its goroutine lingers, holding nothing and sending nowhere.
//
// Stop is idempotent and safe to call concurrently with anything; every call
// returns the same error. Stop before Start returns nil, and Start then
// returns ErrStopped.
func (e *Elector) Stop() error {
	e.mu.Lock()
	if !e.started {
		e.stopping = true
		e.mu.Unlock()
		e.doneOnce.Do(func() { close(e.done) })
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
	op    Op
	ok    bool
	token int64
	err   error
}

// loop is the only goroutine that touches the machine.
func (e *Elector) loop() {
	m := NewMachine(MachineOptions{TTL: e.opts.TTL, Wait: e.opts.Wait, JitterMS: e.opts.JitterMS, Jitter: e.opts.Jitter,
		Safe: e.opts.Safe, Margin: e.opts.SafeMargin})
	var (
		timer, dl   *clock.Timer
		timerC, dlC <-chan time.Time
		opC         <-chan result // the call in flight; an abandoned call's channel is dropped
		sentAt      time.Time
		cancelOp    context.CancelFunc = func() {}
		stopCh                         = e.stopCh
		deadline    <-chan struct{}
		serial      uint64          // of the last promote/demote sent to the dispatcher
		gd          *guard          // safe mode: the leader's guard deadline, nil if none
		seen        int64           // safe mode: the highest fencing token seen (a floor for the next)
		drained     <-chan struct{} // set while a release waits for the reader
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if dl != nil {
			dl.Stop()
		}
		cancelOp()
		e.belief.Store(nil)
		close(e.signals)
	}()

	// The step's durations count from anchor + off, anchor being a reading
	// of the clock: for an operation's result, the call's send plus the
	// Elapsed measured when its reply was read, so that the guard and the
	// next renewal are anchored at the send however long the loop is held up
	// between reading the reply and arming its timers (CPU starvation, a GC
	// stop); otherwise now. Durations between instants are taken with
	// Clock.Since of a reading, as Go's monotonic clock does, so a step of
	// the wall clock moves none of them.
	var (
		anchor time.Time
		off    time.Duration
	)
	step := m.Start()
	for {
		now := e.clock.Now()
		if anchor.IsZero() {
			anchor, off = now, 0
		}
		if m.State() != Leader {
			gd = nil
		} else if step.Deadline > 0 {
			gd = &guard{base: anchor, in: off + step.Deadline} // = sentAt + TTL − margin
		}
		e.publish(m, now, gd)
		for _, s := range step.Signals {
			e.observe(m, s, step.Err, now, stopCh == nil)
			serial = e.emit(m, s, step.Err, now, serial)
		}
		if step.Run != OpNone {
			if step.Run == OpRelease && e.resolved.Load() < serial {
				// The reader has not received the demotion yet: the lease
				// stays ours until it has.
				drained = e.drained
			} else {
				opC, cancelOp, sentAt = e.run(step.Run, step.Deadline, gd, seen)
			}
		}
		// The timers are armed for the time left until their instants, as
		// of now: a stall since the anchor shortens them, never moves them
		// later.
		if step.Deadline > 0 || step.Wake > 0 {
			passed := e.clock.Since(anchor)
			if step.Deadline > 0 {
				if dl != nil {
					dl.Stop()
				}
				dl = e.clock.Timer(max(off+step.Deadline-passed, 0))
				dlC = dl.C
			}
			if step.Wake > 0 {
				if timer != nil {
					timer.Stop()
				}
				timer = e.clock.Timer(max(off+step.Wake-passed, 0))
				timerC = timer.C
			}
		}
		anchor = time.Time{}
		if step.Done {
			e.stopErr = step.Err
			e.log.Debug("stopped", "err", step.Err)
			return
		}
		select {
		case <-timerC:
			timerC = nil
			step = m.Timer()
		case <-dlC:
			dlC = nil
			before := m.InFlight()
			step = m.Expired()
			if before != OpNone && before != OpRelease && m.InFlight() != before {
				e.log.Debug("deadline: call abandoned", "op", before)
				cancelOp()
				opC = nil
			}
		case r := <-opC:
			opC = nil
			e.log.Debug("operation finished", "op", r.op, "ok", r.ok, "err", r.err)
			elapsed := e.clock.Since(sentAt)
			anchor, off = sentAt, elapsed
			seen = max(seen, r.token) // a won acquire's token, or the counter a lost one read
			if !r.ok {
				r.token = 0
			}
			step = m.Finish(Outcome{Op: r.op, OK: r.ok, Err: r.err, Token: r.token, Elapsed: elapsed})
		case <-drained:
			step = Step{}
			if e.resolved.Load() >= serial {
				drained = nil
				opC, cancelOp, sentAt = e.run(OpRelease, 0, nil, seen)
			}
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
			if drained != nil {
				e.stopErr = fmt.Errorf("election: stop: %w within StopTimeout %v; lease not released, left to expire", ErrDemotionNotDelivered, e.opts.StopTimeout)
			} else {
				e.stopErr = fmt.Errorf("election: stop: %v still in flight after StopTimeout %v; lease left to expire", m.InFlight(), e.opts.StopTimeout)
			}
			return
		}
	}
}

// run starts op in its own goroutine, so that Stop never waits on Redis
// longer than its bound, and returns the channel its result will come on,
// the call's cancel func and the send time. In safe mode the call's context
// carries its deadline (acquire: d; renew: the guard), though the loop does
// not rely on the client honouring it. seen is the highest fencing token this
// elector has seen (safe mode), which a won acquire's token exceeds.
func (e *Elector) run(op Op, d time.Duration, g *guard, seen int64) (<-chan result, context.CancelFunc, time.Time) {
	parent := context.Background()
	if op == OpRelease {
		parent = e.stopCtx
	}
	sentAt := e.clock.Now()
	timeout := e.opts.OpTimeout
	if e.opts.Safe && op != OpRelease {
		if op == OpRenew && g != nil {
			d = g.left(e.clock)
		}
		if d > 0 && (timeout == 0 || d < timeout) {
			timeout = d
		}
	}
	var ctx context.Context
	var cancel context.CancelFunc
	if timeout > 0 {
		ctx, cancel = e.clock.WithTimeout(parent, timeout)
	} else {
		ctx, cancel = context.WithCancel(parent)
	}
	results := make(chan result, 1) // never blocks, even if abandoned
	go func() {
		var r result
		r.op = op
		if e.opts.Safe {
			r.ok, r.token, r.err = RunSafeOp(ctx, e.opts.Redis, op, SafeLease{Key: e.key, ID: e.id, Nonce: e.nonce, TTL: e.opts.TTL, Seen: seen})
		} else {
			r.ok, r.err = RunOp(ctx, e.opts.Redis, op, e.key, e.id, e.opts.TTL)
		}
		cancel()
		results <- r
	}()
	return results, cancel, sentAt
}

// publish records the machine's leadership decision for Leadership and
// IsLeader, before its signals go out.
func (e *Elector) publish(m *Machine, now time.Time, g *guard) {
	leader := m.State() == Leader
	if !leader {
		g = nil
	}
	e.lmu.Lock()
	if e.lead.Leader != leader {
		e.lead.Since = now
	}
	e.lead.Leader, e.lead.Term, e.lead.Token, e.lead.GuardDeadline = leader, m.Term(), m.Token(), g.deadline()
	e.leadGuard = g
	e.lmu.Unlock()
	if leader {
		e.belief.Store(&belief{g: g})
	} else {
		e.belief.Store(nil)
	}
}

// emit carries out one signal of a step and returns the serial of the last
// promote/demote handed to the dispatcher.
func (e *Elector) emit(m *Machine, s Signal, err error, now time.Time, serial uint64) uint64 {
	if s == SignalError {
		e.log.Debug("error", "err", err)
		select {
		case e.errs <- err:
		default:
			e.droppedErrors.Add(1)
		}
		return serial
	}
	e.log.Debug("signal", "signal", s)
	serial++
	e.signals <- signal{s: s, at: now, term: m.Term(), serial: serial}
	return serial
}

// dispatch hands promote and demote signals to the user one at a time, in
// order, coalescing what the reader no longer needs (see Elector). It always
// accepts new signals, so the loop never waits on a reader.
func (e *Elector) dispatch() {
	var (
		in       = e.signals
		deadline <-chan struct{}
		// What the reader has received, and what is decided now.
		seenLeader, curLeader bool
		seenTerm, curTerm     uint64
		promoteAt, endAt      time.Time // the current term's promotion; the end of the reader's term
		latest                uint64    // serial of the last signal received
	)
	// pending returns the first signal the reader must receive, its time,
	// and how many it must receive (0, 1 or 2).
	pending := func() (Signal, time.Time, int) {
		var first Signal
		var at time.Time
		n := 0
		if seenLeader && (!curLeader || curTerm != seenTerm) {
			first, at, n = SignalDemote, endAt, 1
		}
		if curLeader && (!seenLeader || curTerm != seenTerm) {
			if n == 0 {
				first, at = SignalPromote, promoteAt
			}
			n++
		}
		return first, at, n
	}
	for {
		first, at, n := pending()
		if n == 0 {
			if e.resolved.Load() != latest {
				e.resolved.Store(latest)
				select {
				case e.drained <- struct{}{}:
				default:
				}
			}
			if in == nil {
				return
			}
		}
		var out chan time.Time
		switch {
		case n > 0 && first == SignalPromote:
			out = e.promote
		case n > 0:
			out = e.demote
		}
		select {
		case s, ok := <-in:
			if !ok {
				in = nil
				// The loop only exits after Stop, so stopCtx is set.
				deadline = e.stopCtx.Done()
				continue
			}
			latest = s.serial
			switch s.s {
			case SignalPromote:
				curLeader, curTerm, promoteAt = true, s.term, s.at
			case SignalDemote:
				curLeader = false
				if seenLeader && s.term == seenTerm {
					endAt = s.at
				}
			}
			_, _, after := pending()
			e.mergedSignals.Add(uint64(n + 1 - after))
		case out <- at:
			if first == SignalDemote {
				seenLeader = false
			} else {
				seenLeader, seenTerm = true, curTerm
			}
		case <-deadline:
			e.droppedSignals.Add(uint64(n))
			return
		}
	}
}
