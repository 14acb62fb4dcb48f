package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A runner killed mid-task (context cancelled without Stop, client closed)
// leaves its tasks pending; another instance reclaims and completes them.
func TestKilledRunnersTasksAreReclaimed(t *testing.T) {
	f := newFleet(t)
	var victim atomic.Pointer[string]
	started := make(chan string, 10)
	runs := newCounter()
	cfg := f.config(map[string]Task{"slow": {
		Timeout: 200 * time.Millisecond,
		Handler: func(ctx context.Context, _ []byte) error {
			runs.inc(TaskID(ctx))
			if id := victim.Load(); id != nil && TaskID(ctx) == *id {
				return nil // the survivor's run
			}
			started <- TaskID(ctx)
			<-ctx.Done() // the victim's run: never finishes
			return ctx.Err()
		},
	}})
	cfg.ClaimIdle = 300 * time.Millisecond
	// A lease that outlives scheduling hiccups on a loaded machine: the test
	// checks that the kill leaves it in place, so it must not lapse first.
	cfg.Election.TTL, cfg.Election.Wait = 3*time.Second, 3*time.Second
	a := f.start(cfg)
	f.waitLeader()
	id, err := a.Dispatch(context.Background(), "slow", nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-started:
		if got != id {
			t.Fatalf("started %s, dispatched %s", got, id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the task never started")
	}
	victim.Store(&id)
	a.kill(t)

	if n, err := f.runners[0].client.Ping(context.Background()).Result(); err == nil {
		t.Fatalf("the killed runner's client still works: %v", n)
	}
	probe := dial(t, f.addr)
	if holder, _ := probe.Get(context.Background(), a.LeaseKey()).Result(); holder != a.ElectorID() {
		t.Errorf("after the kill the lease holds %q; want the victim's %q, left to expire", holder, a.ElectorID())

	}
	pending, err := probe.XPending(context.Background(), a.keys.stream, cfg.Group).Result()
	if err != nil || pending.Count != 1 || pending.Consumers[a.ElectorID()] != 1 {
		t.Fatalf("after the kill, want the task pending under the victim; got %+v, %v", pending, err)
	}

	b := f.start(cfg)
	eventually(t, 5*time.Second, "the survivor to complete the task", func() bool {
		for _, e := range f.rec.all(EventTaskCompleted) {
			if e.TaskID == id && e.Instance == b.ElectorID() {
				return true
			}
		}
		return false
	})
	reclaimed := false
	for _, e := range f.rec.all(EventTaskReclaimed) {
		reclaimed = reclaimed || (e.TaskID == id && e.Instance == b.ElectorID())
	}
	if !reclaimed {
		t.Error("no task-reclaimed event from the survivor")
	}
	for _, e := range f.rec.all(EventTaskCompleted) {
		if e.Instance == a.ElectorID() {
			t.Errorf("the killed runner reported %v", e)
		}
	}
	if runs.get(id) != 2 {
		t.Errorf("task ran %d times, want 2 (victim, survivor)", runs.get(id))
	}
}
