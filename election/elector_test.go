package election_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Both go-redis clients can run the lease.
var (
	_ redis.Scripter = (*redis.Client)(nil)
	_ redis.Scripter = (*redis.ClusterClient)(nil)
)

// Short timings keep the integration tests fast; the machine tests cover the
// spec's defaults.
const (
	ttl  = 300 * time.Millisecond
	wait = 400 * time.Millisecond
	// slack absorbs scheduling and loopback round trips on a loaded 2-core CI machine.
	slack = 250 * time.Millisecond
	// eventWait is how long a test waits for an event that has no bound to
	// meet (a first promotion, the demote signal after Stop): a guard
	// against a hang, not a measurement. One second was too short for the
	// demote signal under -race with cmd/chaos and sim/real beside (CI).
	eventWait = 10 * time.Second
)

// waitFor polls cond every 5ms until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// candidate is one elector with its own client and a reader of its signals.
type candidate struct {
	e        *election.Elector
	rdb      *redis.Client
	promotes atomic.Int64
	demotes  atomic.Int64
	order    chan string // "promote"/"demote" in the order received
	errs     <-chan error
	stopRead chan struct{}
	readDone chan struct{}
}

func newCandidate(t *testing.T, addr, key string, o election.Opts) *candidate {
	t.Helper()
	c := &candidate{
		rdb:      redis.NewClient(&redis.Options{Addr: addr}),
		order:    make(chan string, 1024),
		stopRead: make(chan struct{}),
		readDone: make(chan struct{}),
	}
	if o.Redis == nil {
		o.Redis = c.rdb
	}
	o.Key = key
	if o.TTL == 0 {
		o.TTL, o.Wait, o.JitterMS = ttl, wait, 5
	}
	var promote, demote <-chan time.Time
	c.e, promote, demote, c.errs = election.NewElector(o)
	go func() {
		defer close(c.readDone)
		for {
			select {
			case <-promote:
				c.promotes.Add(1)
				c.order <- "promote"
			case <-demote:
				c.demotes.Add(1)
				c.order <- "demote"
			case <-c.stopRead:
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = c.e.Stop()
		close(c.stopRead)
		<-c.readDone
		_ = c.rdb.Close()
	})
	return c
}

func leaders(cs []*candidate) []*candidate {
	var l []*candidate
	for _, c := range cs {
		if c.e.IsLeader() {
			l = append(l, c)
		}
	}
	return l
}

func holder(t *testing.T, rdb *redis.Client, key string) string {
	t.Helper()
	v, err := rdb.Get(context.Background(), key).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return v
}

func TestLeaderKey(t *testing.T) {
	// base32(sha1("my-app-coordinator")), computed independently with
	// `printf my-app-coordinator | openssl sha1 -binary | base32`.
	const want = "taskrunner:leader:ECOIULZN7TPW3JFMC3LZ42VJAEOWE6U4"
	if got := election.LeaderKey("my-app-coordinator"); got != want {
		t.Fatalf("LeaderKey = %q, want %q", got, want)
	}
}

func TestOneLeaderAmongMany(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	key := t.Name()
	var cs []*candidate
	for range 5 {
		cs = append(cs, newCandidate(t, addr, key, election.Opts{}))
	}
	for _, c := range cs {
		c.e.Start()
	}
	waitFor(t, 2*time.Second, "a leader", func() bool { return len(leaders(cs)) == 1 })
	leader := leaders(cs)[0]
	if got := holder(t, admin, election.LeaderKey(key)); got != leader.e.ID() {
		t.Fatalf("Redis holds %q, the leader is %q", got, leader.e.ID())
	}
	// Watch several renewal cycles: the leadership must not move or double.
	end := time.Now().Add(3 * ttl)
	for time.Now().Before(end) {
		if l := leaders(cs); len(l) != 1 || l[0] != leader {
			t.Fatalf("leaders changed to %d during steady state", len(l))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := leader.promotes.Load(); n != 1 {
		t.Fatalf("leader promoted %d times, want 1", n)
	}
	for _, c := range cs {
		if c != leader && c.promotes.Load() != 0 {
			t.Fatalf("follower %s was promoted", c.e.ID())
		}
	}
}

func TestFailoverAfterLeaderClientClosed(t *testing.T) {
	addr := redistest.Addr(t)
	key := t.Name()
	cs := []*candidate{newCandidate(t, addr, key, election.Opts{}), newCandidate(t, addr, key, election.Opts{}), newCandidate(t, addr, key, election.Opts{})}
	for _, c := range cs {
		c.e.Start()
	}
	waitFor(t, 2*time.Second, "a leader", func() bool { return len(leaders(cs)) == 1 })
	old := leaders(cs)[0]
	_ = old.rdb.Close() // its next renew fails: it can no longer reach Redis
	bound := ttl + wait + 5*time.Millisecond + slack
	took := waitFor(t, bound, "a new leader", func() bool {
		l := leaders(cs)
		return len(l) == 1 && l[0] != old
	})
	t.Logf("failover after the leader's client closed: %v (bound TTL+Wait+jitter+slack = %v)", took, bound)
	if old.e.IsLeader() {
		t.Fatal("the cut-off leader still believes it leads")
	}
	if got := <-old.errs; got == nil {
		t.Fatal("no renew error reported by the cut-off leader")
	}
}

func TestGracefulStopReleasesAtOnce(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	key := t.Name()
	a := newCandidate(t, addr, key, election.Opts{})
	b := newCandidate(t, addr, key, election.Opts{})
	a.e.Start()
	waitFor(t, eventWait, "a leads", a.e.IsLeader)
	b.e.Start()
	if err := a.e.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if a.e.IsLeader() {
		t.Fatal("IsLeader true after Stop")
	}
	if h := holder(t, admin, election.LeaderKey(key)); h == a.e.ID() {
		t.Fatal("the lease still holds the stopped elector's ID after Stop returned")
	}
	waitFor(t, eventWait, "the demote signal", func() bool { return a.demotes.Load() == 1 })
	took := waitFor(t, wait+slack, "b takes over on its next tick", b.e.IsLeader)
	t.Logf("takeover after graceful stop: %v (bound Wait+slack = %v)", took, wait+slack)
	if err := a.e.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if err := a.e.Start(); !errors.Is(err, election.ErrStopped) {
		t.Fatalf("Start after Stop = %v; want ErrStopped", err)
	}
	time.Sleep(wait)
	if a.e.IsLeader() || holder(t, admin, election.LeaderKey(key)) != b.e.ID() {
		t.Fatal("a restarted after Stop")
	}
}

func TestRenewZeroDemotes(t *testing.T) {
	for _, tamper := range []string{"deleted", "overwritten"} {
		t.Run(tamper, func(t *testing.T) {
			addr := redistest.Addr(t)
			admin := redistest.ClientAt(t, addr)
			key := t.Name()
			c := newCandidate(t, addr, key, election.Opts{Wait: 10 * time.Second, TTL: ttl})
			c.e.Start()
			waitFor(t, eventWait, "leads", c.e.IsLeader)
			lk := election.LeaderKey(key)
			if tamper == "deleted" {
				admin.Del(context.Background(), lk)
			} else {
				admin.Set(context.Background(), lk, "someone-else", time.Minute)
			}
			took := waitFor(t, ttl/2+slack, "demotion", func() bool { return !c.e.IsLeader() })
			waitFor(t, eventWait, "demote signal", func() bool { return c.demotes.Load() == 1 })
			t.Logf("demoted %v after the key was %s", took, tamper)
			select {
			case err := <-c.errs:
				t.Fatalf("renew returning 0 reported an error: %v", err)
			default:
			}
			if tamper == "overwritten" && holder(t, admin, lk) != "someone-else" {
				t.Fatal("the elector touched a lease that is not its own")
			}
		})
	}
}

func TestSurvivesScriptFlush(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	// A TTL of 2 s: a renewal every second, so that only the flush, not a
	// loaded machine's late timer (CI's -race run beside the harness's
	// tests lost the 300 ms TTL's key once), can lose the lease.
	const flushTTL = 2 * time.Second
	c := newCandidate(t, addr, t.Name(), election.Opts{TTL: flushTTL, Wait: flushTTL + flushTTL/4, JitterMS: 5})
	c.e.Start()
	waitFor(t, eventWait, "leads", c.e.IsLeader)
	ctx := context.Background()
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// The lease would expire within TTL without renewals; every renewal
	// after the flush first meets NOSCRIPT and falls back to EVAL. Two
	// renewals at least: the one that meets the flush, and one after it.
	lk := election.LeaderKey(t.Name())
	end := time.Now().Add(flushTTL + flushTTL/4)
	for time.Now().Before(end) {
		if h := holder(t, admin, lk); h != c.e.ID() {
			t.Fatalf("lease holder %q after SCRIPT FLUSH, want %q", h, c.e.ID())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if stats := admin.Info(ctx, "commandstats").Val(); !strings.Contains(stats, "cmdstat_eval:calls=") {
		t.Fatal("no EVAL fallback seen in INFO commandstats after SCRIPT FLUSH")
	}
	if !c.e.IsLeader() || c.demotes.Load() != 0 {
		t.Fatal("SCRIPT FLUSH cost the leadership")
	}
	select {
	case err := <-c.errs:
		t.Fatalf("error after SCRIPT FLUSH: %v", err)
	default:
	}
}

func TestIDsAreUnique(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	const n = 1000
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e, _, _, _ := election.NewElector(election.Opts{Redis: rdb, Key: "k", TTL: ttl, Wait: wait})
			ids[i] = e.ID()
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		if len(id) != 32 {
			t.Fatalf("ID %q is not 128 bits of hex", id)
		}
		if seen[id] {
			t.Fatalf("two electors built together share ID %q", id)
		}
		seen[id] = true
	}
}

// flaky fails every third script call, so an elector keeps producing errors
// while it also keeps winning and renewing.
type flaky struct {
	redis.Scripter
	calls atomic.Int64
}

var errInjected = errors.New("injected")

func (f *flaky) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	if f.calls.Add(1)%3 == 0 {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(errInjected)
		return cmd
	}
	return f.Scripter.EvalSha(ctx, sha, keys, args...)
}

func TestUnreadErrorsDoNotStallRenewals(t *testing.T) {
	rdb := redistest.Client(t)
	f := &flaky{Scripter: rdb}
	e, promote, demote, _ := election.NewElector(election.Opts{Redis: f, Key: t.Name(), TTL: 20 * time.Millisecond, Wait: 5 * time.Millisecond})
	var promotes atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // reads leadership signals, never errors
		defer close(done)
		for {
			select {
			case <-promote:
				promotes.Add(1)
			case <-demote:
			case <-stop:
				return
			}
		}
	}()
	e.Start()
	waitFor(t, 10*time.Second, "errors beyond the buffer, and the elector still cycling", func() bool {
		return e.DroppedErrors() > 2*election.ErrorBuffer && promotes.Load() > 2*election.ErrorBuffer
	})
	if err := e.Stop(); err != nil {
		t.Logf("Stop: %v", err) // a release may meet an injected error; that is fine here
	}
	close(stop)
	<-done
	t.Logf("dropped %d errors, %d promotions, %d script calls", e.DroppedErrors(), promotes.Load(), f.calls.Load())
}

func TestPromoteNeverAfterItsDemote(t *testing.T) {
	rdb := redistest.Client(t)
	f := &flaky{Scripter: rdb}
	// A reader that selects on both channels, as the spec's StartElection does,
	// and is slow, so signals queue up in the dispatcher.
	e, promote, demote, _ := election.NewElector(election.Opts{Redis: f, Key: t.Name(), TTL: 10 * time.Millisecond, Wait: time.Millisecond})
	e.Start()
	var leading bool
	n := 0
	for n < 200 {
		select {
		case <-promote:
			if leading {
				t.Fatalf("signal %d: promote while leading", n)
			}
			leading = true
		case <-demote:
			if !leading {
				t.Fatalf("signal %d: demote before its promote", n)
			}
			leading = false
		}
		n++
		if n%10 == 0 {
			time.Sleep(2 * time.Millisecond) // slow consumer
		}
	}
	_ = e.Stop()
}

func TestStopBoundedWhenRedisHangs(t *testing.T) {
	for _, ctxTimeouts := range []bool{true, false} {
		name := "ContextTimeoutEnabled"
		if !ctxTimeouts {
			name = "default client"
		}
		t.Run(name, func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: ctxTimeouts, ReadTimeout: time.Second})
			defer rdb.Close()
			e, _, _, _ := election.NewElector(election.Opts{Redis: rdb, Key: t.Name(), TTL: ttl, Wait: wait})
			e.Start()
			waitFor(t, eventWait, "leads", e.IsLeader)
			if err := srv.Pause(); err != nil {
				t.Fatal(err)
			}
			defer srv.Resume()
			start := time.Now()
			err := e.Stop()
			took := time.Since(start)
			t.Logf("Stop with Redis hung took %v (bound StopTimeout = TTL = %v): %v", took, ttl, err)
			if took > ttl+slack {
				t.Fatalf("Stop took %v, documented bound %v", took, ttl)
			}
			if err == nil {
				t.Fatal("Stop reported success although the release never reached Redis")
			}
			if e.IsLeader() {
				t.Fatal("still leader after Stop")
			}
			if !ctxTimeouts {
				// The release call lingers until the client's ReadTimeout;
				// let it end before goleak looks.
				_ = srv.Resume()
				waitFor(t, 2*time.Second, "the abandoned call to end", func() bool {
					return goleak.Find(goleak.IgnoreCurrent()) == nil
				})
			}
		})
	}
}

func TestStopBeforeStartAndConcurrentStops(t *testing.T) {
	rdb := redistest.Client(t)
	e, _, _, _ := election.NewElector(election.Opts{Redis: rdb, Key: t.Name(), TTL: ttl, Wait: wait})
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop before Start: %v", err)
	}
	if err := e.Start(); !errors.Is(err, election.ErrStopped) {
		t.Fatalf("Start after Stop = %v; want ErrStopped", err)
	}
	if e.IsLeader() {
		t.Fatal("started after Stop")
	}

	e2, _, _, _ := election.NewElector(election.Opts{Redis: rdb, Key: t.Name(), TTL: ttl, Wait: wait})
	if err := e2.Start(); err != nil {
		t.Fatalf("Start = %v", err)
	}
	if err := e2.Start(); !errors.Is(err, election.ErrStarted) {
		t.Fatalf("second Start = %v; want ErrStarted", err)
	}
	waitFor(t, eventWait, "leads", e2.IsLeader)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = e2.Stop() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Stop %d: %v", i, err)
		}
	}
	if rdb.Exists(context.Background(), e2.Key()).Val() != 0 {
		t.Fatal("lease not released")
	}
}

// Sub-millisecond TTLs are fine where PX's truncation stays inside the
// guard's margin (and in spec mode, which has no guard).
func TestValidateFractionalTTL(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for name, o := range map[string]election.Opts{
		"spec":           {Redis: rdb, Key: "k", TTL: 100*time.Millisecond + 900*time.Microsecond, Wait: wait},
		"default margin": {Redis: rdb, Key: "k", TTL: 100*time.Millisecond + 900*time.Microsecond, Wait: wait, Safe: true},
		"margin above the fraction": {Redis: rdb, Key: "k", TTL: 100*time.Millisecond + 900*time.Microsecond, Wait: wait,
			Safe: true, SafeMargin: time.Millisecond},
	} {
		if err := o.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestInvalidOptionsPanic(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for name, o := range map[string]election.Opts{
		"nil Redis":       {Key: "k", TTL: ttl, Wait: wait},
		"zero TTL":        {Redis: rdb, Key: "k", Wait: wait},
		"negative Wait":   {Redis: rdb, Key: "k", TTL: ttl, Wait: -1},
		"negative jitter": {Redis: rdb, Key: "k", TTL: ttl, Wait: wait, JitterMS: -1},
		"empty Key":       {Redis: rdb, TTL: ttl, Wait: wait},
		// PX cuts the key to 100 ms; the guard would end at 100.8 ms.
		"TTL cut by PX below the guard": {Redis: rdb, Key: "k", TTL: 100*time.Millisecond + 900*time.Microsecond,
			Wait: wait, Safe: true, SafeMargin: 100 * time.Microsecond},
	} {
		t.Run(name, func(t *testing.T) {
			if o.Validate() == nil {
				t.Fatal("Validate accepted it")
			}
			defer func() {
				if recover() == nil {
					t.Fatal("NewElector did not panic")
				}
			}()
			election.NewElector(o)
		})
	}
}

// BenchmarkAcquireRenewRoundTrip measures one acquire + renew on loopback
// Redis (plus the release that makes the next acquire win).
func BenchmarkAcquireRenewRoundTrip(b *testing.B) {
	rdb := redistest.Client(b)
	ctx := context.Background()
	key, id := election.LeaderKey("bench"), "bench-id"
	for b.Loop() {
		for _, op := range []election.Op{election.OpAcquire, election.OpRenew, election.OpRelease} {
			if ok, err := election.RunOp(ctx, rdb, op, key, id, time.Second); err != nil || !ok {
				b.Fatalf("%v: %v %v", op, ok, err)
			}
		}
	}
}
