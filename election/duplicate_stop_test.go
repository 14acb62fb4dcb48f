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

func (s *slowScripter) setScripter(c redis.Scripter) { s.Scripter = c }

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

// stopTwin starts a safe elector a with a fixed ID and waits for it to
// lead, then starts a twin b with the same ID whose lease calls go through
// s (which sends on held as it holds a call), and stops b while that call is
// held. It returns a and a client to Redis.
func stopTwin(t *testing.T, s interface {
	redis.Scripter
	setScripter(redis.Scripter)
}, held <-chan struct{}) (*candidate, *redis.Client) {
	t.Helper()
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	o := election.Opts{ID: "shared-id", TTL: 2 * time.Second, Wait: 50 * time.Millisecond, Safe: true}
	a := newCandidate(t, addr, t.Name(), o)
	a.e.Start()
	waitFor(t, 2*time.Second, "a leads", a.e.IsLeader)
	s.setScripter(redistest.ClientAt(t, addr))
	o.Redis = s
	b := newCandidate(t, addr, t.Name(), o)
	b.e.Start()
	<-held
	if err := b.e.Stop(); err != nil {
		t.Logf("b.Stop: %v", err)
	}
	return a, admin
}

// A duplicate-ID elector (refused by DUPID) that is stopped while its acquire
// is in flight releases the lease the other process legitimately holds.
func TestDuplicateStoppedKeepsTwinsLease(t *testing.T) {
	s := &slowScripter{held: make(chan struct{}, 1)}
	a, admin := stopTwin(t, s, s.held)
	n := admin.Exists(context.Background(), a.e.Key()).Val()
	t.Logf("after b.Stop: lease exists=%d, a.IsLeader=%v", n, a.e.IsLeader())
	if n == 0 && a.e.IsLeader() {
		t.Fatalf("b (refused duplicate, never leader) deleted a's lease at Stop; a still believes it leads")
	}
}

// abandonedAcquire holds every acquire until its caller gives up (its ctx is
// cancelled), then sends it all the same and answers the caller with the
// cancellation: an acquire in flight whose outcome the caller never learns.
type abandonedAcquire struct {
	redis.Scripter
	held chan struct{}
}

func (s *abandonedAcquire) setScripter(c redis.Scripter) { s.Scripter = c }

func (s *abandonedAcquire) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	if election.ScriptOp(sha) != election.OpAcquire {
		return s.Scripter.EvalSha(ctx, sha, keys, args...)
	}
	select {
	case s.held <- struct{}{}:
	default:
	}
	<-ctx.Done()
	_ = s.Scripter.EvalSha(context.WithoutCancel(ctx), sha, keys, args...).Err() // it reaches Redis
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(ctx.Err())
	return cmd
}

// A duplicate-ID elector stopped while its acquire is in flight does not
// learn that Redis refused it (DUPID): the lease may be its own, so it
// releases — and the safe release checks the owner nonce as well as the ID,
// so it leaves the twin's lease alone. Before, the safe mode released with
// the spec's script (ID only) and deleted the lease the twin legitimately
// held, while the twin still believed it led.
func TestDuplicateStoppedMidAcquireKeepsTwinsLease(t *testing.T) {
	s := &abandonedAcquire{held: make(chan struct{}, 1)}
	a, admin := stopTwin(t, s, s.held)
	if id, err := admin.Get(context.Background(), a.e.Key()).Result(); err != nil || id != "shared-id" {
		t.Fatalf("after b's Stop the lease holds %q (%v); want a's lease kept (a believes it leads: %v)", id, err, a.e.IsLeader())
	}
}
