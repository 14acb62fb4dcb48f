package runner

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A graceful Stop that runs out of time while a finished task's
// acknowledgement is on its way must not hand that task back: it finished,
// and its outcome is on its way (Stop flushes it).
// Handing it back would put a copy in the stream that runs again, and the
// late acknowledgement would answer 0.
func TestStopDoesNotHandBackSettling(t *testing.T) {
	f := newFleet(t)
	runs := newCounter()
	slow := make(chan struct{})
	cfg := f.config(map[string]Task{"t": countedTask(runs), "slow": {Timeout: 2 * time.Second, Handler: func(ctx context.Context, _ []byte) error {
		<-ctx.Done()
		<-slow
		return ctx.Err()
	}}})
	cfg.ClaimIdle = 5 * time.Second
	client := redis.NewClient(&redis.Options{Addr: f.addr})
	defer client.Close()
	a, err := New(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ackHeld, ackRelease := make(chan struct{}), make(chan struct{})
	first := true
	a.ackHook = func(int) {
		if first {
			first = false
			close(ackHeld)
			<-ackRelease
		}
	}
	ctx, kill := context.WithCancel(context.Background())
	defer kill()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := a.Dispatch(context.Background(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-ackHeld:
	case <-time.After(5 * time.Second):
		t.Fatal("the task's acknowledgement was never sent")
	}
	if _, err := a.Dispatch(context.Background(), "slow", nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "slow started", func() bool { return a.Stats().Started >= 2 })
	stopCtx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(stopCtx) }()
	eventually(t, 5*time.Second, "hand-back", func() bool { return a.Stats().HandedBack >= 1 })
	close(slow)
	close(ackRelease)
	<-stopped
	for _, e := range f.rec.all(EventTaskHandedBack) {
		if e.TaskID == id {
			t.Errorf("the finished task %s was handed back", id)
		}
	}
}
