package publish_test

import (
	"context"
	"errors"
	"net"
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

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// read returns the stream's entries, parsed.
func read(t *testing.T, rdb *redis.Client, group string) []publish.Entry {
	t.Helper()
	msgs, err := rdb.XRange(context.Background(), publish.StreamKey(group), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []publish.Entry
	for _, m := range msgs {
		e, err := publish.ParseEntry(m.ID, m.Values)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func redisNow(t *testing.T, rdb *redis.Client) time.Time {
	t.Helper()
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPublishesTransitions: an elector with a publisher writes its promotion
// and its demotion at Stop, one entry each, stamped with Redis time taken
// during the write, in the lease's hash slot.
func TestPublishesTransitions(t *testing.T) {
	rdb := redistest.Client(t)
	group := t.Name()
	pub, err := publish.New(publish.Options{Redis: rdb})
	if err != nil {
		t.Fatal(err)
	}
	o := election.Opts{Redis: rdb, Key: group, TTL: time.Second, Wait: time.Second, Safe: true, OnTransition: pub.Observe}
	before := redisNow(t, rdb)
	e, _, _, _ := election.NewElector(o)
	e.Start()
	waitFor(t, time.Second, "leads", e.IsLeader)
	if err := e.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := pub.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := redisNow(t, rdb)
	if k := publish.StreamKey(group); !strings.Contains(k, election.HashTag(group)) {
		t.Fatalf("stream %s lacks the lease's hash tag %s", k, election.HashTag(group))
	}
	got := read(t, rdb, group)
	if len(got) != 2 || got[0].Kind != election.Promoted || got[1].Kind != election.Demoted || got[1].Reason != election.ReasonStop {
		t.Fatalf("entries %+v, want promoted then demoted/stop", got)
	}
	for i, en := range got {
		if en.Instance != e.ID() || en.Group != group || en.Seq != uint64(i+1) || en.Late || en.Dropped != 0 || en.Publisher == "" {
			t.Errorf("entry %d: %+v", i, en)
		}
		if en.Redis.Before(before) || en.Redis.After(after) {
			t.Errorf("entry %d: Redis time %v outside the test's [%v, %v]", i, en.Redis, before, after)
		}
		if en.PubMono < en.Mono || en.PubWall.Before(en.Wall) {
			t.Errorf("entry %d: written (mono %v, wall %v) before its transition (mono %v, wall %v)", i, en.PubMono, en.PubWall, en.Mono, en.Wall)
		}
		if en.TTL != time.Second || en.Wait != time.Second || !en.Safe || en.Term != 1 || en.Token == 0 {
			t.Errorf("entry %d: options/term %+v", i, en)
		}
	}
	if got[0].RTT != 0 || got[1].RTT <= 0 {
		t.Errorf("RTTs %v, %v: want 0 for the first write, the first write's round trip for the second", got[0].RTT, got[1].RTT)
	}
}

// gated is a client of a real Redis whose dials fail while down is set, as
// a Redis behind a refusing network would.
func gated(t *testing.T, addr string, down *atomic.Bool) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, Dialer: func(ctx context.Context, network, a string) (net.Conn, error) {
		if down.Load() {
			return nil, errors.New("test: network down")
		}
		var d net.Dialer
		return d.DialContext(ctx, network, a)
	}})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestLateWhenUnreachable: transitions taken while Redis cannot be reached
// wait, and are written once it can, marked late, with the delay on the
// instance's monotonic clock; the elector's hook returned at once meanwhile.
func TestLateWhenUnreachable(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	var down atomic.Bool
	down.Store(true)
	group := t.Name()
	pub, err := publish.New(publish.Options{Redis: gated(t, addr, &down), Retry: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close(context.Background())
	pub.Observe(election.Transition{Kind: election.Promoted, At: time.Now(), ID: "a", Key: group, Term: 1})
	waitFor(t, time.Second, "a failed write", func() bool { return pub.Stats().Failed >= 2 })
	held := time.Now()
	pub.Observe(election.Transition{Kind: election.Demoted, At: time.Now(), ID: "a", Key: group, Term: 1, Reason: election.ReasonError, Err: errors.New("i/o timeout")})
	time.Sleep(50 * time.Millisecond) // the outage under test: what waits must say how long
	down.Store(false)
	waitFor(t, 2*time.Second, "written", func() bool { return pub.Stats().Written == 2 })
	outage := time.Since(held)
	got := read(t, admin, group)
	if len(got) != 2 {
		t.Fatalf("entries %+v, want 2", got)
	}
	for i, en := range got {
		if !en.Late {
			t.Errorf("entry %d not marked late", i)
		}
		if d := en.PubMono - en.Mono; d < 50*time.Millisecond || d > outage+time.Second {
			t.Errorf("entry %d: written %v after its transition, want the outage (>= 50ms, ~%v)", i, d, outage)
		}
	}
	if got[1].Reason != election.ReasonError || got[1].Err != "i/o timeout" {
		t.Errorf("demotion entry %+v", got[1])
	}
}

// TestBufferDropsOldest: a full buffer drops its oldest transitions, counts
// them, and the next entry carries the count; Observe never waits.
func TestBufferDropsOldest(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	var down atomic.Bool
	down.Store(true)
	group := t.Name()
	pub, err := publish.New(publish.Options{Redis: gated(t, addr, &down), Buffer: 3, Retry: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close(context.Background())
	for i := range 5 {
		pub.Observe(election.Transition{Kind: election.Errored, At: time.Now(), ID: "a", Key: group, Err: errors.New("x"), Term: uint64(i)})
	}
	if s := pub.Stats(); s.Dropped != 2 || s.Pending != 3 {
		t.Fatalf("stats %+v, want 2 dropped, 3 pending", s)
	}
	down.Store(false)
	waitFor(t, 2*time.Second, "written", func() bool { return pub.Stats().Pending == 0 })
	got := read(t, admin, group)
	// The writer may have taken seq 1 on the wire before the others were
	// observed; that write may then land once Redis is back. Either way
	// the last three are written in order, and every transition is
	// either written or counted dropped.
	if len(got) < 3 || got[len(got)-3].Seq != 3 || got[len(got)-1].Seq != 5 {
		t.Fatalf("entries %+v, want seq 3..5 last", got)
	}
	if d := pub.Stats().Dropped; int(d)+len(got) != 5 || got[len(got)-1].Dropped < d {
		t.Fatalf("entries %+v, stats %+v: want written + dropped = 5", got, pub.Stats())
	}
}

// TestCloseWritesWhatWaits: Close writes the buffer before it returns, and
// reports what it could not write when its context ends first.
func TestCloseWritesWhatWaits(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	var down atomic.Bool
	down.Store(true)
	_ = admin
	pub, err := publish.New(publish.Options{Redis: gated(t, addr, &down), Retry: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pub.Observe(election.Transition{Kind: election.Promoted, At: time.Now(), ID: "a", Key: t.Name(), Term: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := pub.Close(ctx); err == nil || !strings.Contains(err.Error(), "1 transitions not written") {
		t.Fatalf("Close with Redis down: %v, want 1 not written", err)
	}
	pub.Observe(election.Transition{Kind: election.Demoted, At: time.Now(), ID: "a", Key: t.Name(), Term: 1})
	if s := pub.Stats(); s.Pending != 1 {
		t.Fatalf("a transition after Close was taken: %+v", s)
	}
}
