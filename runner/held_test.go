package runner

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Held lists what a group still has to run: stream entries (until they are
// acknowledged) and delayed tasks, by task ID; completed tasks drop out.
func TestHeld(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: f.addr})
	defer c.Close()
	block := make(chan struct{})
	cfg := f.config(map[string]Task{"t": {Handler: func(ctx context.Context, _ []byte) error {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return nil
	}}})
	cfg.Group = "held"
	producer, err := New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ready, err := producer.DispatchMany(ctx, "t", make([][]byte, 3))
	if err != nil {
		t.Fatal(err)
	}
	later, err := producer.DispatchDelayed(ctx, "t", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Held(ctx, c, "held")
	if err != nil {
		t.Fatal(err)
	}
	if !sameSet(h.Stream, ready) || !slices.Equal(h.Delayed, []string{later}) {
		t.Fatalf("held %+v; want stream %v, delayed [%s]", h, ready, later)
	}
	// Running (read, not acknowledged): still held. Completed: gone.
	f.start(cfg)
	eventually(t, 5*time.Second, "3 started", func() bool { return len(f.rec.all(EventTaskStarted)) == 3 })
	if h, _ := Held(ctx, c, "held"); !sameSet(h.Stream, ready) {
		t.Errorf("running tasks: held stream %v, want %v", h.Stream, ready)
	}
	close(block)
	eventually(t, 5*time.Second, "3 completed", func() bool { return len(f.rec.all(EventTaskCompleted)) == 3 })
	if h, _ := Held(ctx, c, "held"); len(h.Stream) != 0 || len(h.Delayed) != 1 {
		t.Errorf("after completion: held %+v, want only the delayed task", h)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// A dead-lettered task is held as such (Dead), not missing: the harness
// counts it apart from lost tasks. Before, Held skipped the dead-letter
// stream, and a dead-lettered task looked lost.
func TestHeldListsDeadLetters(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	c := dial(t, f.addr)
	cfg := f.config(map[string]Task{"fail": {MaxRetries: -1, Handler: func(context.Context, []byte) error {
		return errors.New("always")
	}}})
	cfg.Group = "held-dead"
	r := f.start(cfg)
	id, err := r.Dispatch(ctx, "fail", nil)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "dead-lettered", func() bool { return len(f.rec.all(EventTaskDeadLettered)) == 1 })
	h, err := Held(ctx, c, "held-dead")
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Stream) != 0 || len(h.Delayed) != 0 || !slices.Equal(h.Dead, []string{id}) {
		t.Fatalf("held %+v; want only dead [%s]", h, id)
	}
}
