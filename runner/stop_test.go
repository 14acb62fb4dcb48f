package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// A graceful Stop releases the lease, so another instance promotes on its
// next election tick, and leaves no goroutine behind.
func TestStopReleasesLeaseAndLeavesNoGoroutine(t *testing.T) {
	f := newFleet(t)
	probe := dial(t, f.addr)
	if err := probe.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	before := goleak.IgnoreCurrent()

	cfg := f.config(map[string]Task{"noop": {Handler: func(context.Context, []byte) error { return nil }}})
	var runners []*Runner
	var clients []*redis.Client
	var cancels []context.CancelFunc
	for range 2 {
		c := redis.NewClient(&redis.Options{Addr: f.addr})
		r, err := New(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if err := r.Start(ctx); err != nil {
			t.Fatal(err)
		}
		runners, clients, cancels = append(runners, r), append(clients, c), append(cancels, cancel)
	}
	var leader, other *Runner
	eventually(t, 5*time.Second, "a leader", func() bool {
		leader, other = runners[0], runners[1]
		if other.IsLeader() {
			leader, other = other, leader
		}
		return leader.IsLeader()
	})
	if _, err := leader.Dispatch(context.Background(), "noop", nil); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := leader.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	if leader.IsLeader() {
		t.Error("still leads after Stop")
	}
	if holder, err := probe.Get(context.Background(), leader.LeaseKey()).Result(); err == nil && holder == leader.ElectorID() {
		t.Error("Stop left the lease in Redis")
	} else if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the other instance to promote", other.IsLeader)
	// Its next election tick comes at most Wait after the release; allow
	// a margin for a loaded machine.
	if took := time.Since(stopped); took > testWait+200*time.Millisecond {
		t.Errorf("the other instance promoted %v after Stop; want within Wait %v", took, testWait)
	}

	if err := other.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range runners {
		cancels[i]()
		_ = clients[i].Close()
	}
	goleak.VerifyNone(t, before)

	// Stop is idempotent and left no consumer behind.
	if err := leader.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	consumers, err := probe.XInfoConsumers(context.Background(), leader.keys.stream, cfg.Group).Result()
	if err != nil || len(consumers) != 0 {
		t.Errorf("consumers left in the group: %v, %v", consumers, err)
	}
}

// Stop hands back what does not finish before its deadline; another instance
// runs it.
func TestStopHandsBackUnfinishedTasks(t *testing.T) {
	f := newFleet(t)
	started := make(chan string, 1)
	runs := newCounter()
	victimRunning := make(chan struct{})
	cfg := f.config(map[string]Task{"long": {Handler: func(ctx context.Context, _ []byte) error {
		if runs.inc(TaskID(ctx)) > 1 {
			return nil
		}
		started <- TaskID(ctx)
		<-ctx.Done() // the first run never finishes by itself
		close(victimRunning)
		return ctx.Err()
	}}})
	a := f.start(cfg)
	id, err := a.Dispatch(context.Background(), "long", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := <-started; got != id {
		t.Fatalf("started %s; dispatched %s", got, id)
	}
	b := f.start(cfg)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	<-victimRunning // its handler was cancelled before Stop returned
	eventually(t, 5*time.Second, "the other instance to run the handed-back task", func() bool {
		for _, e := range f.rec.all(EventTaskCompleted) {
			if e.TaskID == id && e.Instance == b.ElectorID() {
				return true
			}
		}
		return false
	})
	if s := a.Stats(); s.HandedBack != 1 || s.Failed != 0 {
		t.Errorf("stopped runner: %+v; want 1 handed back, 0 failed", s)
	}
	if runs.get(id) != 2 {
		t.Errorf("task ran %d times; want 2", runs.get(id))
	}
}
