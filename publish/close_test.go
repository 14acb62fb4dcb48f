package publish_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/publish"
)

// slack is how late after its deadline Close may return on a loaded
// machine; the failures it tells apart are seconds late or never.
const slack = 500 * time.Millisecond

// onWire signals each time the client sends a script (a publisher's write).
type onWire chan struct{}

func (w onWire) DialHook(next redis.DialHook) redis.DialHook { return next }
func (w onWire) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (w onWire) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			select {
			case w <- struct{}{}:
			default:
			}
		}
		return next(ctx, cmd)
	}
}

// closeOneUnwritten runs Close(ctx) with one transition that cannot be
// written, and checks that it returns within limit (and slack) saying so;
// the test fails instead of hanging when Close never returns.
func closeOneUnwritten(t *testing.T, pub *publish.Publisher, ctx context.Context, limit time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- pub.Close(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return within 20s")
	}
	took := time.Since(start)
	t.Logf("Close took %v", took)
	if took > limit+slack {
		t.Errorf("Close took %v; want at most %v", took, limit)
	}
	if err == nil || !strings.Contains(err.Error(), "1 transitions not written") {
		t.Errorf("Close: %v, want 1 not written", err)
	}
}

// frozen returns a client of a redis-server that has answered once and is
// then frozen (SIGSTOP): connected, it never answers again, as a hung
// Redis or a silent network. The server thaws at cleanup.
func frozen(t *testing.T, o redis.Options, wire onWire) (*redis.Client, func()) {
	srv := redistest.Start(t)
	o.Addr = srv.Addr
	rdb := redis.NewClient(&o)
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	rdb.AddHook(wire)
	return rdb, func() {
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = srv.Resume() })
	}
}

// Close returns by its context's deadline while a write is on the wire to
// a Redis that never answers, whatever the client's read timeout (3s by
// default, or none) and the publisher's Timeout. Nothing of the publisher
// is left running after Close when its writes end by then: a client that
// honours context deadlines (ContextTimeoutEnabled) and a Timeout shorter
// than Close's. Otherwise the write on the wire ends when its Timeout or
// the client ends it (here: the client's Close), and nothing is left after.
func TestCloseReturnsByItsDeadline(t *testing.T) {
	// goleak waits about 0.4s for goroutines to end: a writer still
	// writing 0.9s after Close (a write begun during Close not bounded by
	// its deadline) is found, one ending with Close is not.
	const deadline = 1500 * time.Millisecond
	for _, c := range []struct {
		name    string
		o       redis.Options
		timeout time.Duration // the publisher's
		// leftToClient: the write on the wire when Close is called
		// outlives Close until it times out or the client is closed.
		leftToClient bool
	}{
		// The write on the wire at Close ends at 1.2s; the retry's
		// deadline is Close's, not 1.2s later.
		{"context timeouts", redis.Options{ContextTimeoutEnabled: true, ReadTimeout: -1}, 1200 * time.Millisecond, false},
		{"context timeouts, a longer Timeout", redis.Options{ContextTimeoutEnabled: true, ReadTimeout: -1}, 2 * time.Second, true},
		{"read timeout 3s", redis.Options{}, 1200 * time.Millisecond, true},
		{"no read timeout", redis.Options{ReadTimeout: -1}, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			wire := make(onWire, 1)
			rdb, freeze := frozen(t, c.o, wire)
			before := goleak.IgnoreCurrent() // the server's and the client's
			pub, err := publish.New(publish.Options{Redis: rdb, Timeout: c.timeout, Retry: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			pub.Observe(election.Transition{Kind: election.Promoted, At: time.Now(), ID: "a", Key: t.Name(), Term: 1})
			<-wire
			waitFor(t, 5*time.Second, "the first write", func() bool { return pub.Stats().Written == 1 })
			freeze()
			pub.Observe(election.Transition{Kind: election.Demoted, At: time.Now(), ID: "a", Key: t.Name(), Term: 1})
			<-wire // the demotion's write is on the wire
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			defer cancel()
			closeOneUnwritten(t, pub, ctx, deadline)
			if c.leftToClient {
				_ = rdb.Close()
			}
			goleak.VerifyNone(t, before)
		})
	}
}

// Close with a context without a deadline (context.Background()) is
// bounded all the same, by 2 × Options.Timeout: against a Redis that
// refuses every connection, and against one that never answers.
func TestCloseWithoutDeadlineIsBounded(t *testing.T) {
	const timeout = 200 * time.Millisecond
	t.Run("refused", func(t *testing.T) {
		var down atomic.Bool
		down.Store(true)
		rdb := gated(t, redistest.Addr(t), &down)
		before := goleak.IgnoreCurrent() // the server's and the client's
		pub, err := publish.New(publish.Options{Redis: rdb, Timeout: timeout, Retry: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		pub.Observe(election.Transition{Kind: election.Demoted, At: time.Now(), ID: "a", Key: t.Name(), Term: 1})
		waitFor(t, 5*time.Second, "a refused write", func() bool { return pub.Stats().Failed >= 1 })
		closeOneUnwritten(t, pub, context.Background(), 2*timeout)
		goleak.VerifyNone(t, before)
	})
	t.Run("never answers", func(t *testing.T) {
		wire := make(onWire, 1)
		rdb, freeze := frozen(t, redis.Options{ContextTimeoutEnabled: true, ReadTimeout: -1}, wire)
		freeze()
		before := goleak.IgnoreCurrent() // the server's and the client's
		pub, err := publish.New(publish.Options{Redis: rdb, Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		pub.Observe(election.Transition{Kind: election.Demoted, At: time.Now(), ID: "a", Key: t.Name(), Term: 1})
		<-wire
		closeOneUnwritten(t, pub, context.Background(), 2*timeout)
		goleak.VerifyNone(t, before)
	})
}
