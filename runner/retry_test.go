package runner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A failing task is retried with backoff until it succeeds; one that keeps
// failing (or panicking) is dead-lettered with its error after MaxRetries.
func TestRetriesThenDeadLetter(t *testing.T) {
	f := newFleet(t)
	runs := newCounter()
	cfg := f.config(map[string]Task{
		"flaky": {MaxRetries: 3, Handler: func(ctx context.Context, _ []byte) error {
			if runs.inc(TaskID(ctx)) < 3 {
				return errors.New("not yet")
			}
			return nil
		}},
		"broken": {MaxRetries: 2, Handler: func(ctx context.Context, _ []byte) error {
			runs.inc(TaskID(ctx))
			panic("boom")
		}},
		"slow": {MaxRetries: -1, Timeout: 30 * time.Millisecond, Handler: func(ctx context.Context, _ []byte) error {
			runs.inc(TaskID(ctx))
			<-ctx.Done()
			return ctx.Err()
		}},
	})
	r := f.start(cfg)
	f.waitLeader() // retries go through the delayed ZSET, which the leader moves
	flaky, _ := r.Dispatch(context.Background(), "flaky", nil)
	broken, _ := r.Dispatch(context.Background(), "broken", []byte("payload"))
	slow, _ := r.Dispatch(context.Background(), "slow", nil)

	eventually(t, 10*time.Second, "the flaky task to complete", func() bool {
		for _, e := range f.rec.all(EventTaskCompleted) {
			if e.TaskID == flaky {
				return e.Attempt == 3
			}
		}
		return false
	})
	eventually(t, 10*time.Second, "two dead letters", func() bool { return len(f.rec.all(EventTaskDeadLettered)) == 2 })
	if n := runs.get(broken); n != 3 {
		t.Errorf("broken ran %d times; want 1 + MaxRetries 2", n)
	}
	if n := runs.get(slow); n != 1 {
		t.Errorf("slow ran %d times; want 1 (MaxRetries -1 means none)", n)
	}

	dead, err := r.rdb.XRange(context.Background(), r.keys.dead, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	for _, m := range dead {
		got[m.Values["id"].(string)] = m.Values
	}
	if v := got[broken]; v == nil || v["payload"] != "payload" || v["attempt"] != "3" || v["error"] != "handler panicked: boom" {
		t.Errorf("dead letter of broken: %v", v)
	}
	if v := got[slow]; v == nil || v["error"] != context.DeadlineExceeded.Error() {
		t.Errorf("dead letter of slow: %v", v)
	}

	// The retries waited for their backoff: 20ms, then 40ms.
	var fails []Event
	for _, e := range f.rec.all(EventTaskFailed) {
		if e.TaskID == flaky {
			fails = append(fails, e)
		}
	}
	var done Event
	for _, e := range f.rec.all(EventTaskStarted) {
		if e.TaskID == flaky && e.Attempt == 3 {
			done = e
		}
	}
	if len(fails) != 2 || !fails[0].Retry || done.At.Sub(fails[0].At) < 60*time.Millisecond {
		t.Errorf("flaky failures %v, third start at %v: want two retried failures, 20ms + 40ms of backoff", fails, done.At)
	}
	if n, _ := r.rdb.XLen(context.Background(), r.keys.stream).Result(); n != 0 {
		t.Errorf("the stream holds %d entries after everything settled; want 0", n)
	}
}

// Dispatch refuses a task that is not registered.
func TestDispatchUnknownTask(t *testing.T) {
	f := newFleet(t)
	r, err := New(dial(t, f.addr), f.config(map[string]Task{"known": {Handler: func(context.Context, []byte) error { return nil }}}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Dispatch(context.Background(), "unknown", nil); !errors.Is(err, ErrUnknownTask) {
		t.Errorf("Dispatch(unknown) = %v; want ErrUnknownTask", err)
	}
}

// An entry the runner cannot read, or a task this instance does not know, is
// dead-lettered at once rather than retried forever.
func TestMalformedAndUnknownEntriesAreDeadLettered(t *testing.T) {
	f := newFleet(t)
	r := f.start(f.config(map[string]Task{"known": {Handler: func(context.Context, []byte) error { return nil }}}))
	ctx := context.Background()
	for _, values := range [][]any{
		{"garbage", "1"},
		{"id", "x1", "task", "unregistered", "payload", "", "attempt", "1"},
	} {
		if err := r.rdb.XAdd(ctx, &redis.XAddArgs{Stream: r.keys.stream, Values: values}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 5*time.Second, "both entries dead-lettered", func() bool { return r.Stats().DeadLettered == 2 })
	if n, err := r.rdb.XLen(ctx, r.keys.dead).Result(); n != 2 || err != nil {
		t.Errorf("dead-letter stream holds %d entries (%v); want 2", n, err)
	}
	if s := r.Stats(); s.Started != 1 {
		t.Errorf("%d handlers started; want 1 (the unknown task's, which fails)", s.Started)
	}
}
