package election_test

import (
	"context"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// slowScripter holds every script call 300 ms before sending it, and says when one is held.
type slowScripter struct {
	redis.Scripter
	held chan struct{}
}

func (s *slowScripter) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	select {
	case s.held <- struct{}{}:
	default:
	}
	time.Sleep(300 * time.Millisecond)
	return s.Scripter.EvalSha(context.WithoutCancel(ctx), sha, keys, args...)
}

func (s *slowScripter) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return s.Scripter.Eval(context.WithoutCancel(ctx), script, keys, args...)
}

// A duplicate-ID elector (refused by DUPID) that is stopped while its acquire
// is in flight releases the lease the other process legitimately holds.
func TestDuplicateStoppedKeepsTwinsLease(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	key := t.Name()
	o := election.Opts{ID: "shared-id", TTL: 2 * time.Second, Wait: 50 * time.Millisecond, Safe: true}
	a := newCandidate(t, addr, key, o)
	a.e.Start()
	waitFor(t, 2*time.Second, "a leads", a.e.IsLeader)
	s := &slowScripter{Scripter: redistest.ClientAt(t, addr), held: make(chan struct{}, 1)}
	o.Redis = s
	b := newCandidate(t, addr, key, o)
	b.e.Start()
	<-s.held // b's acquire is about to be sent
	if err := b.e.Stop(); err != nil {
		t.Logf("b.Stop: %v", err)
	}
	n := admin.Exists(context.Background(), a.e.Key()).Val()
	t.Logf("after b.Stop: lease exists=%d, a.IsLeader=%v", n, a.e.IsLeader())
	if n == 0 && a.e.IsLeader() {
		t.Fatalf("b (refused duplicate, never leader) deleted a's lease at Stop; a still believes it leads")
	}
}
