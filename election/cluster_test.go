package election_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/rediscluster"
)

// The elector against a real Redis Cluster (three primaries, three replicas:
// internal/rediscluster): one leader across the cluster, and what a failover
// of the lease key's primary does to the lease, clean and lossy, in spec and
// safe mode. Skipped (saying why) where redis-cli or cluster mode is missing,
// unless LEASELAB_REQUIRE_CLUSTER=1.

// Cluster timings: longer than the single-node tests' so that a failover
// (tens of ms) is short against the TTL, short enough to keep the tests fast.
const (
	cttl  = 600 * time.Millisecond
	cwait = 700 * time.Millisecond
)

// beliefs records every signal of a set of electors, with the decision's
// timestamp, to measure overlaps and gaps afterwards.
type beliefs struct {
	mu     sync.Mutex
	events []belief
	errs   []failure
}

// failure is an error an elector reported.
type failure struct {
	at  time.Time
	who int
	err error
}

type belief struct {
	at     time.Time
	who    int
	leader bool
	token  int64
}

// clusterElectors starts n electors on their own ClusterClients, recording
// their signals; they are stopped at cleanup (each Stop while its reader
// still reads, as the README says).
func clusterElectors(t *testing.T, c *rediscluster.Cluster, key string, n int, safe bool) ([]*election.Elector, *beliefs) {
	t.Helper()
	return clusterElectorsWith(t, c, key, n, safe, redis.ClusterOptions{ReadTimeout: time.Second})
}

// clusterElectorsWith is clusterElectors with each ClusterClient built from
// o (a copy each), and the electors' errors recorded too.
func clusterElectorsWith(t *testing.T, c *rediscluster.Cluster, key string, n int, safe bool, o redis.ClusterOptions) ([]*election.Elector, *beliefs) {
	t.Helper()
	b := &beliefs{}
	es := make([]*election.Elector, n)
	for i := range es {
		rdb := c.Client(&o)
		e, promote, demote, errs := election.NewElector(election.Opts{Redis: rdb, Key: key,
			TTL: cttl, Wait: cwait, JitterMS: 5, Safe: safe})
		es[i] = e
		go func() {
			for {
				select {
				case at := <-promote:
					b.add(belief{at: at, who: i, leader: true, token: e.Leadership().Token})
				case at := <-demote:
					b.add(belief{at: at, who: i})
				case err := <-errs:
					b.addErr(i, err)
				case <-e.Done():
					return
				}
			}
		}()
		e.Start()
		t.Cleanup(func() {
			if err := e.Stop(); err != nil {
				t.Logf("elector %d: Stop: %v", i, err)
			}
		})
	}
	return es, b
}

func (b *beliefs) add(e belief) {
	b.mu.Lock()
	b.events = append(b.events, e)
	b.mu.Unlock()
}

func (b *beliefs) addErr(who int, err error) {
	b.mu.Lock()
	b.errs = append(b.errs, failure{at: time.Now(), who: who, err: err})
	b.mu.Unlock()
}

// measure walks the signals from..to: the longest and total time with two
// or more instances believing they lead (overlap), the longest time with
// none (gap), the promotions in the window, and the tokens of every
// promotion in order.
func (b *beliefs) measure(from, to time.Time) (maxOverlap, totalOverlap, maxGap time.Duration, promotions int, tokens []int64) {
	b.mu.Lock()
	ev := append([]belief(nil), b.events...)
	b.mu.Unlock()
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].at.Before(ev[j].at) })
	leading := map[int]bool{}
	var overlapSince, gapSince time.Time
	step := func(at time.Time) {
		n := 0
		for _, l := range leading {
			if l {
				n++
			}
		}
		if at.Before(from) {
			at = from
		}
		if n >= 2 && overlapSince.IsZero() {
			overlapSince = at
		}
		if n < 2 && !overlapSince.IsZero() {
			d := at.Sub(overlapSince)
			totalOverlap += d
			maxOverlap = max(maxOverlap, d)
			overlapSince = time.Time{}
		}
		if n == 0 && gapSince.IsZero() {
			gapSince = at
		}
		if n > 0 && !gapSince.IsZero() {
			maxGap = max(maxGap, at.Sub(gapSince))
			gapSince = time.Time{}
		}
	}
	for _, e := range ev {
		if e.at.After(to) {
			break
		}
		if e.leader {
			tokens = append(tokens, e.token)
			if !e.at.Before(from) {
				promotions++
			}
		}
		leading[e.who] = e.leader
		step(e.at)
	}
	leading = nil
	step(to)
	return
}

func leadersOf(es []*election.Elector) []int {
	var ls []int
	for i, e := range es {
		if e.IsLeader() {
			ls = append(ls, i)
		}
	}
	return ls
}

// pollUntil polls cond every 5ms until it holds, failing t after d.
func pollUntil(t *testing.T, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, d, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func oneLeader(es []*election.Elector) error {
	if ls := leadersOf(es); len(ls) != 1 {
		return fmt.Errorf("leaders %v", ls)
	}
	return nil
}

// replicaOfKey returns the primary serving key and its replica.
func replicaOfKey(t *testing.T, c *rediscluster.Cluster, key string) (*rediscluster.Node, *rediscluster.Node) {
	t.Helper()
	ctx := context.Background()
	p, err := c.PrimaryOf(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.ReplicasOf(ctx, p)
	if err != nil || len(rs) == 0 {
		t.Fatalf("replicas of %s: %v, %v", p.Addr, rs, err)
	}
	return p, rs[0]
}

func TestClusterOneLeaderAndCleanFailover(t *testing.T) {
	for _, safe := range []bool{false, true} {
		t.Run(map[bool]string{false: "spec", true: "safe"}[safe], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := rediscluster.New(t, rediscluster.Options{})
			key := "cluster-clean-" + t.Name()
			es, b := clusterElectors(t, c, key, 3, safe)
			pollUntil(t, 5*time.Second, "one leader", func() error { return oneLeader(es) })
			leader := leadersOf(es)[0]
			lease := election.LeaderKey(key)
			_, replica := replicaOfKey(t, c, lease)
			// Run a few renewals first, then fail the lease's primary over
			// cleanly (the replica waits until it has every write).
			observe := c.Client(nil)
			pollUntil(t, 5*time.Second, "lease renewed", func() error {
				if pttl, err := observe.PTTL(ctx, lease).Result(); err != nil || pttl <= 0 {
					return fmt.Errorf("PTTL %v, %v", pttl, err)
				}
				return nil
			})
			t0 := time.Now()
			if err := c.Failover(ctx, replica, rediscluster.Coordinated); err != nil {
				t.Fatal(err)
			}
			promoted := time.Since(t0)
			if err := c.WaitHealthy(ctx); err != nil {
				t.Fatal(err)
			}
			agreed := time.Since(t0)
			// Watch 3 TTLs after the failover: the lease must survive.
			end := t0.Add(3 * cttl)
			pollUntil(t, 5*time.Second, "the lease renewed on the new primary", func() error {
				if time.Now().Before(end) {
					return errors.New("watching")
				}
				return nil
			})
			holder, err := replica.Client().Get(ctx, lease).Result()
			if err != nil {
				t.Fatalf("lease on the new primary: %v", err)
			}
			maxOv, _, maxGap, promotions, tokens := b.measure(t0, time.Now())
			t.Logf("clean failover: replica promoted in %v, cluster agreed in %v; after it: %d promotions, max overlap %v, max gap %v, tokens %v",
				promoted, agreed, promotions, maxOv, maxGap, tokens)
			if holder != es[leader].ID() || !es[leader].IsLeader() || promotions != 0 || maxOv != 0 || maxGap != 0 {
				t.Errorf("the lease did not survive a clean failover: holder %q (leader was %d, %q, leads %v), %d promotions, overlap %v, gap %v",
					holder, leader, es[leader].ID(), es[leader].IsLeader(), promotions, maxOv, maxGap)
			}
		})
	}
}

func TestClusterLossyFailover(t *testing.T) {
	for _, safe := range []bool{false, true} {
		t.Run(map[bool]string{false: "spec", true: "safe"}[safe], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := rediscluster.New(t, rediscluster.Options{})
			key := "cluster-lossy-" + t.Name()
			es, b := clusterElectors(t, c, key, 3, safe)
			pollUntil(t, 5*time.Second, "one leader", func() error { return oneLeader(es) })
			leader := leadersOf(es)[0]
			oldToken := es[leader].Leadership().Token
			lease := election.LeaderKey(key)
			primary, replica := replicaOfKey(t, c, lease)
			if err := c.WaitInSync(ctx, primary); err != nil {
				t.Fatal(err)
			}
			// Hold replication back, and wait until the replica's copy of
			// the lease has expired (its last applied renewal + TTL): the
			// primary keeps taking renewals the replica never applies.
			hold, err := c.HoldReplication(ctx, replica)
			if err != nil {
				t.Fatal(err)
			}
			defer hold.Release(ctx)
			ro := replica.Client().Conn()
			defer ro.Close()
			if err := ro.ReadOnly(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			held := time.Now()
			pollUntil(t, 3*time.Second, "the replica's copy of the lease expired", func() error {
				if n, err := ro.Exists(ctx, lease).Result(); err != nil || n != 0 {
					return fmt.Errorf("EXISTS %d, %v", n, err)
				}
				return nil
			})
			lag := time.Since(held)
			if !es[leader].IsLeader() {
				t.Fatalf("the leader lost the lease before the failover")
			}
			t0 := time.Now()
			if err := c.Failover(ctx, replica, rediscluster.Takeover); err != nil {
				t.Fatal(err)
			}
			if err := hold.Release(ctx); err != nil {
				t.Fatal(err)
			}
			promoted := time.Since(t0)
			if err := c.WaitHealthy(ctx); err != nil {
				t.Fatal(err)
			}
			// The lease is gone with the lost writes: someone acquires it
			// anew. Wait for one leader holding the lease again and a TTL
			// more, so the old leader's demotion is in the record.
			pollUntil(t, 5*time.Second, "a leader after the lossy failover", func() error {
				if err := oneLeader(es); err != nil {
					return err
				}
				for _, e := range es {
					if e.IsLeader() {
						h, err := replica.Client().Get(ctx, lease).Result()
						if err != nil || h != e.ID() {
							return fmt.Errorf("lease holds %q (%v), leader is %q", h, err, e.ID())
						}
						if e.Leadership().Since.Before(t0) {
							return errors.New("the old leader still leads in its old term")
						}
					}
				}
				return nil
			})
			maxOv, totalOv, maxGap, promotions, tokens := b.measure(t0, time.Now())
			newLeader := leadersOf(es)[0]
			t.Logf("lossy failover (replication held %v): TAKEOVER in %v; lease lost; new leader %d (old %d), %d promotions after, max overlap %v (total %v), max gap %v; bound: overlap ≤ TTL/2 + jitter = %v; tokens in promotion order %v",
				lag, promoted, newLeader, leader, promotions, maxOv, totalOv, maxGap, cttl/2+5*time.Millisecond, tokens)
			if promotions == 0 {
				t.Errorf("nobody was promoted after the lease was lost")
			}
			if maxOv > cttl/2+5*time.Millisecond+250*time.Millisecond {
				t.Errorf("overlap %v beyond TTL/2 + jitter + slack", maxOv)
			}
			if safe {
				for i := 1; i < len(tokens); i++ {
					if tokens[i] <= tokens[i-1] {
						t.Errorf("fencing token did not grow across the lossy failover: %v", tokens)
					}
				}
				if tok := es[newLeader].Leadership().Token; tok <= oldToken {
					t.Errorf("new token %d ≤ old token %d", tok, oldToken)
				}
			}
		})
	}
}

// firstPromotion returns the first promotion at or after from: when, who
// and its token (ok false if none).
func (b *beliefs) firstPromotion(from time.Time) (at time.Time, who int, token int64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.events {
		if e.leader && !e.at.Before(from) && (!ok || e.at.Before(at)) {
			at, who, token, ok = e.at, e.who, e.token, true
		}
	}
	return
}

// demotion returns who's first demotion at or after from.
func (b *beliefs) demotion(who int, from time.Time) (at time.Time, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.events {
		if e.who == who && !e.leader && !e.at.Before(from) && (!ok || e.at.Before(at)) {
			at, ok = e.at, true
		}
	}
	return
}

// errorsOf returns who's errors at or after from, oldest first.
func (b *beliefs) errorsOf(who int, from time.Time) []failure {
	b.mu.Lock()
	defer b.mu.Unlock()
	var fs []failure
	for _, f := range b.errs {
		if f.who == who && !f.at.Before(from) {
			fs = append(fs, f)
		}
	}
	return fs
}

// TestClusterPrimaryKilled SIGKILLs the primary that holds the lease's slot
// while the electors lead: nobody fails it over by hand; the cluster flags it
// failing after its node timeout and the replica takes over on its own. The
// replica had every write (WaitInSync before the kill), lease and token key.
//
// The ClusterClients reload their slot map every cttl
// (ClusterStateReloadInterval): with go-redis's default of 60 s they would
// keep dialing the dead node for up to a minute (README, "Redis Cluster,
// replicas and failover").
//
// The bounds, from t0 = the kill, with P = the replica's promotion and A =
// the cluster's agreement on it (both measured: they are Redis's, ≥ node
// timeout + 500 ms of election delay, 2–3 s here):
//
//   - A call to the dead node fails after deadCall: go-redis v9.23 dials
//     DialerRetries = 5 times 100 ms apart (400 ms) on each of the cluster
//     client's MaxRedirects+1 = 4 attempts (the node clients do not retry:
//     MaxRetries −1), with backoffs < 30 + 50 + 90 ms between them.
//   - The old leader's belief ends by its first renew after the kill: spec
//     mode when that renew fails, ≤ TTL/2 + jitter + deadCall; safe mode at
//     its guard, ≤ TTL − margin from its last successful send (≤ t0).
//   - Nobody else can lead before P: only the promoted replica can take the
//     lease. So overlap ≤ max(0, demotion bound − P): spec max(0, TTL/2 +
//     jitter + deadCall − P), safe max(0, TTL − margin − P) = 0 (P ≥ node
//     timeout > TTL).
//   - The lease on the replica expires ≤ t0 + TTL (its last renewal + TTL)
//     and the promoted replica expires it by that absolute time: it survives
//     the takeover only if P < TTL, which a node timeout > TTL rules out.
//   - A follower's acquire fails within C (spec: deadCall; safe: its
//     deadline, TTL − margin) and it retries Wait later. Its client reloads
//     the slot map, in the background, on the first command once the map
//     is older than the reload interval R; a reload started at or after A
//     sees the new primary. So unless one already did, its first command
//     at or after A + R, which starts by A + R + Wait + C, triggers such a
//     reload, and the next command (≤ Wait + C later; the reload, ≤ one
//     dead dial + 200 ms of cooldown, is done by then) takes the lease.
//     First leader again ≤ max(A, TTL) + R + 2·(Wait + C), and the gap
//     (from the old leader's demotion, ≥ t0) is no longer.
func TestClusterPrimaryKilled(t *testing.T) {
	const (
		nodeTimeout = time.Second // cluster-node-timeout
		reload      = cttl        // R, ClusterStateReloadInterval
		jitter      = 5 * time.Millisecond
		deadCall    = 4*(4*100*time.Millisecond) + (30+50+90)*time.Millisecond
		slack       = 250 * time.Millisecond
	)
	margin := election.DefaultMargin(cttl)
	for _, safe := range []bool{false, true} {
		t.Run(map[bool]string{false: "spec", true: "safe"}[safe], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := rediscluster.New(t, rediscluster.Options{NodeTimeout: nodeTimeout})
			key := "cluster-kill-" + t.Name()
			es, b := clusterElectorsWith(t, c, key, 3, safe,
				redis.ClusterOptions{ReadTimeout: time.Second, ClusterStateReloadInterval: reload})
			pollUntil(t, 5*time.Second, "one leader", func() error { return oneLeader(es) })
			leader := leadersOf(es)[0]
			oldToken := es[leader].Leadership().Token
			lease := election.LeaderKey(key)
			primary, replica := replicaOfKey(t, c, lease)
			if err := c.WaitInSync(ctx, primary); err != nil {
				t.Fatal(err)
			}
			ro := replica.Client().Conn()
			defer ro.Close()
			if err := ro.ReadOnly(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			onReplica, err := ro.Get(ctx, lease).Result()
			if err != nil || onReplica != es[leader].ID() {
				t.Fatalf("the replica's lease holds %q (%v), leader is %q", onReplica, err, es[leader].ID())
			}
			replicaPTTL, err := ro.PTTL(ctx, lease).Result()
			if err != nil {
				t.Fatal(err)
			}
			if !es[leader].IsLeader() {
				t.Fatalf("the leader lost the lease before the kill")
			}
			t0 := time.Now()
			c.Kill(primary)
			// Nothing talks to the replica but this poll: the cluster alone
			// promotes it (node timeout, FAIL, election).
			pollUntil(t, 15*time.Second, "the replica promoted", func() error {
				role, err := replica.Client().Do(ctx, "ROLE").Slice()
				if err != nil || len(role) == 0 || role[0] != "master" {
					return fmt.Errorf("ROLE %v, %v", role, err)
				}
				return nil
			})
			promoted := time.Since(t0)
			holder, err := replica.Client().Get(ctx, lease).Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				t.Fatalf("the lease on the promoted replica: %v", err)
			}
			survived := err == nil && holder == es[leader].ID()
			if err := c.WaitHealthy(ctx); err != nil {
				t.Fatal(err)
			}
			agreed := time.Since(t0)
			acquireFails := map[bool]time.Duration{false: deadCall, true: cttl - margin}[safe]
			firstBound := max(agreed, cttl) + reload + 2*(cwait+acquireFails)
			// A leader again, in a term begun after the kill, whose ID the
			// lease on the new primary holds.
			pollUntil(t, firstBound-agreed+slack+time.Second, "a leader after the kill", func() error {
				if err := oneLeader(es); err != nil {
					return err
				}
				e := es[leadersOf(es)[0]]
				if e.Leadership().Since.Before(t0) {
					return errors.New("the old leader still leads in its old term")
				}
				if h, err := replica.Client().Get(ctx, lease).Result(); err != nil || h != e.ID() {
					return fmt.Errorf("lease holds %q (%v), leader is %q", h, err, e.ID())
				}
				return nil
			})
			// Watch two TTLs more: the new leader renews on the new primary.
			end := time.Now().Add(2 * cttl)
			pollUntil(t, 5*time.Second, "watching the new leader", func() error {
				if time.Now().Before(end) {
					return errors.New("watching")
				}
				return nil
			})
			maxOv, totalOv, maxGap, promotions, tokens := b.measure(t0, time.Now())
			firstAt, first, firstToken, _ := b.firstPromotion(t0)
			demotedAt, _ := b.demotion(leader, t0)
			var oldErrs []string
			for _, f := range b.errorsOf(leader, t0) {
				if f.at.Before(firstAt) && len(oldErrs) < 2 {
					oldErrs = append(oldErrs, fmt.Sprintf("+%v %v", f.at.Sub(t0).Round(time.Millisecond), f.err))
				}
			}
			demoteBound := cttl/2 + jitter + deadCall
			if safe {
				demoteBound = cttl - margin
			}
			overlapBound := max(0, demoteBound-promoted)
			t.Logf("kill: replica promoted %v after, cluster agreed %v; lease on the replica had %v left at the kill, survived the takeover: %v",
				promoted.Round(time.Millisecond), agreed.Round(time.Millisecond), replicaPTTL, survived)
			t.Logf("kill: old leader %d demoted %v after (bound %v), errors %q; first leader again %d %v after (bound %v); %d promotions after the kill",
				leader, demotedAt.Sub(t0).Round(time.Millisecond), demoteBound, oldErrs, first, firstAt.Sub(t0).Round(time.Millisecond), firstBound.Round(time.Millisecond), promotions)
			t.Logf("kill: max gap %v (bound %v), max overlap %v (total %v; bound %v); tokens %v (old %d, new %d)",
				maxGap.Round(time.Millisecond), firstBound.Round(time.Millisecond), maxOv, totalOv, overlapBound.Round(time.Millisecond), tokens, oldToken, firstToken)

			if survived && promoted > cttl+slack {
				t.Errorf("the lease outlived its TTL on the promoted replica: promoted %v after the kill, TTL %v", promoted, cttl)
			}
			if !survived && promoted+slack < replicaPTTL {
				t.Errorf("the lease was lost although the replica was promoted (%v) before it expired (%v left): a write lost in spite of WaitInSync", promoted, replicaPTTL)
			}
			if d := demotedAt.Sub(t0); demotedAt.IsZero() || d > demoteBound+slack {
				t.Errorf("the old leader demoted %v after the kill, bound %v + slack %v", d, demoteBound, slack)
			}
			if d := firstAt.Sub(t0); firstAt.IsZero() || d > firstBound+slack {
				t.Errorf("first leader again %v after the kill, bound %v + slack %v", d, firstBound, slack)
			} else if d < promoted-slack {
				t.Errorf("a leader %v after the kill, before the replica was promoted (%v)", d, promoted)
			}
			if promotions != 1 {
				t.Errorf("%d promotions after the kill, want one (a stable new leader)", promotions)
			}
			if maxGap > firstBound+slack {
				t.Errorf("gap %v beyond max(A, TTL) + R + 2·(Wait + C) = %v + slack %v", maxGap, firstBound, slack)
			}
			if maxOv > overlapBound+slack {
				t.Errorf("overlap %v beyond %v + slack %v", maxOv, overlapBound, slack)
			}
			if safe {
				for i := 1; i < len(tokens); i++ {
					if tokens[i] <= tokens[i-1] {
						t.Errorf("fencing token did not grow across the kill: %v", tokens)
					}
				}
				if firstToken <= oldToken {
					t.Errorf("new token %d ≤ old token %d", firstToken, oldToken)
				}
			}
		})
	}
}
