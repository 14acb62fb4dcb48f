package election

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"
)

var errBlip = errors.New("blip")

func newTestMachine() *Machine {
	return NewMachine(MachineOptions{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: 5, Jitter: func(n int) int { return n - 1 }})
}

// input is one machine input for table tests and the fuzzer.
type input struct {
	kind string // "start", "timer", "result", "stop"
	op   Op
	ok   bool
	err  error
}

func (in input) apply(m *Machine) Step {
	switch in.kind {
	case "start":
		return m.Start()
	case "timer":
		return m.Timer()
	case "stop":
		return m.Stop()
	default:
		return m.Result(in.op, in.ok, in.err)
	}
}

func TestMachineTransitions(t *testing.T) {
	renewAfter := 2500*time.Millisecond + 4*time.Millisecond
	wait := 6 * time.Second
	start := input{kind: "start"}
	timer := input{kind: "timer"}
	stop := input{kind: "stop"}
	res := func(op Op, ok bool, err error) input { return input{kind: "result", op: op, ok: ok, err: err} }
	won := res(OpAcquire, true, nil)

	tests := []struct {
		name  string
		setup []input
		in    input
		want  Step
		state State
	}{
		{"start runs the first election at once", nil, start, Step{Run: OpAcquire}, Follower},
		{"second start does nothing", []input{start}, start, Step{}, Follower},
		{"acquire 1 promotes and schedules renew at TTL/2+jitter", []input{start}, won,
			Step{Signals: []Signal{SignalPromote}, Wake: renewAfter}, Leader},
		{"acquire 0 stays follower, retries after Wait", []input{start}, res(OpAcquire, false, nil), Step{Wake: wait}, Follower},
		{"acquire error: error, follower, retry after Wait", []input{start}, res(OpAcquire, false, errBlip),
			Step{Signals: []Signal{SignalError}, Wake: wait}, Follower},
		{"follower timer acquires", []input{start, res(OpAcquire, false, nil)}, timer, Step{Run: OpAcquire}, Follower},
		{"leader timer renews", []input{start, won}, timer, Step{Run: OpRenew}, Leader},
		{"renew 1 stays leader", []input{start, won, timer}, res(OpRenew, true, nil), Step{Wake: renewAfter}, Leader},
		{"renew 0 demotes, election after Wait", []input{start, won, timer}, res(OpRenew, false, nil),
			Step{Signals: []Signal{SignalDemote}, Wake: wait}, Follower},
		{"renew error: error then demote, election after Wait", []input{start, won, timer}, res(OpRenew, false, errBlip),
			Step{Signals: []Signal{SignalError, SignalDemote}, Wake: wait}, Follower},
		{"timer while an op is in flight is ignored", []input{start}, timer, Step{}, Follower},
		{"result for an op not in flight is ignored", []input{start}, res(OpRenew, true, nil), Step{}, Follower},
		{"stop as idle follower is done at once", []input{start, res(OpAcquire, false, nil)}, stop, Step{Done: true}, Stopped},
		{"stop as idle leader demotes then releases", []input{start, won}, stop,
			Step{Signals: []Signal{SignalDemote}, Run: OpRelease}, Stopped},
		{"release result finishes the stop", []input{start, won, stop}, res(OpRelease, true, nil), Step{Done: true}, Stopped},
		{"release error is returned with Done", []input{start, won, stop}, res(OpRelease, false, errBlip), Step{Done: true}, Stopped},
		{"stop during renew demotes at once, waits for the renew", []input{start, won, timer}, stop,
			Step{Signals: []Signal{SignalDemote}}, Follower},
		{"renew 1 after stop releases", []input{start, won, timer, stop}, res(OpRenew, true, nil), Step{Run: OpRelease}, Stopped},
		{"renew error after stop releases (maybe applied)", []input{start, won, timer, stop}, res(OpRenew, false, errBlip), Step{Run: OpRelease}, Stopped},
		{"renew 0 after stop is done (not ours)", []input{start, won, timer, stop}, res(OpRenew, false, nil), Step{Done: true}, Stopped},
		{"stop during acquire waits for it", []input{start}, stop, Step{}, Follower},
		{"acquire 1 after stop releases without promoting", []input{start, stop}, won, Step{Run: OpRelease}, Stopped},
		{"acquire error after stop releases (maybe applied)", []input{start, stop}, res(OpAcquire, false, errBlip), Step{Run: OpRelease}, Stopped},
		{"acquire 0 after stop is done", []input{start, stop}, res(OpAcquire, false, nil), Step{Done: true}, Stopped},
		{"timer after stop is ignored", []input{start, res(OpAcquire, false, nil), stop}, timer, Step{}, Stopped},
		{"second stop does nothing", []input{start, won, stop}, stop, Step{}, Stopped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestMachine()
			for _, in := range tt.setup {
				in.apply(m)
			}
			got := tt.in.apply(m)
			// A failed input surfaces as an error signal, or as Stop's error when it ends the stop.
			wantErr := tt.in.err != nil && (slices.Contains(tt.want.Signals, SignalError) || tt.want.Done)
			if (got.Err != nil) != wantErr {
				t.Errorf("Err = %v, want an error: %v", got.Err, wantErr)
			}
			if tt.in.err != nil && got.Err != nil && !errors.Is(got.Err, tt.in.err) {
				t.Errorf("Err = %v does not wrap %v", got.Err, tt.in.err)
			}
			got.Err = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("step = %+v, want %+v", got, tt.want)
			}
			if m.State() != tt.state {
				t.Errorf("state = %v, want %v", m.State(), tt.state)
			}
		})
	}
}

func TestMachineJitterRange(t *testing.T) {
	var asked []int
	m := NewMachine(MachineOptions{TTL: time.Second, Wait: time.Second, JitterMS: 7, Jitter: func(n int) int { asked = append(asked, n); return 6 }})
	m.Start()
	s := m.Result(OpAcquire, true, nil)
	if s.Wake != 506*time.Millisecond {
		t.Fatalf("renew after %v, want TTL/2 + 6ms", s.Wake)
	}
	if len(asked) != 1 || asked[0] != 7 {
		t.Fatalf("jitter asked for %v, want [0, 7)", asked)
	}
	m = NewMachine(MachineOptions{TTL: time.Second, Wait: time.Second, Jitter: func(int) int { t.Fatal("jitter drawn with JitterMS 0"); return 0 }})
	m.Start()
	if s := m.Result(OpAcquire, true, nil); s.Wake != 500*time.Millisecond {
		t.Fatalf("renew after %v, want TTL/2", s.Wake)
	}
}

// checkInvariants drives m with the inputs decoded from data and checks the
// machine's documented invariants after every step.
func checkInvariants(t *testing.T, data []byte) {
	m := newTestMachine()
	leading := false // what the signals so far say
	step := m.Start()
	inflight := step.Run
	lastRenewFailed := false
	done := false
	for i := 0; i < len(data); i++ {
		b := data[i]
		var in input
		switch b % 8 {
		case 0:
			in = input{kind: "timer"}
		case 1:
			in = input{kind: "stop"}
		default:
			// A result for what is in flight, or (b%8==7) a bogus op.
			op := inflight
			if b%8 == 7 {
				op = Op(b/8%4 + 1)
			}
			var err error
			if b&0x40 != 0 {
				err = errBlip
			}
			in = input{kind: "result", op: op, ok: b&0x20 != 0 && err == nil, err: err}
		}
		prevState := m.State()
		wasInflight := inflight
		lastRenewFailed = in.kind == "result" && in.op == OpRenew && wasInflight == OpRenew && (!in.ok || in.err != nil) && prevState == Leader
		step = in.apply(m)
		if done && (step.Run != OpNone || len(step.Signals) > 0 || step.Wake > 0) {
			t.Fatalf("input %d (%+v): machine acted after Done: %+v", i, in, step)
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
				leading = false
				demoted = true
			}
		}
		if lastRenewFailed && !demoted {
			t.Fatalf("input %d: renew of a leader lost or failed (%+v) without a demote: %+v", i, in, step)
		}
		if step.Run != OpNone {
			if wasInflight != OpNone && !(in.kind == "result" && in.op == wasInflight) {
				t.Fatalf("input %d: started %v while %v in flight", i, step.Run, wasInflight)
			}
			if step.Run == OpRenew && prevState != Leader {
				t.Fatalf("input %d: a %v renewed", i, prevState)
			}
			if step.Run == OpAcquire && prevState != Follower {
				t.Fatalf("input %d: a %v acquired", i, prevState)
			}
			inflight = step.Run
		} else if in.kind == "result" && in.op == wasInflight {
			inflight = OpNone
		}
		if inflight != m.InFlight() {
			t.Fatalf("input %d: in flight %v, machine says %v", i, inflight, m.InFlight())
		}
		if step.Done {
			done = true
			if leading {
				t.Fatalf("input %d: done while still leading", i)
			}
		}
		if (m.State() == Leader) != leading {
			t.Fatalf("input %d: state %v but signals say leading=%v", i, m.State(), leading)
		}
	}
}

func FuzzMachine(f *testing.F) {
	f.Add([]byte{2 | 0x20, 0, 2 | 0x20, 0, 2, 0, 2})
	f.Add([]byte{2 | 0x20, 0, 2 | 0x40, 1, 2})
	f.Add([]byte{1, 2 | 0x40, 2})
	f.Add([]byte{2 | 0x20, 0, 1, 2 | 0x20, 2, 1, 0})
	f.Fuzz(func(t *testing.T, data []byte) { checkInvariants(t, data) })
}

func BenchmarkMachineSteps(b *testing.B) {
	m := NewMachine(MachineOptions{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: 5, Jitter: func(n int) int { return 1 }})
	m.Start()
	m.Result(OpAcquire, true, nil)
	b.ReportAllocs()
	for b.Loop() {
		m.Timer()
		m.Result(OpRenew, true, nil)
	}
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "steps/s")
}
