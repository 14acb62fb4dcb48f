package runner

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// An instance whose acknowledgement of a finished task is slower than
// ClaimIdle takes the entry over itself with its own XAUTOCLAIM pass (the
// entry is still pending under it, idle for ClaimIdle): it must not run the
// task a second time, whether the pass's reply comes while the
// acknowledgement is still on its way or after its answer (Redis ran the pass
// first, the acknowledgement's reply came back first). Before, a finished
// delivery left the in-flight registry before its acknowledgement was sent,
// so the fetcher took the reclaimed entry for a new one and ran it again: the
// task completed twice on one instance (seen in chaos runs of leader-crash at
// --time-scale 0.2 on a loaded machine, ClaimIdle 440 ms: 22 of 44 repeated
// tasks on the real backend, 1 of 8 on the process backend, were one
// instance's own).
func TestOwnEntryAwaitingAckIsNotRunAgain(t *testing.T) {
	for _, afterAnswer := range []bool{false, true} {
		name := "pass answered while the acknowledgement is held"
		if afterAnswer {
			name = "pass answered after the acknowledgement"
		}
		t.Run(name, func(t *testing.T) { testOwnEntryNotRunAgain(t, afterAnswer) })
	}
}

func testOwnEntryNotRunAgain(t *testing.T, afterAnswer bool) {
	f := newFleet(t)
	runs := newCounter()
	cfg := f.config(map[string]Task{"t": countedTask(runs)})
	cfg.ClaimIdle = 300 * time.Millisecond

	client := redis.NewClient(&redis.Options{Addr: f.addr})
	defer client.Close()
	a, err := New(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The acknowledgement of the first batch is held until released: as if
	// its script were slow, past ClaimIdle.
	ackHeld, ackRelease := make(chan struct{}), make(chan struct{})
	firstAck := true
	a.ackHook = func(int) { // the acker's goroutine only
		if firstAck {
			firstAck = false
			close(ackHeld)
			<-ackRelease
		}
	}
	// afterAnswer: the reply of the first pass that takes the entry over
	// while its acknowledgement is held is held itself until the
	// acknowledgement was answered. Not a pass before that: on a loaded
	// machine the worker may start the task late and defer it, and the
	// instance's own pass then takes the entry over before it ran (the
	// registry drops that copy); holding that pass would keep the task from
	// ever being acknowledged.
	claimHeld, claimRelease := make(chan struct{}), make(chan struct{})
	firstClaim := true
	if afterAnswer {
		a.claimHook = func() { // the fetcher's goroutine only
			select {
			case <-ackHeld:
			default:
				return
			}
			if firstClaim {
				firstClaim = false
				close(claimHeld)
				<-claimRelease
			}
		}
	}
	ctx, kill := context.WithCancel(context.Background())
	defer kill()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := a.Dispatch(context.Background(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	wait := func(ch <-chan struct{}, what string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatal(what)
		}
	}
	wait(ackHeld, "the task's acknowledgement was never sent")
	probe := dial(t, f.addr)
	// Redis counts a delivery for every XAUTOCLAIM that takes the entry:
	// the passes that count are those after the acknowledgement was held,
	// not one that took a deferred task over before it ran.
	deliveries := func() int64 {
		p, err := probe.XPendingExt(context.Background(), &redis.XPendingExtArgs{Stream: a.keys.stream, Group: cfg.Group, Start: "-", End: "+", Count: 1}).Result()
		if err != nil || len(p) != 1 {
			return 0
		}
		return p[0].RetryCount
	}
	heldAt := deliveries()
	if heldAt == 0 {
		t.Fatal("the entry is not pending while its acknowledgement is held")
	}
	completions := func() []Event {
		var out []Event
		for _, e := range f.rec.all(EventTaskCompleted) {
			if e.TaskID == id {
				out = append(out, e)
			}
		}
		return out
	}
	stop := func() <-chan error {
		stopped := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			stopped <- a.Stop(ctx)
		}()
		return stopped
	}
	var stopped <-chan error
	if afterAnswer {
		wait(claimHeld, "the instance's own XAUTOCLAIM never took the entry over")
		if n := deliveries(); n <= heldAt {
			t.Fatalf("the held pass did not take the entry over (deliveries %d, %d when the acknowledgement was held)", n, heldAt)
		}
		close(ackRelease)
		eventually(t, 5*time.Second, "the acknowledgement's answer", func() bool { return len(completions()) > 0 })
		close(claimRelease)
		stopped = stop()
	} else {
		eventually(t, 5*time.Second, "the instance's own XAUTOCLAIM to take the entry over", func() bool {
			return deliveries() > heldAt
		})
		// Stop gracefully: the fetcher ends once it has handed what that
		// pass returned to the pool, and Stop then waits for whatever the
		// pool holds to finish; the acknowledgement is released only then.
		stopped = stop()
		wait(a.fetchDone, "the fetcher did not end")
		close(ackRelease)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("stop: %v", err)
	}
	if n := runs.get(id); n != 1 {
		t.Errorf("the task ran %d times on its one instance; want 1 (its own reclaim of an entry it had finished ran it again)", n)
	}
	if cs := completions(); len(cs) != 1 || cs[0].Duplicate {
		t.Errorf("completions of the task: %+v; want one, not a duplicate", cs)
	}
	if l, err := probe.XLen(context.Background(), a.keys.stream).Result(); err != nil || l != 0 {
		t.Errorf("stream length %d (%v), want 0", l, err)
	}
}
