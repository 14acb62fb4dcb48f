package runner

import (
	"context"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"
)

// A delivery that waited so long that it could still be running when
// another instance may reclaim it (wait + Timeout > ClaimIdle) is not started:
// it is dropped from the in-flight registry and left pending, for reclaim.
// Every delivery waits in the pool's queue, however briefly, so the check
// applies to all of them.
func TestWaitedPastClaimIdleIsNotStarted(t *testing.T) {
	mock := clock.NewMock()
	ran := false
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never called
	defer rdb.Close()
	var events []Event
	r, err := New(rdb, Options{
		Group:     "g",
		Tasks:     map[string]Task{"t": {Timeout: time.Second, Handler: func(context.Context, []byte) error { ran = true; return nil }}},
		ClaimIdle: 3 * time.Second,
		Clock:     mock,
		OnEvent:   func(e Event) { events = append(events, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.ctx, r.taskCtx = context.Background(), context.Background()
	d := &delivery{entry: "1-0", id: "task", task: "t", attempt: 1, readSent: mock.Now()}
	r.track([]*delivery{d}, false)
	mock.Add(2*time.Second + time.Millisecond) // 1s Timeout left: past ClaimIdle
	r.runDelivery(d)
	if ran || r.stats.started.Load() != 0 {
		t.Error("the handler ran")
	}
	if r.tracked(d) {
		t.Error("still registered as in flight")
	}
	if len(events) != 1 || events[0].Kind != EventTaskDeferred || events[0].TaskID != "task" || events[0].Duration != 2*time.Second+time.Millisecond || r.Stats().Deferred != 1 {
		t.Errorf("events %+v, Stats().Deferred %d; want one task-deferred after 2.001s and the count", events, r.Stats().Deferred)
	}
}
