package election

import (
	"errors"
	"time"
)

// TransitionKind names what a Transition reports. The values are stable
// strings: publishers write them as they are.
type TransitionKind string

// Transition kinds.
const (
	Promoted TransitionKind = "promoted" // this instance now believes it holds the lease
	Demoted  TransitionKind = "demoted"  // it no longer does; Reason says why
	Errored  TransitionKind = "error"    // a Redis call failed (Err); a demotion may follow
)

// DemoteReason says why a leader demoted itself.
type DemoteReason string

// Demotion reasons.
const (
	// ReasonLost: a renewal found the key no longer holding this ID (it
	// expired and another instance, or none, took it).
	ReasonLost DemoteReason = "lost"
	// ReasonError: a renewal failed (timeout, refused, ...): the spec
	// assumes the lease lost.
	ReasonError DemoteReason = "error"
	// ReasonGuard (safe mode): the lease guard ran out before a renewal
	// succeeded.
	ReasonGuard DemoteReason = "guard"
	// ReasonStop: Stop demoted the leader before releasing the lease.
	ReasonStop DemoteReason = "stop"
)

// Transition is one promotion, demotion or error of an elector, handed to
// Opts.OnTransition by the election loop at the moment it is decided, in the
// order decided. Unlike the promote/demote channels nothing is coalesced:
// every transition is reported, including a promotion the reader never
// received.
type Transition struct {
	Kind TransitionKind
	// At is when the elector decided it, by its Clock.
	At time.Time
	// ID is the elector's ID (the value it writes into the lease).
	ID string
	// Key, TTL, Wait and Safe are the elector's options (Opts.Key, the
	// lease's name), so that a hook needs nothing else to describe it.
	Key       string
	TTL, Wait time.Duration
	Safe      bool
	// Term is the elector's promotion count: the term a promotion began or
	// a demotion ended. Token is that term's fencing token (safe mode; 0
	// in spec mode).
	Term  uint64
	Token int64
	// Reason is why a Demoted leader demoted ("" otherwise).
	Reason DemoteReason
	// Err is the error of an Errored transition, and of a demotion for
	// ReasonError or ReasonGuard.
	Err error
}

// observe hands one signal of a step to Opts.OnTransition. stopping is
// whether Stop was called.
func (e *Elector) observe(m *Machine, s Signal, err error, now time.Time, stopping bool) {
	if e.opts.OnTransition == nil {
		return
	}
	t := Transition{At: now, ID: e.id, Key: e.opts.Key, TTL: e.opts.TTL, Wait: e.opts.Wait, Safe: e.opts.Safe,
		Term: m.Term(), Token: m.Token()}
	switch s {
	case SignalPromote:
		t.Kind = Promoted
	case SignalError:
		t.Kind, t.Err = Errored, err
	case SignalDemote:
		t.Kind, t.Err = Demoted, err
		switch {
		case errors.Is(err, ErrLeaseExpired):
			t.Reason = ReasonGuard
		case err != nil:
			t.Reason = ReasonError
		case stopping:
			t.Reason = ReasonStop
		default:
			t.Reason = ReasonLost
		}
	default:
		return
	}
	e.opts.OnTransition(t)
}
