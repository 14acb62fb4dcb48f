package election

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func newSafeMachine() *Machine {
	return NewMachine(MachineOptions{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: 5, Jitter: func(n int) int { return n - 1 }, Safe: true})
}

// The lease guard, step by step (TTL 5s, margin 52ms, jitter 4ms).
func TestMachineSafeTransitions(t *testing.T) {
	const valid = 5*time.Second - 52*time.Millisecond
	renew := 2504 * time.Millisecond
	if DefaultMargin(5*time.Second) != 52*time.Millisecond {
		t.Fatal("DefaultMargin(5s) != 52ms")
	}
	m := newSafeMachine()
	step := func(got, want Step) {
		t.Helper()
		got.Err = nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %+v, want %+v", got, want)
		}
	}
	step(m.Start(), Step{Run: OpAcquire, Deadline: valid})
	// The reply came 100ms after the send: the lease counts from the send.
	step(m.Finish(Outcome{Op: OpAcquire, OK: true, Token: 42, Elapsed: 100 * time.Millisecond}),
		Step{Signals: []Signal{SignalPromote}, Wake: renew - 100*time.Millisecond, Deadline: valid - 100*time.Millisecond})
	if m.Token() != 42 || m.Term() != 1 || m.State() != Leader {
		t.Fatalf("token %d term %d state %v", m.Token(), m.Term(), m.State())
	}
	step(m.Timer(), Step{Run: OpRenew})
	step(m.Finish(Outcome{Op: OpRenew, OK: true, Elapsed: 3 * time.Second}), Step{Wake: time.Nanosecond, Deadline: valid - 3*time.Second})
	step(m.Timer(), Step{Run: OpRenew})
	// The renew hangs; the guard fires: demote, abandon the renew.
	s := m.Expired()
	if !errors.Is(s.Err, ErrLeaseExpired) {
		t.Fatalf("guard error %v", s.Err)
	}
	step(s, Step{Signals: []Signal{SignalError, SignalDemote}, Wake: 6 * time.Second})
	step(m.Finish(Outcome{Op: OpRenew, OK: true}), Step{}) // its late reply is ignored
	step(m.Expired(), Step{})                              // a stale expiry too
	// An acquire whose reply comes after the validity does not promote.
	step(m.Timer(), Step{Run: OpAcquire, Deadline: valid})
	step(m.Finish(Outcome{Op: OpAcquire, OK: true, Token: 43, Elapsed: valid}), Step{Signals: []Signal{SignalError}, Wake: 6 * time.Second})
	// An acquire that hangs is abandoned at its deadline.
	step(m.Timer(), Step{Run: OpAcquire, Deadline: valid})
	step(m.Expired(), Step{Signals: []Signal{SignalError}, Wake: 6 * time.Second})
	// Stop while an acquire hangs: its deadline releases (maybe applied).
	step(m.Timer(), Step{Run: OpAcquire, Deadline: valid})
	step(m.Stop(), Step{})
	step(m.Expired(), Step{Run: OpRelease})
	step(m.Result(OpRelease, true, nil), Step{Done: true})
}

// Spec mode never sets a deadline and ignores Expired.
func TestMachineSpecIgnoresExpired(t *testing.T) {
	m := newTestMachine()
	m.Start()
	if s := m.Result(OpAcquire, true, nil); s.Deadline != 0 {
		t.Fatalf("spec step with a deadline: %+v", s)
	}
	if s := m.Expired(); !reflect.DeepEqual(s, Step{}) || m.State() != Leader {
		t.Fatalf("spec machine acted on Expired: %+v", s)
	}
}

func FuzzMachineSafe(f *testing.F) {
	f.Add([]byte{2 | 0x20, 0, 3, 2 | 0x20, 0, 3, 2})
	f.Add([]byte{2 | 0x20, 3, 0, 2, 1, 3, 2})
	f.Add([]byte{3, 1, 3, 2})
	f.Fuzz(func(t *testing.T, data []byte) { checkSafeInvariants(t, data) })
}

// checkSafeInvariants drives a safe machine with timers, results (with
// elapsed times), expiries and stops, and checks the invariants.
func checkSafeInvariants(t *testing.T, data []byte) {
	m := newSafeMachine()
	leading, done := false, false
	step := m.Start()
	for i, b := range data {
		prev, wasInflight := m.State(), m.InFlight()
		switch b % 8 {
		case 0:
			step = m.Timer()
		case 1:
			step = m.Stop()
		case 3, 4:
			step = m.Expired()
		default:
			var err error
			if b&0x40 != 0 {
				err = errBlip
			}
			step = m.Finish(Outcome{Op: m.InFlight(), OK: b&0x20 != 0 && err == nil, Err: err, Token: int64(i + 1),
				Elapsed: time.Duration(b&0x80) * 40 * time.Millisecond})
		}
		if done && (step.Run != OpNone || len(step.Signals) > 0 || step.Wake > 0) {
			t.Fatalf("input %d: acted after Done: %+v", i, step)
		}
		demoted := false
		for _, s := range step.Signals {
			switch s {
			case SignalPromote:
				if leading {
					t.Fatalf("input %d: promote while leading", i)
				}
				leading = true
			case SignalDemote:
				if !leading {
					t.Fatalf("input %d: demote while not leading", i)
				}
				leading, demoted = false, true
			}
		}
		if b%8 == 3 || b%8 == 4 {
			if prev == Leader && !demoted && !m.stopping {
				t.Fatalf("input %d: guard expiry of a leader without a demote", i)
			}
		}
		if step.Run != OpNone && wasInflight != OpNone && m.InFlight() != step.Run {
			t.Fatalf("input %d: two operations in flight", i)
		}
		if leading && step.Deadline < 0 {
			t.Fatalf("input %d: negative deadline", i)
		}
		if step.Done {
			done = true
		}
		if (m.State() == Leader) != leading {
			t.Fatalf("input %d: state %v, signals say leading=%v", i, m.State(), leading)
		}
	}
}
