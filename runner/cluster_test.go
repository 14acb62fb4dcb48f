package runner

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/rediscluster"
)

// The runner against a real Redis Cluster (3 primaries + 3 replicas,
// internal/rediscluster) through *redis.ClusterClient: every multi-key script
// (complete/ack batch, retry, dead-letter, hand-back, delayed enqueue, the
// scheduler, metrics and capacity chores, fenced in safe mode, heartbeat),
// reclaim of a killed instance's tasks, and the group's slot moving to
// another primary mid-run. Skipped (saying why) where redis-cli or cluster
// mode is missing, unless LEASELAB_REQUIRE_CLUSTER=1.

// A group name full of hash-tag syntax: the keys must still share one slot.
const clusterGroup = "{a}b}{c"

func TestClusterKeysShareTheLeaseSlot(t *testing.T) {
	t.Parallel()
	c := rediscluster.New(t, rediscluster.Options{Replicas: -1})
	ctx := context.Background()
	for _, g := range []string{clusterGroup, "plain", "{", "}", "{}", "x{y}z"} {
		k := keysFor(g)
		want, err := c.Slot(ctx, k.lease)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{k.stream, k.delayed, k.dead, k.metricsN, k.metricsUS, k.instances, k.capacity, k.token} {
			if s, err := c.Slot(ctx, key); err != nil || s != want {
				t.Errorf("group %q: %s in slot %d (%v), the lease %s in %d", g, key, s, err, k.lease, want)
			}
		}
	}
	if _, err := New(c.Client(nil), Options{Group: "", Tasks: map[string]Task{"t": {Handler: func(context.Context, []byte) error { return nil }}}}); err == nil {
		t.Error("an empty group was accepted")
	}
}

func TestClusterRunner(t *testing.T) {
	for _, safe := range []bool{false, true} {
		t.Run(map[bool]string{false: "spec", true: "safe"}[safe], func(t *testing.T) {
			t.Parallel()
			clusterRun(t, safe)
		})
	}
}

func clusterRun(t *testing.T, safe bool) {
	ctx := context.Background()
	c := rediscluster.New(t, rediscluster.Options{})
	rec := &recorder{}
	done := newCounter()
	var victimID atomic.Pointer[string]
	victimStarted := make(chan string, 64)
	tasks := func(victim bool) map[string]Task {
		return map[string]Task{
			"ok": {Timeout: 200 * time.Millisecond, Handler: func(ctx context.Context, _ []byte) error { done.inc(TaskID(ctx)); return nil }},
			"fail": {MaxRetries: 1, Timeout: 200 * time.Millisecond, Handler: func(context.Context, []byte) error {
				return errors.New("always fails")
			}},
			"slow": {Timeout: 200 * time.Millisecond, Handler: func(ctx context.Context, _ []byte) error {
				if victim {
					victimStarted <- TaskID(ctx)
					<-ctx.Done()
					return ctx.Err()
				}
				done.inc(TaskID(ctx))
				return nil
			}},
		}
	}
	type inst struct {
		r      *Runner
		cancel context.CancelFunc
	}
	start := func(victim bool) inst {
		cfg := Options{Group: clusterGroup, Tasks: tasks(victim), Workers: 4, Block: 50 * time.Millisecond,
			ChoreInterval: 50 * time.Millisecond, RetryBackoff: 20 * time.Millisecond, ClaimIdle: 400 * time.Millisecond,
			Election: election.Opts{TTL: 600 * time.Millisecond, Wait: 700 * time.Millisecond, StopTimeout: time.Second, Safe: safe},
			OnEvent:  rec.add}
		rdb := c.Client(&redis.ClusterOptions{ClusterStateReloadInterval: 500 * time.Millisecond})
		r, err := New(rdb, cfg)
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(context.Background())
		if err := r.Start(rctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sctx, cancelStop := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancelStop()
			if err := r.Stop(sctx); err != nil && !victim {
				t.Errorf("stopping %s: %v", r.ElectorID(), err)
			}
			cancel()
		})
		return inst{r, cancel}
	}
	a, b := start(false), start(false)
	eventually(t, 5*time.Second, "a leader", func() bool { return a.r.IsLeader() != b.r.IsLeader() })

	var ids []string
	dispatch := func(n int) {
		for i := 0; i < n; i++ {
			id, err := a.r.Dispatch(ctx, "ok", []byte(fmt.Sprint(i)))
			if err != nil {
				t.Fatalf("Dispatch: %v", err)
			}
			ids = append(ids, id)
		}
	}
	dispatch(20)
	many, err := b.r.DispatchMany(ctx, "ok", [][]byte{[]byte("1"), []byte("2"), []byte("3"), []byte("4"), []byte("5")})
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, many...)
	for i := 0; i < 5; i++ {
		id, err := a.r.DispatchDelayed(ctx, "ok", nil, 150*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := a.r.Dispatch(ctx, "fail", nil); err != nil {
		t.Fatal(err)
	}

	// Move the group's slot to another primary while tasks flow: begin
	// (IMPORTING/MIGRATING), dispatch more (ASK redirects), move the keys,
	// dispatch more, hand the slot over.
	k := keysFor(clusterGroup)
	slot, err := c.Slot(ctx, k.lease)
	if err != nil {
		t.Fatal(err)
	}
	from, err := c.PrimaryOfSlot(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Primaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	to := ps[0]
	if to == from {
		to = ps[1]
	}
	t0 := time.Now()
	m, err := c.BeginMigration(ctx, slot, to)
	if err != nil {
		t.Fatal(err)
	}
	dispatch(10)
	moved, err := m.MoveKeys(ctx, 0, 3) // three keys per MIGRATE: the slot's keys are split for a while
	if err != nil {
		t.Fatal(err)
	}
	dispatch(10)
	if err := m.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("slot %d moved from %s to %s in %v (%d keys, 3 per MIGRATE) while the runner ran", slot, from.Addr, to.Addr, time.Since(t0), moved)
	dispatch(10)
	delayedAfter, err := b.r.DispatchDelayed(ctx, "ok", nil, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, delayedAfter)

	eventually(t, 10*time.Second, "every ok task completed", func() bool {
		for _, id := range ids {
			if done.get(id) == 0 {
				return false
			}
		}
		return true
	})
	onTarget := to.Client()
	eventually(t, 5*time.Second, "the failing task dead-lettered", func() bool {
		n, err := onTarget.XLen(ctx, k.dead).Result()
		return err == nil && n == 1
	})
	eventually(t, 5*time.Second, "every chore ran after the migration", func() bool {
		ran := map[Chore]bool{}
		for _, e := range rec.all(EventChore) {
			if e.At.After(time.Now().Add(-time.Second)) {
				ran[e.Chore] = true
			}
		}
		return ran[ChoreScheduler] && ran[ChoreMetrics] && ran[ChoreCapacity]
	})
	for _, key := range []string{k.stream, k.instances, k.capacity, k.lease} {
		if n, err := onTarget.Exists(ctx, key).Result(); err != nil || n != 1 {
			t.Errorf("%s not on the slot's new primary: %d, %v", key, n, err)
		}
	}
	if safe {
		if n, err := onTarget.Exists(ctx, k.token).Result(); err != nil || n != 1 {
			t.Errorf("the token key is not on the slot's new primary: %d, %v", n, err)
		}
	}

	// Reclaim: a third instance takes slow tasks and is killed; the others
	// take its pending tasks over after ClaimIdle.
	v := start(true)
	var slow []string
	deadline := time.Now().Add(5 * time.Second)
	var got string
	for got == "" {
		id, err := a.r.Dispatch(ctx, "slow", nil)
		if err != nil {
			t.Fatal(err)
		}
		slow = append(slow, id)
		select {
		case got = <-victimStarted:
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the victim never took a slow task")
		}
	}
	victimID.Store(&got)
	v.cancel()
	select {
	case <-v.r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the killed runner did not wind down")
	}
	eventually(t, 10*time.Second, "every slow task completed by a survivor", func() bool {
		for _, id := range slow {
			if done.get(id) == 0 {
				return false
			}
		}
		return true
	})
	reclaimed := 0
	for _, e := range rec.all(EventTaskReclaimed) {
		if e.Instance != v.r.ElectorID() {
			reclaimed++
		}
	}
	if reclaimed == 0 {
		t.Error("no task-reclaimed event from a survivor")
	}
	errs := map[string]int{}
	for _, e := range rec.all(EventError) {
		errs[fmt.Sprint(e.Err)]++
	}
	fenced := len(rec.all(EventChoreFenced))
	t.Logf("%d ok + %d slow tasks completed, %d reclaimed, %d fenced chores, errors during the run: %v",
		len(ids), len(slow), reclaimed, fenced, errs)
}
