package election

import (
	"errors"
	"fmt"
	"time"

	"github.com/leaselab/leaselab/election/timing"
)

// Machine is the elector's decision logic as a pure, deterministic state
// machine, in the style of etcd's raft: it owns no goroutine, reads no clock,
// touches no Redis. The shell (Elector) feeds it inputs — Start, Timer,
// Result, Stop — and carries out the Step each returns: run one Redis
// operation, emit signals, arm the timer. A simulator can drive the very same
// Machine in virtual time.
//
// The spec's state diagram, and where each transition lives:
//
//	[*]         --> Follower     Start: run Acquire at once
//	Follower    --> runElection  Timer (every Wait): run Acquire
//	runElection --> Leader       Result(Acquire, true, nil): emit Promote, wake after TTL/2 + jitter
//	runElection --> Follower     Result(Acquire, false, nil): wake after Wait
//	runElection --> Follower     Result(Acquire, _, err): emit Error, wake after Wait
//	Leader      --> renew        Timer (after TTL/2 + jitter): run Renew
//	renew       --> Leader       Result(Renew, true, nil): wake after TTL/2 + jitter
//	renew       --> Follower     Result(Renew, false, nil): emit Demote, wake after Wait
//	renew       --> Follower     Result(Renew, _, err): emit Error, Demote, wake after Wait
//	any         --> Stopped      Stop: emit Demote if leading; run Release if the
//	                             lease may be ours; Done when nothing is in flight
//
// Safe mode (MachineOptions.Safe; off by default, and then every Step is the
// spec's, field for field) adds the lease guard. The shell reports with each
// result how long after sending it the reply came (Outcome.Elapsed), and the
// machine counts the lease from the send: valid until sentAt + TTL − Margin.
// Steps then also carry a Deadline, the time left until that instant (or,
// for an acquire, until the lease it may win would end), and the shell feeds
// Expired when it passes:
//
//	Follower    --> runElection  Timer: run Acquire, Deadline TTL − Margin
//	runElection --> Leader       Finish(Acquire, token > 0, Elapsed < TTL − Margin):
//	                             emit Promote; wake at sentAt + TTL/2 + jitter; Deadline sentAt + TTL − Margin
//	runElection --> Follower     Expired: abandon the acquire, emit Error, wake after Wait
//	renew       --> Leader       Finish(Renew, 1, Elapsed < TTL − Margin): wake at sentAt + TTL/2 + jitter,
//	                             Deadline sentAt + TTL − Margin
//	Leader      --> Follower     Expired (the guard): abandon any renew, emit Error, Demote, wake after Wait
//
// A result that comes after its Deadline is too late to count (the shell
// drops replies of abandoned calls; a reply racing the guard is treated as
// lost). The acquire script in safe mode also takes a key that already holds
// our own ID, and returns a fencing token (Token) with each promotion.
//
// Invariants (checked by the fuzz test, in both modes): Promote and Demote
// strictly alternate, starting with Promote; a Demote follows every renew
// that returned 0 or failed, and every guard expiry of a leader; only a
// Leader renews and only a Follower acquires; at most one operation is in
// flight; once Done, the machine asks for nothing more.
type Machine struct {
	ttl, wait time.Duration
	jitterMS  int
	jitter    func(n int) int
	safe      bool
	margin    time.Duration

	state    State
	inflight Op   // the operation whose Result is awaited, OpNone if none
	stopping bool // Stop was called while an operation was in flight
	mayHold  bool // while stopping: the lease may be ours, so release it
	term     uint64
	token    int64
}

// State is the machine's role.
type State int

// The machine's states. A Machine starts in Follower before Start is called.
const (
	Follower State = iota
	Leader
	Stopped
)

func (s State) String() string {
	switch s {
	case Follower:
		return "follower"
	case Leader:
		return "leader"
	case Stopped:
		return "stopped"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Op is a Redis operation the machine asks the shell to run.
type Op uint8 // small, so that a Step stays 64 bytes

// The three lease operations of the spec, and OpNone.
const (
	OpNone Op = iota
	OpAcquire
	OpRenew
	OpRelease
)

func (o Op) String() string {
	switch o {
	case OpNone:
		return "none"
	case OpAcquire:
		return "acquire"
	case OpRenew:
		return "renew"
	case OpRelease:
		return "release"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Signal is something the shell must tell the elector's user.
type Signal int

// Signals, emitted in the order of Step.Signals.
const (
	SignalPromote Signal = iota + 1
	SignalDemote
	SignalError // Step.Err holds the error
)

func (s Signal) String() string {
	switch s {
	case SignalPromote:
		return "promote"
	case SignalDemote:
		return "demote"
	case SignalError:
		return "error"
	}
	return fmt.Sprintf("Signal(%d)", int(s))
}

// Step is what the shell must do after an input, in this order: emit Signals,
// start Run, arm the timer for Wake (replacing any armed timer), and in safe
// mode arm the deadline timer for Deadline (replacing the armed one). Wake
// 0 means no timer; Deadline 0 leaves the deadline timer as it is (a stale
// expiry is ignored). Done means the machine is stopped and the shell may
// exit.
type Step struct {
	Signals []Signal
	Err     error // the error for SignalError, or the release error when Done
	Run     Op
	Done    bool
	Wake    time.Duration
	// Deadline (safe mode only) is when to feed Expired, from now: the end of
	// the lease's validity for a leader (the guard), which is also the
	// deadline of a renew in flight, or the deadline of an acquire.
	Deadline time.Duration
}

// MachineOptions configures NewMachine.
type MachineOptions struct {
	TTL      time.Duration
	Wait     time.Duration
	JitterMS int
	// Jitter returns a uniform integer in [0, n). The shell passes a random
	// source; a simulator passes a seeded one. Nil means no jitter.
	Jitter func(n int) int
	// Safe turns the lease guard on (see Machine). False: the spec's
	// machine, exactly.
	Safe bool
	// Margin is taken off the lease's validity in safe mode. 0 means
	// DefaultMargin(TTL).
	Margin time.Duration
}

// NewMachine returns a machine in Follower state, not yet started. The config
// must be valid (see Opts.Validate): the machine does not check it twice.
func NewMachine(c MachineOptions) *Machine {
	m := &Machine{ttl: c.TTL, wait: c.Wait, jitterMS: c.JitterMS, jitter: c.Jitter, safe: c.Safe, margin: c.Margin}
	if m.safe && m.margin == 0 {
		m.margin = DefaultMargin(c.TTL)
	}
	return m
}

// DefaultMargin is the safe mode's default margin for a lease of ttl:
// ttl/100 + 2ms (Redlock's drift allowance). The guard demotes a leader at
// sentAt + ttl − margin by its own clock, which is still before the key
// expires in Redis as long as the leader's clock runs at least
// 1 − margin/ttl as fast as Redis's (1.04% slower for a 5s TTL) and its
// timer fires less than that late; see Opts.SafeMargin.
func DefaultMargin(ttl time.Duration) time.Duration { return timing.DefaultMargin(ttl) }

// State returns the machine's current role.
func (m *Machine) State() State { return m.state }

// InFlight returns the operation whose result the machine awaits.
func (m *Machine) InFlight() Op { return m.inflight }

// Term counts the promotions so far: the current (or last) term is Term().
func (m *Machine) Term() uint64 { return m.term }

// Token is the fencing token of the current (or last) term: what the
// acquire that won it returned. Always 0 in spec mode.
func (m *Machine) Token() int64 { return m.token }

// Safe reports whether the lease guard is on.
func (m *Machine) Safe() bool { return m.safe }

// validity is how long a lease is counted valid from the send of the call
// that set it.
func (m *Machine) validity() time.Duration { return m.ttl - m.margin }

// renewAfter is TTL/2 plus a jitter in [0, JitterMS) milliseconds.
func (m *Machine) renewAfter() time.Duration {
	d := m.ttl / 2
	if m.jitterMS > 0 && m.jitter != nil {
		// Clamped: a faulty source must not push the renewal past the lease.
		j := m.jitter(m.jitterMS)
		if uint(j) >= uint(m.jitterMS) { // negative or too large
			j = min(max(j, 0), m.jitterMS-1)
		}
		d += time.Duration(j) * time.Millisecond
	}
	return d
}

func (m *Machine) run(op Op) Step {
	m.inflight = op
	return Step{Run: op}
}

// acquire runs an election; in safe mode with the acquire's deadline.
func (m *Machine) acquire() Step {
	s := m.run(OpAcquire)
	if m.safe {
		s.Deadline = m.validity()
	}
	return s
}

// Start runs the first election at once.
func (m *Machine) Start() Step {
	if m.state != Follower || m.inflight != OpNone {
		return Step{}
	}
	return m.acquire()
}

// Timer is the input "the armed timer fired": a follower runs an election, a
// leader renews. A timer that fires while an operation is in flight or after
// Stop is stale and ignored.
func (m *Machine) Timer() Step {
	if m.inflight != OpNone || m.stopping {
		return Step{}
	}
	switch m.state {
	case Follower:
		return m.acquire()
	case Leader:
		return m.run(OpRenew) // in safe mode the guard is its deadline
	}
	return Step{}
}

// Outcome is one finished lease operation, as the shell saw it.
type Outcome struct {
	Op  Op
	OK  bool  // the script returned 1 (acquire: a token)
	Err error // the call failed
	// Token is the fencing token an acquire returned (safe mode).
	Token int64
	// Elapsed is the time from sending the call to its reply, by the
	// shell's clock. Safe mode counts the lease from the send; spec mode
	// ignores it.
	Elapsed time.Duration
}

// Result is the input "op finished": ok is the script's 1 (true) or 0
// (false), err the error of the call. A result for an operation that is not
// in flight is ignored. It is Finish with no token and no elapsed time: in
// safe mode use Finish.
func (m *Machine) Result(op Op, ok bool, err error) Step {
	return m.finish(op, ok, err, 0, 0)
}

// errTooLate is the error of a reply that came after the lease it would set
// had already run out by the guard's count.
var errTooLate = errors.New("the reply came after the lease's validity (TTL − margin from the send)")

// ErrLeaseExpired is wrapped by the error a safe-mode elector reports when
// its lease guard demoted it: no renewal succeeded within TTL − margin of
// the last successful send.
var ErrLeaseExpired = errors.New("lease guard: the lease ran out before a renewal succeeded")

// ErrOpDeadline is wrapped by the error a safe-mode elector reports when it
// stopped waiting for an acquire at its deadline.
var ErrOpDeadline = errors.New("no reply before the deadline")

// Finish is the input "op finished" with everything the shell knows about
// it. A result for an operation that is not in flight is ignored.
func (m *Machine) Finish(o Outcome) Step {
	return m.finish(o.Op, o.OK, o.Err, o.Token, o.Elapsed)
}

func (m *Machine) finish(op Op, ok bool, err error, token int64, elapsed time.Duration) Step {
	if op == OpNone || op != m.inflight {
		return Step{}
	}
	m.inflight = OpNone
	if m.stopping {
		return m.resultWhileStopping(op, ok, err)
	}
	// Safe mode: how long the lease this call set stays valid from now.
	var left time.Duration
	if m.safe {
		left = m.validity() - elapsed
		if ok && err == nil && left <= 0 {
			ok, err = false, errTooLate
		}
	}
	switch op {
	case OpAcquire:
		switch {
		case err != nil:
			return Step{Signals: []Signal{SignalError}, Err: fmt.Errorf("acquiring the lease: %w", err), Wake: m.wait}
		case ok:
			m.state = Leader
			m.term++
			m.token = token
			if m.safe {
				return Step{Signals: []Signal{SignalPromote}, Wake: m.renewIn(elapsed), Deadline: left}
			}
			return Step{Signals: []Signal{SignalPromote}, Wake: m.renewAfter()}
		default:
			return Step{Wake: m.wait}
		}
	case OpRenew:
		switch {
		case err != nil:
			// The spec's conservative choice: an error means "assume lost".
			m.state = Follower
			return Step{Signals: []Signal{SignalError, SignalDemote}, Err: fmt.Errorf("renewing the lease: %w", err), Wake: m.wait}
		case ok:
			if m.safe {
				return Step{Wake: m.renewIn(elapsed), Deadline: left}
			}
			return Step{Wake: m.renewAfter()}
		default:
			m.state = Follower
			return Step{Signals: []Signal{SignalDemote}, Wake: m.wait}
		}
	}
	return Step{}
}

// renewIn is when to renew a lease set by a call sent elapsed ago: TTL/2 +
// jitter after the send, or at once (1ns) if that has passed.
func (m *Machine) renewIn(elapsed time.Duration) time.Duration {
	return max(m.renewAfter()-elapsed, time.Nanosecond)
}

// Expired is the input "the deadline of the last Step passed" (safe mode).
// A leader's guard ran out: it demotes at once, abandoning a renew still in
// flight (its late reply is ignored). An acquire in flight is abandoned. An
// expiry with nothing to act on is stale and ignored. While stopping, the
// operation in flight is treated as failed (maybe applied), so the lease is
// released.
func (m *Machine) Expired() Step {
	if !m.safe || m.state == Stopped && !m.stopping {
		return Step{}
	}
	if m.stopping {
		if m.inflight == OpAcquire || m.inflight == OpRenew {
			op := m.inflight
			m.inflight = OpNone
			return m.resultWhileStopping(op, false, ErrOpDeadline)
		}
		return Step{}
	}
	switch {
	case m.state == Leader:
		m.inflight = OpNone
		m.state = Follower
		return Step{Signals: []Signal{SignalError, SignalDemote}, Err: fmt.Errorf("renewing the lease: %w", ErrLeaseExpired), Wake: m.wait}
	case m.inflight == OpAcquire:
		m.inflight = OpNone
		return Step{Signals: []Signal{SignalError}, Err: fmt.Errorf("acquiring the lease: %w", ErrOpDeadline), Wake: m.wait}
	}
	return Step{}
}

// Stop is the input "stop now". A leader is demoted at once: the user must
// stop acting as leader before the lease is released, never after. The lease
// is released if it may be ours — held, or an acquire or renew in flight
// whose write may land although its reply never comes — and only
// after that operation finished, so the release cannot overtake it.
func (m *Machine) Stop() Step {
	if m.state == Stopped || m.stopping {
		return Step{}
	}
	var s Step
	if m.state == Leader {
		s.Signals = []Signal{SignalDemote}
	}
	if m.inflight != OpNone {
		m.stopping = true
		m.mayHold = m.state == Leader || m.inflight == OpAcquire
		m.state = Follower
		return s
	}
	if m.state == Leader {
		m.state = Stopped
		m.stopping = true
		s.Run = OpRelease
		m.inflight = OpRelease
		return s
	}
	m.state = Stopped
	s.Done = true
	return s
}

func (m *Machine) resultWhileStopping(op Op, ok bool, err error) Step {
	if op == OpRelease {
		m.state = Stopped
		if err != nil {
			return Step{Done: true, Err: fmt.Errorf("releasing the lease: %w", err)}
		}
		return Step{Done: true}
	}
	// An acquire or renew finished after Stop: release if it (maybe) holds.
	// A duplicate-ID refusal is Redis's answer that nothing applied: no
	// release then. (A release after an acquire whose outcome is unknown
	// may still meet the twin's lease: the safe release checks the owner
	// nonce and leaves it alone.)
	if m.mayHold && (ok || (err != nil && !errors.Is(err, ErrDuplicateID))) {
		m.state = Stopped
		m.inflight = OpRelease
		return Step{Run: OpRelease}
	}
	m.state = Stopped
	return Step{Done: true}
}
