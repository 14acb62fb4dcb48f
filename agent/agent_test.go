package agent

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
)

// harness is the other end of an Agent's pipes.
type harness struct {
	t   *testing.T
	dec *Decoder
	cmd *os.File
}

func newHarness(t *testing.T, o Options) (*Agent, *harness) {
	t.Helper()
	// OS pipes, as the agent's stdin and stdout are: writes are buffered.
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The probe's stall events, on a loaded machine, would come between
	// the events these tests expect in order; TestProbeReportsAStoppedProcess
	// covers it.
	o.Out, o.In, o.NoStallProbe = outW, inR, true
	t.Cleanup(func() { _ = inW.Close(); _ = outR.Close(); _ = outW.Close(); _ = inR.Close() })
	return New(o), &harness{t: t, dec: NewDecoder("test", outR), cmd: inW}
}

func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.cmd, line+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) next() Event {
	h.t.Helper()
	e, err := h.dec.Next()
	if err != nil {
		h.t.Fatal(err)
	}
	return e
}

func TestAgentHelloCommandsAndGone(t *testing.T) {
	var rate float64
	stopped := make(chan struct{})
	a, h := newHarness(t, Options{
		Name:    "test-agent",
		OnStop:  func() { close(stopped) },
		OnClock: func(r float64, jump time.Duration) error { rate = r; return nil },
	})
	// An event before the hello waits for it.
	go a.Error(errors.New("early"))
	helloErr := make(chan error, 1)
	go func() {
		for a.pendingLen() == 0 {
			time.Sleep(time.Millisecond)
		}
		helloErr <- a.Hello("id-1", "taskrunner:leader:k")
	}()
	hello, err := h.dec.Hello()
	if err != nil {
		t.Fatal(err)
	}
	if hello.ID != "id-1" || !hello.Has(CapStop) || !hello.Has(CapClock) || hello.Has(CapRunner) || hello.Agent != "test-agent" {
		t.Fatalf("hello %+v", hello)
	}
	if e := h.next(); e.Type != Error || e.Err != "early" || e.T == 0 {
		t.Fatalf("first event %+v, want the early error with its wall time", e)
	}
	if err := <-helloErr; err != nil {
		t.Fatal(err)
	}

	h.send(`{"cmd":"clock","seq":1,"rate":0.5}`)
	if e := h.next(); e.Type != Reply || e.Seq != 1 || e.Err != "" || rate != 0.5 {
		t.Fatalf("clock reply %+v (rate %v)", e, rate)
	}
	h.send(`{"cmd":"dispatch","seq":2,"task":"work"}`)
	if e := h.next(); e.Type != Reply || e.Seq != 2 || !strings.Contains(e.Err, `does not declare "runner"`) {
		t.Fatalf("dispatch to a non-runner: %+v", e)
	}
	h.send(`{"cmd":"clock","seq":3}`)
	if e := h.next(); e.Type != Reply || e.Seq != 3 || !strings.Contains(e.Err, "exactly one of rate and jump_ns") {
		t.Fatalf("malformed clock: %+v", e)
	}
	// A demotion follows a promotion (the decoder refuses one before).
	a.Promoted(1, 0)
	if e := h.next(); e.Type != Promoted {
		t.Fatalf("promotion %+v", e)
	}
	h.send(`{"cmd":"stop","seq":4}`)
	<-stopped
	a.Demoted("")
	if e := h.next(); e.Type != Demoted || e.Reason != ReasonStop {
		t.Fatalf("demotion during a stop: %+v", e)
	}
	_ = h.cmd.Close()
	select {
	case <-a.Gone():
	case <-time.After(10 * time.Second):
		t.Fatal("Gone not closed after stdin ended")
	}
}

func (a *Agent) pendingLen() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}

func TestAgentDispatch(t *testing.T) {
	a, h := newHarness(t, Options{OnDispatch: func(ctx context.Context, task string, delay time.Duration) (string, error) {
		if task != "work" || delay != time.Second {
			return "", errors.New("unexpected")
		}
		return "1-0", nil
	}})
	if err := a.Hello("i", "k"); err != nil {
		t.Fatal(err)
	}
	if hello, err := h.dec.Hello(); err != nil || !hello.Has(CapRunner) || len(hello.Capabilities) != 1 {
		t.Fatalf("hello %+v, %v", hello, err)
	}
	h.send(`{"cmd":"dispatch","seq":9,"task":"work","delay_ns":1000000000}`)
	if e := h.next(); e.Type != Reply || e.Seq != 9 || e.Task != "1-0" || e.Err != "" {
		t.Fatalf("dispatch reply %+v", e)
	}
}

// TestAgentElector: the tee reports a real elector's promotion before the
// service receives it, and its demotion at Stop (reason stop) after.
func TestAgentElector(t *testing.T) {
	rdb := redistest.Client(t)
	a, h := newHarness(t, Options{})
	e, promote, demote, errs := election.NewElector(election.Opts{Redis: rdb, Key: "agent-test", TTL: time.Second, Wait: 200 * time.Millisecond})
	promote, demote, errs = a.Elector(e, promote, demote, errs)
	if err := a.Hello(e.ID(), e.Key()); err != nil {
		t.Fatal(err)
	}
	hello, err := h.dec.Hello()
	if err != nil || hello.Key != election.LeaderKey("agent-test") || hello.ID != e.ID() {
		t.Fatalf("hello %+v, %v", hello, err)
	}
	e.Start()
	if ev := h.next(); ev.Type != Promoted || ev.Term != 1 {
		t.Fatalf("first event %+v, want promoted term 1", ev)
	}
	<-promote
	a.Stopping()
	stopErr := make(chan error, 1)
	go func() { stopErr <- e.Stop() }()
	select {
	case <-demote:
	case err := <-errs:
		t.Fatalf("elector error %v", err)
	}
	if ev := h.next(); ev.Type != Demoted || ev.Reason != ReasonStop {
		t.Fatalf("event %+v, want demoted (stop)", ev)
	}
	if err := <-stopErr; err != nil {
		t.Fatal(err)
	}
	if v, err := rdb.Exists(context.Background(), e.Key()).Result(); err != nil || v != 0 {
		t.Fatalf("lease after Stop: exists %d, %v (want released)", v, err)
	}
}

// RunElector is the loop of a service's elector as an agent: hello,
// promoted (told to the harness before the service), and on ctx's end a
// graceful stop: demoted (stop), the lease released, stopped last.
func TestAgentRunElector(t *testing.T) {
	rdb := redistest.Client(t)
	a, h := newHarness(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	promoted, demoted := make(chan struct{}, 1), make(chan struct{}, 1)
	var transitions []election.Transition // read after RunElector returns
	ran := make(chan error, 1)
	go func() {
		ran <- a.RunElector(ctx, election.Opts{Redis: rdb, Key: "agent-run", TTL: time.Second, Wait: 200 * time.Millisecond,
			OnTransition: func(tr election.Transition) { transitions = append(transitions, tr) }},
			Service{Promoted: func() { signal(promoted) }, Demoted: func() { signal(demoted) }})
	}()
	hello, err := h.dec.Hello()
	if err != nil || hello.Key != election.LeaderKey("agent-run") {
		t.Fatalf("hello %+v, %v", hello, err)
	}
	// The elector's go-redis client is declared as go-redis reads its
	// options: the harness predicts from it.
	o := rdb.Options()
	if c := hello.Client; c == nil || !c.IsGoRedis() || c.ReadTimeoutMS == nil || c.Retries != max(o.MaxRetries, 0) {
		t.Errorf("hello's client %+v: want the go-redis client the elector runs on (options %+v)", c, o)
	}
	if ev := h.next(); ev.Type != Promoted || ev.Term != 1 {
		t.Fatalf("first event %+v, want promoted term 1", ev)
	}
	<-promoted
	cancel()
	if ev := h.next(); ev.Type != Demoted || ev.Reason != ReasonStop {
		t.Fatalf("event %+v, want demoted (stop)", ev)
	}
	if ev := h.next(); ev.Type != Stopped {
		t.Fatalf("event %+v, want stopped", ev)
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	// RunElector has returned: the service was told demoted before that
	// (under load the stop's demote signal lost its race with the stop's
	// end, and this waited forever).
	select {
	case <-demoted:
	default:
		t.Fatal("RunElector returned without telling the service it was demoted")
	}
	if len(transitions) == 0 {
		t.Error("eo.OnTransition never called")
	}
	if v, err := rdb.Exists(context.Background(), hello.Key).Result(); err != nil || v != 0 {
		t.Fatalf("lease after the stop: exists %d, %v (want released)", v, err)
	}
}

// When the harness is gone (stdin ends), RunElector returns nil at once.
func TestAgentRunElectorGone(t *testing.T) {
	rdb := redistest.Client(t)
	a, h := newHarness(t, Options{})
	ran := make(chan error, 1)
	go func() {
		ran <- a.RunElector(context.Background(), election.Opts{Redis: rdb, Key: "agent-gone", TTL: time.Second, Wait: 200 * time.Millisecond}, Service{})
	}()
	if _, err := h.dec.Hello(); err != nil {
		t.Fatal(err)
	}
	_ = h.cmd.Close()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
}

// signal sends on c unless a signal waits there already.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
