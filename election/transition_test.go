package election_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
)

// transitions collects what OnTransition receives.
type transitions struct {
	mu   sync.Mutex
	list []election.Transition
}

func (r *transitions) add(t election.Transition) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, t)
}

func (r *transitions) get() []election.Transition {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]election.Transition(nil), r.list...)
}

// kinds returns the transitions as "kind/reason" strings.
func (r *transitions) kinds() []string {
	var out []string
	for _, t := range r.get() {
		s := string(t.Kind)
		if t.Reason != "" {
			s += "/" + string(t.Reason)
		}
		out = append(out, s)
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTransitionsWithReasons: the hook sees every promotion and demotion in
// order, each demotion with its reason, stamped with the elector's ID and term.
func TestTransitionsWithReasons(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	key := t.Name()
	var got transitions
	c := newCandidate(t, addr, key, election.Opts{TTL: ttl, Wait: 50 * time.Millisecond, OnTransition: got.add})
	c.e.Start()
	waitFor(t, time.Second, "leads", c.e.IsLeader)
	// The renewal finds the key someone else's: demoted, reason lost. Then
	// the key goes and the elector wins it back.
	admin.Set(context.Background(), election.LeaderKey(key), "someone-else", ttl)
	waitFor(t, 2*ttl+slack, "demotion", func() bool { return len(got.get()) >= 2 })
	waitFor(t, 2*ttl+slack, "leads again", func() bool { return len(got.get()) >= 3 })
	if err := c.e.Stop(); err != nil {
		t.Fatal(err)
	}
	want := []string{"promoted", "demoted/lost", "promoted", "demoted/stop"}
	if k := got.kinds(); !equalStrings(k, want) {
		t.Fatalf("transitions %v, want %v", k, want)
	}
	for i, tr := range got.get() {
		if tr.ID != c.e.ID() {
			t.Errorf("transition %d: ID %q, want %q", i, tr.ID, c.e.ID())
		}
		if wantTerm := uint64(i/2 + 1); tr.Term != wantTerm {
			t.Errorf("transition %d (%s): term %d, want %d", i, tr.Kind, tr.Term, wantTerm)
		}
		if tr.Key != key || tr.TTL != ttl || tr.Wait != 50*time.Millisecond || tr.Safe {
			t.Errorf("transition %d: options %q %v %v %v, want the elector's", i, tr.Key, tr.TTL, tr.Wait, tr.Safe)
		}
		if tr.At.IsZero() {
			t.Errorf("transition %d has no time", i)
		}
	}
}

// TestTransitionGuardReason: a safe-mode leader whose Redis stops answering
// demotes by its guard, and the hook says so, with the error.
func TestTransitionGuardReason(t *testing.T) {
	srv := redistest.Start(t)
	key := t.Name()
	var got transitions
	c := newCandidate(t, srv.Addr, key, election.Opts{TTL: ttl, Wait: wait, Safe: true, OnTransition: got.add})
	c.e.Start()
	waitFor(t, time.Second, "leads", c.e.IsLeader)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ttl+slack, "guard demotion", func() bool { return !c.e.IsLeader() })
	// IsLeader turns false at the guard deadline by itself; the loop
	// reports the demotion when its guard timer fires, just after.
	waitFor(t, slack, "the guard demotion reported", func() bool { return len(got.kinds()) >= 3 })
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	k := got.kinds()
	if len(k) < 3 || !equalStrings(k[:3], []string{"promoted", "error", "demoted/guard"}) {
		t.Fatalf("transitions %v, want promoted, error, demoted/guard first", k)
	}
	d := got.get()[2]
	if !errors.Is(d.Err, election.ErrLeaseExpired) || d.Token == 0 {
		t.Fatalf("guard demotion: err %v token %d; want ErrLeaseExpired and the term's token", d.Err, d.Token)
	}
}
