package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/sim/env/envtest"
)

// proxied is a real Redis reached through a real Toxiproxy proxy.
type proxied struct {
	admin *redis.Client // unproxied
	proxy *toxiclient.Proxy
	opts  redis.Options // of a client through the proxy, without timeouts
}

func newProxied(t *testing.T) *proxied {
	t.Helper()
	e := envtest.Embedded(t)
	p, err := e.Toxiproxy.CreateProxy(strings.ReplaceAll(t.Name(), "/", "-"), "127.0.0.1:0", e.ProxyUpstream)
	if err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(e.Auth.Apply(&redis.Options{Addr: e.RedisAddr}))
	t.Cleanup(func() { _ = admin.Close() })
	addr := p.Listen
	if e.DialAddr != nil {
		addr = e.DialAddr(addr)
	}
	return &proxied{admin: admin, proxy: p, opts: *e.Auth.Apply(&redis.Options{Addr: addr})}
}

// dropReplies makes the proxy drop everything Redis sends (a Toxiproxy
// timeout toxic with timeout 0 on the downstream only): requests still
// reach Redis and apply; their replies never come.
func (p *proxied) dropReplies(t *testing.T) {
	t.Helper()
	if _, err := p.proxy.AddToxic("drop-replies", "timeout", "downstream", 1, toxiclient.Attributes{"timeout": 0}); err != nil {
		t.Error(err)
	}
}

// dropsRepliesAfter is a one-worker runner's options whose task "t" drops
// every reply at the proxy when its payload is "drop": the handler is done,
// so its acknowledgement's reply is lost.
func dropsRepliesAfter(t *testing.T, p *proxied, rec *recorder) Options {
	return Options{
		Group: "g",
		Tasks: map[string]Task{"t": {Handler: func(_ context.Context, payload []byte) error {
			if string(payload) == "drop" {
				p.dropReplies(t)
			}
			return nil
		}}},
		Workers:       1,
		Block:         50 * time.Millisecond,
		ChoreInterval: time.Hour,
		Election:      election.Opts{TTL: time.Minute, Wait: time.Hour, StopTimeout: time.Second},
		OnEvent:       rec.add,
	}
}

func (p *proxied) heal(t *testing.T) {
	t.Helper()
	if err := p.proxy.RemoveToxic("drop-replies"); err != nil {
		t.Error(err)
	}
}

// An acknowledgement that applied in Redis but whose reply was lost is not a
// lost task: the runner re-runs the (idempotent) complete script until it
// answers, reports the task completed, and records its sample once. Before
// the fix it reported an error and nothing else, while Redis had deleted the
// entry: no completion, nothing held, a "lost" task for the harness.
func TestAckWhoseReplyIsLostIsNotLost(t *testing.T) {
	p := newProxied(t)
	ctx := t.Context()
	// Another instance holds the lease, so this one never runs the metrics
	// chore (which would read and reset the samples the test counts).
	if err := p.admin.Set(ctx, election.LeaderKey("g"), "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	o := p.opts
	const readTimeout = 500 * time.Millisecond
	o.ReadTimeout, o.MaxRetries = readTimeout, 1 // go-redis re-sends once: no double sample either
	rdb := redis.NewClient(&o)
	t.Cleanup(func() { _ = rdb.Close() })

	rec := &recorder{}
	cfg := dropsRepliesAfter(t, p, rec)
	r, err := New(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Stop(sctx)
	})
	// Tasks are dispatched unproxied, so that the test's short read timeout
	// under load cannot fail a dispatch.
	producer, err := New(p.admin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A first task loads the complete script (a cold cache's NOSCRIPT reply
	// would be dropped instead, and nothing would apply).
	if _, err := producer.Dispatch(ctx, "t", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the first task completed", func() bool { return len(rec.all(EventTaskCompleted)) == 1 })
	id, err := producer.Dispatch(ctx, "t", []byte("drop"))
	if err != nil {
		t.Fatal(err)
	}
	// It applies: the entry leaves Redis, while the reply is lost.
	eventually(t, 5*time.Second, "the acknowledgement to apply", func() bool {
		return p.admin.XLen(ctx, r.keys.stream).Val() == 0
	})
	time.Sleep(2 * readTimeout) // the fault: replies stay lost beyond the read timeout
	if n := len(rec.all(EventTaskCompleted)); n != 1 {
		t.Fatalf("%d completions while the reply is lost; want 1 (the first task's)", n)
	}
	p.heal(t)
	eventually(t, 5*time.Second, "the task reported completed", func() bool { return len(rec.all(EventTaskCompleted)) == 2 })
	if got := rec.all(EventTaskCompleted)[1]; got.TaskID != id || got.Duplicate {
		t.Errorf("completion %+v; want task %s, not a duplicate (our own earlier attempt acknowledged it)", got, id)
	}
	if n, err := p.admin.HGet(ctx, r.keys.metricsN, "t").Int(); err != nil || n != 2 {
		t.Errorf("samples of t: %d (%v); want 2: a re-run must not record a sample again", n, err)
	}
	if s := r.Stats(); s.Completed != 2 {
		t.Errorf("Stats.Completed = %d, want 2", s.Completed)
	}
	h, err := Held(ctx, p.admin, "g")
	if err != nil || len(h.Stream)+len(h.Delayed) != 0 {
		t.Errorf("Held = %+v, %v; want nothing", h, err)
	}
	for _, e := range rec.all(EventError) {
		if strings.Contains(e.Err.Error(), "acknowledging") {
			t.Errorf("reported %v; want no acknowledgement error once Redis answered", e.Err)
		}
	}
}

// A runner killed while its acknowledgement's reply is lost never learns
// that it applied: it reports no completion. What it does report, before the
// send, is that the acknowledgement is going out (EventTaskAcknowledging),
// so a harness that finds the entry gone from Redis at the end can tell an
// acknowledged task from a lost one. Before, such a task was counted lost.
func TestKilledWithAckInFlightReportsAcknowledging(t *testing.T) {
	p := newProxied(t)
	if err := p.admin.Set(t.Context(), election.LeaderKey("g"), "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	o := p.opts
	o.ReadTimeout, o.MaxRetries = 200*time.Millisecond, 0
	rdb := redis.NewClient(&o)
	t.Cleanup(func() { _ = rdb.Close() })
	rec := &recorder{}
	cfg := dropsRepliesAfter(t, p, rec)
	r, err := New(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, kill := context.WithCancel(t.Context())
	defer kill()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	producer, err := New(p.admin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := producer.Dispatch(t.Context(), "t", nil); err != nil { // loads the script
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the first task completed", func() bool { return len(rec.all(EventTaskCompleted)) == 1 })
	id, err := producer.Dispatch(t.Context(), "t", []byte("drop"))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the acknowledgement to apply", func() bool {
		return p.admin.XLen(t.Context(), r.keys.stream).Val() == 0
	})
	kill()
	// Replies flow again, so that the fetch blocked on a lost reply ends
	// now rather than at go-redis's blocking-read timeout (Block + 10 s).
	p.heal(t)
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.Stop(sctx)
	for _, e := range rec.all(EventTaskCompleted) {
		if e.TaskID == id {
			t.Fatalf("killed runner reported %s completed; its reply never came", id)
		}
	}
	acking := 0
	for _, e := range rec.all(EventTaskAcknowledging) {
		if e.TaskID == id {
			acking++
		}
	}
	if acking == 0 {
		t.Errorf("no %s event for %s: a harness would count the acknowledged task lost", EventTaskAcknowledging, id)
	}
	if h, err := Held(t.Context(), p.admin, "g"); err != nil || len(h.Stream) != 0 {
		t.Errorf("Held = %+v, %v; want nothing (the acknowledgement applied)", h, err)
	}
}

// A graceful Stop that begins while the acker pauses between re-sends of an
// unanswered acknowledgement ends that pause at once when the stop bound
// leaves no room for another attempt. Under a mock clock that is never
// advanced, the pause never ends by itself: before, Stop waited for it
// forever (with the real clock, up to 1 s beyond its bound).
func TestStopEndsAckResendPause(t *testing.T) {
	p := newProxied(t)
	if err := p.admin.Set(t.Context(), election.LeaderKey("g"), "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	o := p.opts
	o.ReadTimeout, o.MaxRetries, o.DialerRetries = 300*time.Millisecond, -1, 1
	rdb := redis.NewClient(&o)
	t.Cleanup(func() { _ = rdb.Close() })
	if err := completeScript.Load(t.Context(), p.admin).Err(); err != nil {
		t.Fatal(err)
	}
	cfg := Options{
		Group: "g",
		Tasks: map[string]Task{"t": {Handler: func(context.Context, []byte) error {
			// Nothing reaches Redis from now on: the acknowledgement goes unanswered.
			if _, err := p.proxy.AddToxic("reset", "reset_peer", "upstream", 1, toxiclient.Attributes{"timeout": 0}); err != nil {
				t.Error(err)
			}
			return nil
		}}},
		Workers:  1,
		Block:    50 * time.Millisecond,
		Clock:    clock.NewMock(),
		Election: election.Opts{TTL: time.Minute, Wait: time.Hour, StopTimeout: 5 * time.Millisecond}, // below the first pause, 10 ms
	}
	r, err := New(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	r.resendHook = func(attempt int) {
		if attempt == 2 { // the first attempt went unanswered; the pause comes next
			go func() { stopped <- r.Stop(context.Background()) }()
			<-r.stopping
		}
	}
	ctx, kill := context.WithCancel(t.Context())
	t.Cleanup(kill) // ends a Stop that hangs, after the test failed
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	producer, err := New(p.admin, Options{Group: "g", Tasks: cfg.Tasks})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := producer.Dispatch(t.Context(), "t", nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not return: the acker waited out its pause past the stop bound")
	}
	if s := r.Stats(); s.Completed != 0 {
		t.Errorf("Stats.Completed = %d; want 0: no attempt was answered", s.Completed)
	}
}
