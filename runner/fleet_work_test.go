package runner

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Several runners share a group: exactly one runs the chores, all of them run
// tasks, and every dispatched task runs at least once.
func TestFleetSharesTasksAndOneLeadsChores(t *testing.T) {
	f := newFleet(t)
	runs := newCounter()
	cfg := f.config(map[string]Task{"work": {Handler: func(ctx context.Context, _ []byte) error {
		runs.inc(TaskID(ctx))
		time.Sleep(2 * time.Millisecond) // long enough that one instance cannot take everything
		return nil
	}}})
	cfg.Workers = 2
	for range 3 {
		f.start(cfg)
	}
	leader := f.waitLeader()

	const n = 300
	ids := make([]string, 0, n)
	for i := range n {
		id, err := f.runners[i%3].Dispatch(context.Background(), "work", fmt.Appendf(nil, "task %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	eventually(t, 20*time.Second, "every task to run", func() bool {
		if len(f.leaders()) > 1 {
			t.Fatal("two runners lead at once")
		}
		for _, id := range ids {
			if runs.get(id) == 0 {
				return false
			}
		}
		return true
	})
	// A completion is counted just after its handler returned: poll.
	eventually(t, 5*time.Second, "every runner to have completed tasks (followers work too)", func() bool {
		for _, in := range f.runners {
			if in.Stats().Completed == 0 {
				return false
			}
		}
		return true
	})
	chores := f.rec.all(EventChore)
	if len(chores) == 0 {
		t.Fatal("no chore ran")
	}
	for _, e := range chores {
		if e.Instance != leader.ElectorID() {
			t.Fatalf("chore %s ran on %s, but %s leads", e.Chore, e.Instance, leader.ElectorID())
		}
	}
}
