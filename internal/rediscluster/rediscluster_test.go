package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/internal/proc"
)

// gone fails t unless every process is dead and dir removed.
func gone(t *testing.T, pids []int, dir string) {
	t.Helper()
	for _, pid := range pids {
		if proc.Alive(pid) {
			t.Errorf("process %d still alive after Stop", pid)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists after Stop (%v)", dir, err)
	}
}

func TestClusterLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := New(t, Options{})
	if len(c.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(c.Nodes))
	}
	ps, err := c.Primaries(ctx)
	if err != nil || len(ps) != 3 {
		t.Fatalf("primaries %v, %v", ps, err)
	}
	for _, p := range ps {
		rs, err := c.ReplicasOf(ctx, p)
		if err != nil || len(rs) != 1 {
			t.Fatalf("replicas of %s: %v, %v", p.Addr, rs, err)
		}
	}
	cc := c.Client(nil)
	for _, k := range []string{"a", "b", "c", "{x}1", "{x}2"} {
		if err := cc.Set(ctx, k, k, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}

	var pids []int
	for _, n := range c.Nodes {
		pids = append(pids, n.PID())
	}
	c.Stop()
	c.Stop()
	gone(t, pids, c.Dir)
}

func TestClusterFailoverModes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := New(t, Options{})
	cc := c.Client(nil)
	for _, mode := range []FailoverMode{Coordinated, Force, Takeover} {
		p, err := c.PrimaryOf(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if err := cc.Set(ctx, "k", string(mode), 0).Err(); err != nil {
			t.Fatal(err)
		}
		// The write must have reached the replica before a FORCE or
		// TAKEOVER, or this would be the lossy case.
		if err := c.WaitInSync(ctx, p); err != nil {
			t.Fatal(err)
		}
		rs, err := c.ReplicasOf(ctx, p)
		if err != nil || len(rs) != 1 {
			t.Fatalf("replicas of %s: %v, %v", p.Addr, rs, err)
		}
		start := time.Now()
		if err := c.Failover(ctx, rs[0], mode); err != nil {
			t.Fatal(err)
		}
		promoted := time.Since(start)
		if err := c.WaitHealthy(ctx); err != nil {
			t.Fatal(err)
		}
		now, err := c.PrimaryOf(ctx, "k")
		if err != nil || now != rs[0] {
			t.Fatalf("after failover %q the primary of k is %v (%v), want %s", mode, now, err, rs[0].Addr)
		}
		v, err := cc.Get(ctx, "k").Result()
		if err != nil || v != string(mode) {
			t.Fatalf("after failover %q: k = %q, %v", mode, v, err)
		}
		t.Logf("failover %-9q: replica promoted in %v, cluster agreed in %v", mode, promoted, time.Since(start))
		// The old primary becomes the new one's replica: wait for its link
		// before the next round uses it.
		if err := poll(ctx, 10*time.Second, "old primary replicating", func(ctx context.Context) error {
			rs, err := c.ReplicasOf(ctx, now)
			if err != nil || len(rs) != 1 {
				return errors.New("no replica yet")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestClusterLossyFailover(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := New(t, Options{})
	cc := c.Client(nil)
	p, replica, hold := heldReplica(t, c, "before")
	if err := cc.Set(ctx, "k", "after", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := cc.Set(ctx, "k2{k}", "new", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// The replica read both writes and applied neither.
	if err := poll(ctx, 5*time.Second, "writes held on the replica", func(ctx context.Context) error {
		if lag, err := Lag(ctx, replica); err != nil || lag == 0 {
			return fmt.Errorf("lag %d (%v)", lag, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Failover(ctx, replica, Takeover); err != nil {
		t.Fatal(err)
	}
	if err := hold.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := cc.Get(ctx, "k").Result(); err != nil || v != "before" {
		t.Fatalf("after a lossy failover k = %q, %v; want the replicated value \"before\"", v, err)
	}
	if err := cc.Get(ctx, "k2{k}").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("after a lossy failover k2 exists (%v); want it lost", err)
	}
	// The old primary resynchronised from the new one: it lost them too.
	if err := poll(ctx, 10*time.Second, "old primary replicating", func(ctx context.Context) error {
		if rs, err := c.ReplicasOf(ctx, replica); err != nil || len(rs) != 1 || rs[0] != p {
			return errors.New("not yet")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ro := p.Client().Conn()
	defer ro.Close()
	if err := ro.Do(ctx, "READONLY").Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := ro.Get(ctx, "k").Result(); err != nil || v != "before" {
		t.Fatalf("old primary, now replica: k = %q, %v", v, err)
	}
}

func TestClusterKillAndMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := New(t, Options{})
	// go-redis v9.23 reloads its slot map on MOVED/ASK/READONLY and every
	// ClusterStateReloadInterval (default 60s), never on a refused dial: with
	// the default a client keeps dialing a killed primary for up to 60s.
	cc := c.Client(&redis.ClusterOptions{ClusterStateReloadInterval: 500 * time.Millisecond})
	for i := 0; i < 50; i++ {
		if err := cc.Set(ctx, "{m}"+string(rune('a'+i%26))+string(rune('a'+i/26)), i, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	from, err := c.PrimaryOf(ctx, "{m}")
	if err != nil {
		t.Fatal(err)
	}
	ps, _ := c.Primaries(ctx)
	var to *Node
	for _, p := range ps {
		if p != from {
			to = p
			break
		}
	}
	start := time.Now()
	if err := c.MigrateSlot(ctx, "{m}", to); err != nil {
		t.Fatal(err)
	}
	t.Logf("migrated a slot of 50 keys in %v", time.Since(start))
	if now, err := c.PrimaryOf(ctx, "{m}"); err != nil || now != to {
		t.Fatalf("slot on %v (%v), want %s", now, err, to.Addr)
	}
	if n, err := to.Client().DBSize(ctx).Result(); err != nil || n < 50 {
		t.Fatalf("target holds %d keys (%v)", n, err)
	}
	if ttl, err := cc.TTL(ctx, "{m}aa").Result(); err != nil || ttl <= 0 {
		t.Fatalf("TTL after MIGRATE: %v, %v", ttl, err)
	}

	// Kill the primary that now holds the slot: its replica takes over
	// after cluster-node-timeout. Replication is asynchronous: wait until
	// the replica has the migrated keys, or the kill loses them (seen in CI:
	// the read below found no key).
	if err := c.WaitInSync(ctx, to); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	c.Kill(to)
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	now, err := c.PrimaryOf(ctx, "{m}")
	if err != nil || now == to {
		t.Fatalf("after kill the slot is on %v (%v)", now, err)
	}
	t.Logf("primary killed: replica %s took over in %v (NodeTimeout 1s)", now.Addr, time.Since(start))
	// The client's slot map still names the dead node until it reloads it
	// after an error.
	if err := poll(ctx, 5*time.Second, "a read through the cluster client", func(ctx context.Context) error {
		if v, err := cc.Get(ctx, "{m}aa").Int(); err != nil || v != 0 {
			return fmt.Errorf("%d, %v", v, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("the cluster client reads again %v after the kill", time.Since(start))
}

func TestReplicatedSentinel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := NewReplicated(t, ReplicatedOptions{})
	fc := r.FailoverClient(nil)
	if err := fc.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	old, err := r.Primary(ctx)
	if err != nil || old != r.Nodes[0] {
		t.Fatalf("primary %v, %v", old, err)
	}
	if err := r.WaitInSync(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	now, err := r.SentinelFailover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("SENTINEL FAILOVER: %s promoted, every Sentinel agrees, in %v", now.Addr, time.Since(start))
	if err := poll(ctx, 10*time.Second, "a write through the failover client", func(ctx context.Context) error {
		return fc.Set(ctx, "k2", "v2", 0).Err()
	}); err != nil {
		t.Fatal(err)
	}
	if v, err := now.Client().Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("k on the new primary: %q, %v", v, err)
	}
	// The old primary stays a writable primary until a Sentinel converts
	// it: two primaries meanwhile (a client not behind Sentinel writes to
	// the old one).
	if err := r.WaitReplicated(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("old primary converted to a replica %v after SENTINEL FAILOVER (two primaries until then)", time.Since(start))

	var pids []int
	for _, n := range append(r.Nodes, r.Sentinels...) {
		pids = append(pids, n.PID())
	}
	r.Stop()
	gone(t, pids, r.Dir)
}

func TestReplicatedPromoteLossy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := NewReplicated(t, ReplicatedOptions{Sentinels: -1})
	p, rep := r.Nodes[0], r.Nodes[1]
	if err := p.Client().Set(ctx, "k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitInSync(ctx); err != nil {
		t.Fatal(err)
	}
	hold, err := r.HoldReplication(ctx, rep)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Client().Set(ctx, "k", "after", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Promote(ctx, rep); err != nil {
		t.Fatal(err)
	}
	if err := hold.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.WaitReplicated(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := rep.Client().Get(ctx, "k").Result(); err != nil || v != "before" {
		t.Fatalf("k on the promoted replica: %q, %v; want \"before\"", v, err)
	}
}

// TestClusterFailoverAskedAgain: a coordinated failover Redis gives up (here
// the replica's replication is held, so it cannot catch up within Redis's
// 5 s) is asked for again, and the second request promotes the replica once
// replication goes on — the case a loaded machine hits.
func TestClusterFailoverAskedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := New(t, Options{})
	cc := c.Client(nil)
	_, replica, hold := heldReplica(t, c, "v")
	if err := cc.Set(ctx, "k", "held", 0).Err(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Failover(ctx, replica, Coordinated) }()
	// Release replication only once Redis has given the first request up.
	log := filepath.Join(replica.Dir, "log")
	if err := poll(ctx, 20*time.Second, "the first manual failover timed out", func(context.Context) error {
		b, err := os.ReadFile(log)
		if err != nil || !strings.Contains(string(b), "Manual failover timed out") {
			return fmt.Errorf("not in %s yet (%v)", log, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("Failover returned before replication went on: %v", err)
	default:
	}
	if err := hold.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := cc.Get(ctx, "k").Result(); err != nil || v != "held" {
		t.Fatalf("after the failover k = %q, %v; want the held write", v, err)
	}
}

// heldReplica writes k = v, waits until the replica of k's primary has it,
// and holds that replica's replication (released when the test ends): the
// start of a lossy or a stalled failover. It returns the primary and the
// replica.
func heldReplica(t *testing.T, c *Cluster, v string) (primary, replica *Node, hold *Hold) {
	t.Helper()
	ctx := context.Background()
	if err := c.Client(nil).Set(ctx, "k", v, 0).Err(); err != nil {
		t.Fatal(err)
	}
	p, err := c.PrimaryOf(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitInSync(ctx, p); err != nil {
		t.Fatal(err)
	}
	rs, err := c.ReplicasOf(ctx, p)
	if err != nil || len(rs) != 1 {
		t.Fatalf("replicas of %s: %v %v", p.Addr, rs, err)
	}
	if hold, err = c.HoldReplication(ctx, rs[0]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hold.Release(ctx) })
	return p, rs[0], hold
}
