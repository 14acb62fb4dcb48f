package election

import (
	"fmt"
	"time"
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
// Invariants (checked by the fuzz test): Promote and Demote strictly
// alternate, starting with Promote; a Demote follows every renew that returned
// 0 or failed; only a Leader renews and only a Follower acquires; at most one
// operation is in flight; once Done, the machine asks for nothing more.
type Machine struct {
	ttl, wait time.Duration
	jitterMS  int
	jitter    func(n int) int

	state    State
	inflight Op   // the operation whose Result is awaited, OpNone if none
	stopping bool // Stop was called while an operation was in flight
	mayHold  bool // while stopping: the lease may be ours, so release it
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
type Op int

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
// start Run, arm the timer for Wake (replacing any armed timer). Wake 0 means
// no timer. Done means the machine is stopped and the shell may exit.
type Step struct {
	Signals []Signal
	Err     error // the error for SignalError, or the release error when Done
	Run     Op
	Wake    time.Duration
	Done    bool
}

// MachineConfig configures NewMachine.
type MachineConfig struct {
	TTL      time.Duration
	Wait     time.Duration
	JitterMS int
	// Jitter returns a uniform integer in [0, n). The shell passes a random
	// source; a simulator passes a seeded one. Nil means no jitter.
	Jitter func(n int) int
}

// NewMachine returns a machine in Follower state, not yet started. The config
// must be valid (see Opts.Validate): the machine does not check it twice.
func NewMachine(c MachineConfig) *Machine {
	return &Machine{ttl: c.TTL, wait: c.Wait, jitterMS: c.JitterMS, jitter: c.Jitter}
}

// State returns the machine's current role.
func (m *Machine) State() State { return m.state }

// InFlight returns the operation whose result the machine awaits.
func (m *Machine) InFlight() Op { return m.inflight }

// renewAfter is TTL/2 plus a jitter in [0, JitterMS) milliseconds.
func (m *Machine) renewAfter() time.Duration {
	d := m.ttl / 2
	if m.jitterMS > 0 && m.jitter != nil {
		// Clamped: a faulty source must not push the renewal past the lease.
		j := min(max(m.jitter(m.jitterMS), 0), m.jitterMS-1)
		d += time.Duration(j) * time.Millisecond
	}
	return d
}

func (m *Machine) run(op Op) Step {
	m.inflight = op
	return Step{Run: op}
}

// Start runs the first election at once.
func (m *Machine) Start() Step {
	if m.state != Follower || m.inflight != OpNone {
		return Step{}
	}
	return m.run(OpAcquire)
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
		return m.run(OpAcquire)
	case Leader:
		return m.run(OpRenew)
	}
	return Step{}
}

// Result is the input "op finished": ok is the script's 1 (true) or 0
// (false), err the error of the call. A result for an operation that is not
// in flight is ignored.
func (m *Machine) Result(op Op, ok bool, err error) Step {
	if op == OpNone || op != m.inflight {
		return Step{}
	}
	m.inflight = OpNone
	if m.stopping {
		return m.resultWhileStopping(op, ok, err)
	}
	switch op {
	case OpAcquire:
		switch {
		case err != nil:
			return Step{Signals: []Signal{SignalError}, Err: fmt.Errorf("acquiring the lease: %w", err), Wake: m.wait}
		case ok:
			m.state = Leader
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
			return Step{Wake: m.renewAfter()}
		default:
			m.state = Follower
			return Step{Signals: []Signal{SignalDemote}, Wake: m.wait}
		}
	}
	return Step{}
}

// Stop is the input "stop now". A leader is demoted at once: the user must
// stop acting as leader before the lease is released, never after. The lease
// is released if it may be ours — held, or an acquire or renew in flight
// whose write may land although its reply never comes (NOTES.md) — and only
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
	if m.mayHold && (ok || err != nil) {
		m.state = Stopped
		m.inflight = OpRelease
		return Step{Run: OpRelease}
	}
	m.state = Stopped
	return Step{Done: true}
}
