package runner

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
)

// ackOutage is how the other instance comes into ackOutage's run.
type ackOutage struct {
	// previousOwner: the other instance had the entry first (it was
	// delivered to it and left idle for ClaimIdle), the runner took it over
	// at its start, and the other instance finishes it while the runner's
	// acknowledgement is failing. Otherwise the runner reads the entry
	// first, and the other instance takes it over once Redis counts it idle
	// for ClaimIdle, then finishes it.
	previousOwner bool
	// resend, if not nil, becomes the runner's resendHook; finished is
	// closed once the other instance finished the entry.
	resend func(attempt int, finished <-chan struct{})
}

// run runs one slow task on a runner whose acknowledgement meets a reset
// connection (a reset_peer toxic on the requests, added as the handler
// returns: nothing reaches Redis, nothing applies), while the test, as
// another instance, finishes the same entry (XACK, XDEL); then it lets the
// runner reach Redis again. It returns the runner's completions of the task
// and its acknowledgement errors, and whether the runner re-sent its
// acknowledgement (false: its first attempt was answered, so the outage did
// not hold).
func (o ackOutage) run(t *testing.T) (completed, ackErrs []Event, resent bool) {
	t.Helper()
	p := newProxied(t)
	ctx := t.Context()
	if err := p.admin.Set(ctx, election.LeaderKey("g"), "someone-else", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	opts := p.opts
	// Reset at once, and never retried by go-redis: every attempt the
	// runner makes is one send.
	opts.ReadTimeout, opts.MaxRetries, opts.DialerRetries = 300*time.Millisecond, -1, 1
	rdb := redis.NewClient(&opts)
	t.Cleanup(func() { _ = rdb.Close() })
	// A cold script cache would answer NOSCRIPT: an answer, not a re-send.
	if err := completeScript.Load(ctx, p.admin).Err(); err != nil {
		t.Fatal(err)
	}

	const claimIdle = 2 * time.Second
	const work = 1200 * time.Millisecond // the first attempt goes out 1.2 s after the delivery
	rec := &recorder{}
	cfg := Options{
		Group: "g",
		Tasks: map[string]Task{"t": {Timeout: 1500 * time.Millisecond, Handler: func(ctx context.Context, _ []byte) error {
			select {
			case <-time.After(work):
			case <-ctx.Done():
				return ctx.Err()
			}
			if _, err := p.proxy.AddToxic("reset", "reset_peer", "upstream", 1, toxiclient.Attributes{"timeout": 0}); err != nil {
				t.Error(err)
			}
			return nil
		}}},
		Workers:       1,
		Block:         50 * time.Millisecond,
		ClaimIdle:     claimIdle,
		ChoreInterval: time.Hour, // the runner reclaims at its start, then no more
		Election:      election.Opts{TTL: time.Minute, Wait: time.Hour, StopTimeout: time.Second},
		OnEvent:       rec.add,
	}
	r, err := New(rdb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	finished := make(chan struct{})
	var finishOnce sync.Once
	finish := func() { finishOnce.Do(func() { close(finished) }) }
	var resends atomic.Int32
	r.resendHook = func(attempt int) {
		resends.Add(1)
		if o.resend != nil {
			o.resend(attempt, finished)
		}
	}
	producer, err := New(p.admin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ensureGroup(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := producer.Dispatch(ctx, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.previousOwner {
		if err := p.admin.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "other", Streams: []string{r.keys.stream, ">"}, Count: 1}).Err(); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the entry idle for ClaimIdle under the other instance", func() bool {
			pe, err := p.admin.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: r.keys.stream, Group: "g", Start: "-", End: "+", Count: 1}).Result()
			return err == nil && len(pe) == 1 && pe[0].Idle >= claimIdle
		})
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = r.Stop(sctx)
	})
	t.Cleanup(finish) // runs before the Stop: a hook waiting for it must not hold the Stop
	if o.previousOwner {
		eventually(t, 10*time.Second, "the runner's acknowledgement to go out", func() bool {
			return len(rec.all(EventTaskAcknowledging)) == 1
		})
	} else {
		eventually(t, 10*time.Second, "the other instance to take the entry over", func() bool {
			msgs, _, err := p.admin.XAutoClaim(ctx, &redis.XAutoClaimArgs{
				Stream: r.keys.stream, Group: "g", Consumer: "other", MinIdle: claimIdle, Start: "0-0", Count: 1,
			}).Result()
			return err == nil && len(msgs) == 1 && msgs[0].Values["id"] == id
		})
	}
	// The other instance finishes the entry.
	entries, err := p.admin.XRange(ctx, r.keys.stream, "-", "+").Result()
	if err != nil || len(entries) != 1 {
		t.Fatalf("the stream holds %v (%v); want the task's one entry", entries, err)
	}
	if n, err := p.admin.XAck(ctx, r.keys.stream, "g", entries[0].ID).Result(); err != nil || n != 1 {
		t.Fatalf("the other instance's XACK: %d, %v; want 1 (the runner's attempts must not have applied)", n, err)
	}
	if err := p.admin.XDel(ctx, r.keys.stream, entries[0].ID).Err(); err != nil {
		t.Fatal(err)
	}
	finish()
	if err := p.proxy.RemoveToxic("reset"); err != nil {
		t.Fatal(err)
	}
	mine := func() (c, e []Event) {
		for _, ev := range rec.all(EventTaskCompleted) {
			if ev.TaskID == id {
				c = append(c, ev)
			}
		}
		for _, ev := range rec.all(EventError) {
			if strings.Contains(ev.Err.Error(), "acknowledging") {
				e = append(e, ev)
			}
		}
		return c, e
	}
	eventually(t, 10*time.Second, "the runner to report the task's outcome", func() bool {
		c, e := mine()
		return len(c)+len(e) > 0
	})
	completed, ackErrs = mine()
	return completed, ackErrs, resends.Load() > 0
}

// notMine runs o and fails t unless the runner reported no completion of
// its own (Duplicate false) and one acknowledgement error, saying the
// outcome is unknown.
//
// A run whose first acknowledgement was answered is tried again, up to
// three times: on a loaded machine a request sent just after the reset
// toxic was added to a live connection has been seen to pass it (answered
// 55 ms later, after the other instance's XACK), and then the runner rightly
// reports a Duplicate completion — the outage this test needs did not
// happen.
func (o ackOutage) notMine(t *testing.T) {
	t.Helper()
	var completed, ackErrs []Event
	for try := 1; ; try++ {
		var resent bool
		completed, ackErrs, resent = o.run(t)
		if resent {
			break
		}
		if try == 3 {
			t.Fatalf("in %d runs the runner's first acknowledgement was answered every time (completions %v, errors %v): the reset toxic never held", try, completed, ackErrs)
		}
		t.Logf("run %d: the first acknowledgement passed the reset toxic (completions %v, errors %v); running again", try, completed, ackErrs)
	}
	for _, c := range completed {
		if !c.Duplicate {
			t.Errorf("reported %+v: this instance's completion, but its attempts never applied and the other instance acknowledged the entry", c)
		}
	}
	if len(ackErrs) != 1 || !strings.Contains(ackErrs[0].Err.Error(), "unknown") {
		t.Errorf("acknowledgement errors %v; want one saying the outcome is unknown", ackErrs)
	}
}

// An acknowledgement is re-sent only while no other instance can have taken
// its entry over: until ClaimIdle after the read that delivered the entry
// was sent (Redis counts an entry's idle time from its delivery). Before,
// the re-sends went on until ClaimIdle after the first attempt, here 1.2 s
// longer, and a 0 from a re-send after the other instance finished the entry
// was reported as this instance's own completion, not a duplicate, although
// none of its attempts had applied.
func TestAckResentOnlyBeforeAnotherMayReclaim(t *testing.T) {
	ackOutage{}.notMine(t)
}

// A re-send that went out in time but was answered only after another
// instance may have taken the entry over (here: the acker stalled before
// sending it until the other instance had finished the entry) proves
// nothing: its 0 may be the other instance's acknowledgement. Before, it was
// reported as this instance's completion.
func TestAckAnsweredAfterReclaimIsUnknown(t *testing.T) {
	ackOutage{resend: func(attempt int, finished <-chan struct{}) {
		if attempt == 2 {
			<-finished
		}
	}}.notMine(t)
}

// An entry this instance took over from another (XAUTOCLAIM) may be finished
// by its previous owner at any time, so a 0 from a re-send does not say this
// instance's lost attempt acknowledged it, even within ClaimIdle. Before, it
// was reported as this instance's completion.
func TestAckOfReclaimedEntryResentIsUnknown(t *testing.T) {
	ackOutage{previousOwner: true}.notMine(t)
}
