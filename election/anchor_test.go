package election_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
)

// stallClock is the real clock, except that once armed, the next Now or Since
// call reads the time and then stalls for d before returning it: the loop
// goroutine descheduled (CPU starvation, a GC stop) right after it read the
// time it bases its timers on.
type stallClock struct {
	clock.Clock
	d        time.Duration
	armed    atomic.Bool
	stalling chan struct{} // closed when the stall begins
	stalled  chan struct{} // closed when it ends
}

func newStallClock(d time.Duration) *stallClock {
	return &stallClock{Clock: clock.New(), d: d, stalling: make(chan struct{}), stalled: make(chan struct{})}
}

func (c *stallClock) stall() {
	if c.armed.CompareAndSwap(true, false) {
		close(c.stalling)
		time.Sleep(c.d) // the fault itself: a goroutine that does not run
		close(c.stalled)
	}
}

func (c *stallClock) Now() time.Time {
	t := c.Clock.Now()
	c.stall()
	return t
}

func (c *stallClock) Since(t time.Time) time.Duration {
	d := c.Clock.Since(t)
	c.stall()
	return d
}

// armOnRenew arms the clock's stall when a renewal's reply has arrived, so
// the stall hits the loop as it handles that reply. (A renewal is the lease
// script with an ID and a TTL that does not name the token counter, which
// every acquire does.)
type armOnRenew struct {
	redis.Scripter
	c    *stallClock
	arm  atomic.Bool
	sent atomic.Int64 // UnixNano of the armed renewal's send
}

func (a *armOnRenew) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	armed := len(args) >= 2 && !(len(keys) > 1 && strings.HasSuffix(keys[1], ":token")) && a.arm.Load()
	if armed {
		a.sent.Store(time.Now().UnixNano())
	}
	cmd := a.Scripter.EvalSha(ctx, sha, keys, args...)
	if armed && cmd.Err() == nil && a.arm.CompareAndSwap(true, false) {
		a.c.armed.Store(true)
	}
	return cmd
}

// The lease guard is anchored at the renewal's send, whatever happens to the
// loop after the reply: a loop descheduled between reading the reply time
// and arming its timers must not move the guard (or the next renewal) later,
// and while it is starved IsLeader and Leadership must turn false at the
// guard deadline by themselves. Before the fix the guard was measured from
// when the timer was armed: with TTL 1 s, a 600 ms stall put it ~590 ms past
// the key's expiry, and a 1.5 s stall left IsLeader true after the key was
// gone.
func TestSafeGuardAnchoredAtTheSend(t *testing.T) {
	// TTL 2 s: after a 1.2 s stall the next renewal has ~780 ms to land
	// before the guard, even on a loaded machine.
	const ttl = 2 * time.Second
	for _, tc := range []struct {
		name  string
		stall time.Duration
	}{
		{"stall-shorter-than-ttl", 1200 * time.Millisecond},
		{"stall-longer-than-ttl", 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := redistest.Addr(t)
			admin := redistest.ClientAt(t, addr)
			clk := newStallClock(tc.stall)
			rdb := &armOnRenew{Scripter: redistest.ClientAt(t, addr), c: clk}
			c := newCandidate(t, addr, t.Name(), election.Opts{Redis: rdb, TTL: ttl, Wait: time.Hour, Safe: true, Clock: clk})
			c.e.Start()
			waitFor(t, 2*time.Second, "leads", c.e.IsLeader)
			before := c.e.Leadership().GuardDeadline
			rdb.arm.Store(true)
			select {
			case <-clk.stalling:
			case <-time.After(3 * ttl): // the first renewal may meet a cold script cache (NOSCRIPT): the next arms
				t.Fatal("no renewal stalled within 3 TTLs")
			}
			sent := time.Unix(0, rdb.sent.Load())
			if tc.stall < ttl {
				<-clk.stalled
				// Wait for the loop to publish what it decided on that reply.
				// (Meanwhile Leadership may say not leading: the previous
				// renewal's guard can pass during the stall.)
				var l election.Leadership
				waitFor(t, ttl, "the renewal's guard published", func() bool {
					l = c.e.Leadership()
					return l.Leader && !l.GuardDeadline.Equal(before)
				})
				// The key's expiry now is no earlier than when l was read
				// (renewals only extend it); PTTL is whole milliseconds.
				pttl := admin.PTTL(t.Context(), c.e.Key()).Val()
				expiry := time.Now().Add(max(pttl, 0) + time.Millisecond)
				t.Logf("guard deadline: stalled renewal's send + %v; the key expires at send + %v", l.GuardDeadline.Sub(sent), expiry.Sub(sent))
				if l.GuardDeadline.After(expiry) {
					t.Fatalf("guard deadline %v after the key's expiry: the stall moved it later", l.GuardDeadline.Sub(expiry))
				}
				if h := holder(t, admin, c.e.Key()); h != c.e.ID() {
					t.Fatalf("key holds %q; want our ID", h)
				}
				return
			}
			// The loop is starved past the lease: belief must end on its own.
			waitFor(t, 2*ttl, "key expired", func() bool { return admin.Exists(t.Context(), c.e.Key()).Val() == 0 })
			select {
			case <-clk.stalled:
				t.Fatal("the stall ended before the key expired: nothing tested (machine too slow?)")
			default:
			}
			if c.e.IsLeader() {
				t.Fatal("IsLeader true while the key is gone and the loop is starved")
			}
			if l := c.e.Leadership(); l.Leader || !l.GuardDeadline.IsZero() {
				t.Fatalf("Leadership %+v while the key is gone: want not leading, no guard deadline", l)
			}
			<-clk.stalled
		})
	}
}
