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
	b := &beliefs{}
	es := make([]*election.Elector, n)
	for i := range es {
		rdb := c.Client(&redis.ClusterOptions{ReadTimeout: time.Second})
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
				case <-errs:
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
