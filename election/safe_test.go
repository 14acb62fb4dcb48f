package election_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
)

// blackhole passes script calls through until held, then holds every call
// until released, ignoring the call's context — like a silent network with a
// client that does not honour context deadlines (no ContextTimeoutEnabled).
type blackhole struct {
	redis.Scripter
	mu   sync.Mutex
	gate chan struct{} // nil: pass; else closed on release
	held atomic.Int64
}

func (b *blackhole) hold() {
	b.mu.Lock()
	b.gate = make(chan struct{})
	b.mu.Unlock()
}

func (b *blackhole) release() {
	b.mu.Lock()
	if b.gate != nil {
		close(b.gate)
		b.gate = nil
	}
	b.mu.Unlock()
}

func (b *blackhole) wait() {
	b.mu.Lock()
	g := b.gate
	b.mu.Unlock()
	if g != nil {
		b.held.Add(1)
		<-g
	}
}

func (b *blackhole) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	b.wait()
	return b.Scripter.EvalSha(ctx, sha, keys, args...)
}

func (b *blackhole) Eval(ctx context.Context, src string, keys []string, args ...any) *redis.Cmd {
	b.wait()
	return b.Scripter.Eval(ctx, src, keys, args...)
}

// A leader whose renewals are blackholed: in safe mode it demotes itself
// before its key expires in Redis (the lease guard, without the client's
// help); in spec mode it still believes it leads after the key is gone.
func TestSafeGuardDemotesBeforeTheLeaseExpires(t *testing.T) {
	for _, safe := range []bool{true, false} {
		name := map[bool]string{true: "safe", false: "spec"}[safe]
		t.Run(name, func(t *testing.T) {
			addr := redistest.Addr(t)
			admin := redistest.ClientAt(t, addr)
			bh := &blackhole{Scripter: redistest.ClientAt(t, addr)}
			key := t.Name()
			c := newCandidate(t, addr, key, election.Opts{Redis: bh, TTL: ttl, Wait: time.Hour, JitterMS: 5, Safe: safe})
			t.Cleanup(bh.release) // runs before the candidate's Stop
			c.e.Start()
			waitFor(t, eventWait, "leads", c.e.IsLeader)
			// After one renewal, blackhole the next.
			l0 := c.e.Leadership()
			if safe && (l0.Token <= 0 || !l0.Safe || l0.GuardDeadline.IsZero()) {
				t.Fatalf("safe leader's Leadership %+v: want a token, Safe, a guard deadline", l0)
			}
			if !safe && (l0.Token != 0 || l0.Safe || !l0.GuardDeadline.IsZero()) {
				t.Fatalf("spec leader's Leadership %+v: want no token, no guard", l0)
			}
			waitFor(t, eventWait, "one renewal", func() bool {
				pttl := admin.PTTL(context.Background(), c.e.Key()).Val()
				return pttl > ttl-20*time.Millisecond // just renewed
			})
			bh.hold()
			held := time.Now()
			lk := c.e.Key()
			var demotedAt, goneAt time.Time
			waitFor(t, 3*ttl, "the key to expire", func() bool {
				now := time.Now()
				if demotedAt.IsZero() && !c.e.IsLeader() {
					demotedAt = now
				}
				if holder(t, admin, lk) != c.e.ID() {
					goneAt = now
					return true
				}
				return false
			})
			if !safe {
				if demotedAt.IsZero() {
					t.Logf("spec mode: still leader %v after the blackhole began, its key expired (stale leadership: the hazard safe mode closes)", time.Since(held))
					return
				}
				t.Fatalf("spec mode demoted without a reply: %v", demotedAt.Sub(held))
			}
			if demotedAt.IsZero() {
				t.Fatalf("safe mode: still leader when the key expired (%v after the blackhole)", goneAt.Sub(held))
			}
			margin := election.DefaultMargin(ttl)
			t.Logf("safe mode: demoted %v after the blackhole began, %v before the key expired (TTL %v, margin %v)",
				demotedAt.Sub(held), goneAt.Sub(demotedAt), ttl, margin)
			if d := demotedAt.Sub(held); d > ttl-margin+slack/5 {
				t.Errorf("demoted %v after the blackhole; want within TTL − margin = %v", d, ttl-margin)
			}
			if bh.held.Load() == 0 {
				t.Fatal("no call was held: the test did not blackhole a renewal")
			}
			select {
			case err := <-c.errs:
				if !errors.Is(err, election.ErrLeaseExpired) {
					t.Errorf("error %v; want ErrLeaseExpired", err)
				}
			case <-time.After(time.Second):
				t.Error("no ErrLeaseExpired reported")
			}
			if l := c.e.Leadership(); l.Leader || !l.GuardDeadline.IsZero() {
				t.Errorf("after the guard: %+v", l)
			}
		})
	}
}

// Safe acquire takes a key that already holds our own ID: no phantom lease
// after an acquire whose reply was lost.
func TestSafeAcquireTakesItsOwnKey(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	key := t.Name()
	const id = "me-0123456789"
	if err := admin.Set(context.Background(), election.LeaderKey(key), id, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	c := newCandidate(t, addr, key, election.Opts{ID: id, TTL: ttl, Wait: time.Hour, Safe: true})
	c.e.Start()
	waitFor(t, eventWait, "promotion on its own phantom lease", c.e.IsLeader)
	if pttl := admin.PTTL(context.Background(), election.LeaderKey(key)).Val(); pttl > ttl {
		t.Fatalf("the lease's TTL is %v; want it reset to %v", pttl, ttl)
	}
}

// Fencing tokens grow with every promotion, across holders, and still grow
// after the counter is lost (deleted, flushed, Redis restarted without
// persistence).
func TestSafeTokensGrow(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redistest.ClientAt(t, srv.Addr)
	ctx := context.Background()
	lk, tk := election.LeaderKey("tok"), election.TokenKey("tok")
	var last int64
	acquire := func(id, what string) {
		t.Helper()
		ok, tok, err := election.RunSafeOp(ctx, rdb, election.OpAcquire, election.SafeLease{Key: lk, ID: id, TTL: time.Minute})
		if err != nil || !ok || tok <= last {
			t.Fatalf("%s: acquire by %s = %v, %d, %v; want a token above %d", what, id, ok, tok, err, last)
		}
		// A lost acquire reads the counter: the token just issued.
		if ok, tok2, err := election.RunSafeOp(ctx, rdb, election.OpAcquire, election.SafeLease{Key: lk, ID: "other-" + id, TTL: time.Minute}); ok || tok2 != tok || err != nil {
			t.Fatalf("%s: another instance's acquire of a held lease = %v %d %v; want false, the counter %d", what, ok, tok2, err, tok)
		}
		if ok, _, err := election.RunSafeOp(ctx, rdb, election.OpRenew, election.SafeLease{Key: lk, ID: id, TTL: time.Minute}); !ok || err != nil {
			t.Fatalf("%s: renew = %v, %v", what, ok, err)
		}
		if ok, _, err := election.RunSafeOp(ctx, rdb, election.OpRelease, election.SafeLease{Key: lk, ID: id}); !ok || err != nil {
			t.Fatalf("%s: release = %v, %v", what, ok, err)
		}
		t.Logf("%s: token %d", what, tok)
		last = tok
	}
	acquire("a", "first")
	acquire("b", "next holder")
	acquire("a", "back to the first")
	acquire("a", "again")
	rdb.Del(ctx, tk)
	acquire("a", "counter deleted")
	rdb.FlushAll(ctx)
	acquire("b", "FLUSHALL")
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	acquire("a", "Redis restarted without persistence")
}

// Tokens stay monotonic when the counter is lost and the Redis clock is
// behind the last token (a replica whose clock lags, a clock stepped back):
// the winner's token is above every token it has seen, its own earlier terms
// and the counter its failed attempts read. Before the fix the new token was
// the Redis time alone, below the last one.
func TestSafeTokensMonotonicAfterCounterLoss(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	ctx := context.Background()
	key := t.Name()
	// The last token was issued by a Redis whose clock was 11.6 days ahead.
	now, err := admin.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	ahead := now.UnixMicro() + 1e12
	if err := admin.Set(ctx, election.TokenKey(key), ahead, 0).Err(); err != nil {
		t.Fatal(err)
	}
	o := election.Opts{TTL: ttl, Wait: 50 * time.Millisecond, Safe: true}
	a := newCandidate(t, addr, key, o)
	a.e.Start()
	waitFor(t, 2*time.Second, "a leads", a.e.IsLeader)
	t1 := a.e.Leadership().Token
	if t1 != ahead+1 {
		t.Fatalf("first token %d; want the counter + 1 = %d", t1, ahead+1)
	}
	calls := &countCalls{Scripter: redistest.ClientAt(t, addr)}
	o.Redis = calls
	b := newCandidate(t, addr, key, o)
	b.e.Start()
	waitFor(t, eventWait, "b tries and fails", func() bool { return calls.n.Load() >= 2 })
	// The counter is lost while nobody leads; b, which read it, wins next.
	if err := a.e.Stop(); err != nil {
		t.Fatal(err)
	}
	admin.Del(ctx, election.TokenKey(key))
	waitFor(t, 2*time.Second, "b leads", b.e.IsLeader)
	if t2 := b.e.Leadership().Token; t2 <= t1 {
		t.Fatalf("follower's token after the counter was lost: %d; want above the last one, %d", t2, t1)
	}
	// Everything is lost under b (FLUSHALL): it demotes, and wins again
	// above its own last token.
	t2, term := b.e.Leadership().Token, b.e.Leadership().Term
	admin.FlushAll(ctx)
	waitFor(t, 2*time.Second, "b leads a new term", func() bool { l := b.e.Leadership(); return l.Leader && l.Term > term })
	if t3 := b.e.Leadership().Token; t3 <= t2 {
		t.Fatalf("token after FLUSHALL: %d; want above b's own last one, %d", t3, t2)
	}
}

// countCalls counts script calls.
type countCalls struct {
	redis.Scripter
	n atomic.Int64
}

func (c *countCalls) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	c.n.Add(1)
	return c.Scripter.EvalSha(ctx, sha, keys, args...)
}

// Two processes that share Opts.ID (safe mode): the second cannot take the
// lease the first holds, and says why (ErrDuplicateID), instead of both
// leading. Before the fix the safe acquire took any lease holding its own ID,
// and the first one's renewals went on succeeding: two leaders indefinitely.
func TestSafeDuplicateIDRefused(t *testing.T) {
	addr := redistest.Addr(t)
	key := t.Name()
	o := election.Opts{ID: "shared-id", TTL: ttl, Wait: 50 * time.Millisecond, Safe: true}
	a := newCandidate(t, addr, key, o)
	a.e.Start()
	waitFor(t, 2*time.Second, "a leads", a.e.IsLeader)
	b := newCandidate(t, addr, key, o)
	b.e.Start()
	dups := 0
	deadline := time.After(3 * time.Second)
	for dups < 3 { // three acquires, over more than a renewal interval of a
		select {
		case err := <-b.errs:
			if !errors.Is(err, election.ErrDuplicateID) {
				t.Fatalf("b reported %v; want ErrDuplicateID", err)
			}
			dups++
		case <-deadline:
			t.Fatalf("b reported %d duplicate-ID errors in 3s; promotions %d", dups, b.promotes.Load())
		}
	}
	if n := b.promotes.Load(); n != 0 || b.e.IsLeader() {
		t.Fatalf("b promoted %d times while a holds the lease under the same ID", n)
	}
	if !a.e.IsLeader() || a.demotes.Load() != 0 {
		t.Fatalf("a lost the lease (demotes %d) to a process with its ID", a.demotes.Load())
	}
}

// The owner key lives exactly as long as the lease: a safe acquire gives it
// the lease's TTL, a renewal extends both, a release deletes both. Before,
// it had no TTL and outlived every lease (one stale key per group and fixed
// ID, forever).
func TestOwnerKeyFollowsTheLease(t *testing.T) {
	rdb := redistest.ClientAt(t, redistest.Addr(t))
	ctx := context.Background()
	name := t.Name()
	lease, owner := election.LeaderKey(name), election.OwnerKey(name)
	l := election.SafeLease{Key: lease, ID: "a", Nonce: "nonce-a", TTL: time.Minute}
	sameExpiry := func(when string, atLeast time.Duration) {
		t.Helper()
		// One MULTI reads both: two round trips apart, a loaded machine
		// put 5 ms between the readings (CI: owner 59.995 s, lease 60 s).
		var lp, op *redis.DurationCmd
		if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			lp, op = p.PTTL(ctx, lease), p.PTTL(ctx, owner)
			return nil
		}); err != nil {
			t.Fatalf("%s: reading the PTTLs: %v", when, err)
		}
		lt, ot := lp.Val(), op.Val()
		if ot < atLeast || ot > time.Minute || ot-lt > time.Millisecond || lt-ot > time.Millisecond {
			t.Fatalf("%s: owner key PTTL %v, lease PTTL %v; want the lease's (at least %v)", when, ot, lt, atLeast)
		}
	}
	if ok, _, err := election.RunSafeOp(ctx, rdb, election.OpAcquire, l); !ok || err != nil {
		t.Fatalf("acquire: %v, %v", ok, err)
	}
	sameExpiry("after the acquire", 59*time.Second)
	for _, k := range []string{lease, owner} { // time passes
		rdb.PExpire(ctx, k, 10*time.Second)
	}
	if ok, _, err := election.RunSafeOp(ctx, rdb, election.OpRenew, l); !ok || err != nil {
		t.Fatalf("renew: %v, %v", ok, err)
	}
	sameExpiry("after the renewal", 59*time.Second)
	if ok, _, err := election.RunSafeOp(ctx, rdb, election.OpRelease, l); !ok || err != nil {
		t.Fatalf("release: %v, %v", ok, err)
	}
	if n := rdb.Exists(ctx, lease, owner).Val(); n != 0 {
		t.Errorf("after the release %d of lease and owner key exist; want none", n)
	}
}

// A renewal never leaves the owner key expiring before the lease, and puts
// back a missing one (an owner key that expired a millisecond before its
// lease, or one a volatile-* maxmemory policy evicted): while the lease
// holds a's ID, a twin with that ID is refused (DUPID). Before, a renewal
// extended the owner key first (each command of a script reads the clock:
// it could expire first) and never recreated it, so the twin's acquire won
// and both led until a's next renewal.
func TestRenewalRestoresTheOwnerKey(t *testing.T) {
	rdb := redistest.ClientAt(t, redistest.Addr(t))
	ctx := context.Background()
	name := t.Name()
	lease, owner := election.LeaderKey(name), election.OwnerKey(name)
	a := election.SafeLease{Key: lease, ID: "same", Nonce: "nonce-a", TTL: time.Minute}
	twin := election.SafeLease{Key: lease, ID: "same", Nonce: "nonce-b", TTL: time.Minute}
	if ok, _, err := election.RunSafeOp(ctx, rdb, election.OpAcquire, a); !ok || err != nil {
		t.Fatalf("acquire: %v, %v", ok, err)
	}
	rdb.Del(ctx, owner) // evicted, or expired just before the lease
	if ok, _, err := election.RunSafeOp(ctx, rdb, election.OpRenew, a); !ok || err != nil {
		t.Fatalf("renew: %v, %v", ok, err)
	}
	if got := rdb.Get(ctx, owner).Val(); got != "nonce-a" {
		t.Fatalf("owner key after the renewal: %q, want a's nonce back", got)
	}
	le, oe := rdb.PExpireTime(ctx, lease).Val(), rdb.PExpireTime(ctx, owner).Val()
	if oe < le {
		t.Errorf("owner key expires at %v, before the lease at %v", oe, le)
	}
	if ok, _, err := election.RunSafeOp(ctx, rdb, election.OpAcquire, twin); ok || !errors.Is(err, election.ErrDuplicateID) {
		t.Errorf("twin's acquire: won %v, err %v; want refused with ErrDuplicateID", ok, err)
	}
}
