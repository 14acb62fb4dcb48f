package observe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/observe"
	"github.com/leaselab/leaselab/publish"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// member is one publishing elector of a test fleet.
type member struct {
	e   *election.Elector
	pub *publish.Publisher
	rdb *redis.Client
}

func startMember(t *testing.T, addr, group string, ttl, wait time.Duration) *member {
	t.Helper()
	return startMemberOn(t, redis.NewClient(&redis.Options{Addr: addr}), group, ttl, wait)
}

// startMemberOn starts a member on rdb, which it closes when it stops.
func startMemberOn(t *testing.T, rdb *redis.Client, group string, ttl, wait time.Duration) *member {
	t.Helper()
	pub, err := publish.New(publish.Options{Redis: rdb})
	if err != nil {
		t.Fatal(err)
	}
	e, promote, demote, errs := election.NewElector(election.Opts{Redis: rdb, Key: group, TTL: ttl, Wait: wait, OnTransition: pub.Observe})
	go func() {
		for {
			select {
			case <-promote:
			case <-demote:
			case <-errs:
			case <-e.Done():
				return
			}
		}
	}()
	e.Start()
	m := &member{e: e, pub: pub, rdb: rdb}
	t.Cleanup(func() { m.stop(t) })
	return m
}

func (m *member) stop(t *testing.T) {
	_ = m.e.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = m.pub.Close(ctx)
	_ = m.rdb.Close()
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

// TestWatchHandover: a fleet of three hands over leadership twice (a
// graceful stop, then a leader whose renewals fail); the watch sees both
// lanes agree, the gaps placed within their stated uncertainty of what the
// electors themselves decided, and the recording read back gives the same
// result.
func TestWatchHandover(t *testing.T) {
	for _, poll := range []bool{false, true} {
		name := "notify"
		if poll {
			name = "poll"
		}
		t.Run(name, func(t *testing.T) {
			addr := redistest.Addr(t)
			group := t.Name()
			obs := redis.NewClient(&redis.Options{Addr: addr})
			defer obs.Close()
			const ttl, wait = 300 * time.Millisecond, 100 * time.Millisecond
			limit := time.Duration(0)
			ctx, cancel := context.WithCancel(context.Background())
			var file bytes.Buffer
			rw := observe.NewWriter(&file)
			got := make(chan *observe.Recording, 1)
			started := make(chan struct{})
			go func() {
				rec, err := observe.Watch(ctx, observe.Options{Redis: obs, Group: group, Poll: poll, Interval: 20 * time.Millisecond, Record: rw,
					EnableNotifications: true, // a spawned server has them on; LEASELAB_REDIS_ADDR's may not
					OnStart:             func(observe.Header) { close(started) }})
				if err != nil {
					t.Error(err)
					close(started)
				}
				got <- rec
			}()
			<-started // the fleet starts under watch
			ms := []*member{startMember(t, addr, group, ttl, wait), startMember(t, addr, group, ttl, wait), startMember(t, addr, group, ttl, wait)}
			leader := func() *member {
				for _, m := range ms {
					if m.e.IsLeader() {
						return m
					}
				}
				return nil
			}
			waitFor(t, 2*time.Second, "a leader", func() bool { return leader() != nil })
			first := leader()
			first.stop(t)
			waitFor(t, 2*time.Second, "a new leader", func() bool { l := leader(); return l != nil && l != first })
			time.Sleep(ttl) // a stable stretch before the end
			cancel()
			rec := <-got
			if rec == nil {
				t.Fatal("no recording")
			}
			if want := observe.LanePoll; poll && rec.Header.Lane != want {
				t.Fatalf("lane %q, want %q", rec.Header.Lane, want)
			}
			if !poll && rec.Header.Lane != observe.LaneNotify {
				t.Fatalf("lane %q, want notifications on a spawned Redis", rec.Header.Lane)
			}
			res, err := observe.Build(context.Background(), rec, observe.Limits{MaxOverlap: &limit})
			if err != nil {
				t.Fatal(err)
			}
			a := res.Analysis
			if len(a.Beliefs) < 2 || a.Summary.Overlaps != 0 || res.Verdict != model.Pass {
				t.Fatalf("beliefs %d, overlaps %d, verdict %s %v: want a clean handover", len(a.Beliefs), a.Summary.Overlaps, res.Verdict, res.Reasons)
			}
			// The stop's release hands over within a Wait: one gap, placed
			// after the stop began.
			if len(a.Gaps) != 1 || a.Gaps[0].Duration > wait+50*time.Millisecond {
				t.Fatalf("gaps %+v, want one of at most a Wait", a.Gaps)
			}
			if g := a.Gaps[0]; g.Uncertainty <= 0 || g.Uncertainty > 20*time.Millisecond {
				t.Fatalf("gap uncertainty %v: want a measured, loopback-sized one", g.Uncertainty)
			}
			gapAt := res.Observed.Start.Add(a.Gaps[0].Start)
			if len(res.Observed.Instances) != 2 {
				t.Fatalf("instances %+v, want the 2 that led (followers publish nothing)", res.Observed.Instances)
			}
			for _, oi := range res.Observed.Instances {
				if oi.ClockOffset.Abs() > 50*time.Millisecond {
					t.Errorf("instance %s: clock offset %v on one machine", oi.ID, oi.ClockOffset)
				}
			}
			if !a.Redis.Observed || len(a.Redis.Stale) != 0 {
				t.Fatalf("redis lane observed %v, stale %+v", a.Redis.Observed, a.Redis.Stale)
			}
			// The recording, read back, gives the same result.
			if err := rw.Flush(); err != nil {
				t.Fatal(err)
			}
			back, err := observe.ReadRecording(context.Background(), &file, "observed.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			res2, err := observe.Build(context.Background(), back, observe.Limits{MaxOverlap: &limit})
			if err != nil {
				t.Fatal(err)
			}
			j1, _ := json.Marshal(res)
			j2, _ := json.Marshal(res2)
			if !bytes.Equal(j1, j2) {
				t.Fatalf("the recording read back gives another result:\n%s\n%s", j1, j2)
			}
			t.Logf("lane %s (resolution %v): gap %v ± %v at %v", rec.Header.Lane, rec.Header.Resolution, a.Gaps[0].Duration, a.Gaps[0].Uncertainty, gapAt)
		})
	}
}
