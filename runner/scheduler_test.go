package runner

import (
	"context"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
)

// Delayed tasks reach the stream once even when two instances both believe
// they lead, and no later than one chore tick after they are due.
func TestDelayedOnceUnderTwoLeaders(t *testing.T) {
	f := newFleet(t)
	runs := newCounter()
	cfg := f.config(map[string]Task{"later": {Handler: func(ctx context.Context, _ []byte) error {
		runs.inc(TaskID(ctx))
		return nil
	}}})
	a, b := f.start(cfg), f.start(cfg)
	f.waitLeader()
	// Test-only split brain: both act as leader whatever their electors say.
	a.splitBrain.Store(true)
	b.splitBrain.Store(true)
	eventually(t, 5*time.Second, "both instances running the scheduler", func() bool {
		seen := map[string]bool{}
		for _, e := range f.rec.all(EventChore) {
			if e.Chore == ChoreScheduler {
				seen[e.Instance] = true
			}
		}
		return seen[a.ElectorID()] && seen[b.ElectorID()]
	})

	const n = 200
	var ids []string
	for i := range n {
		// Due times spread over ten ticks, so both leaders tick while tasks fall due.
		delay := time.Duration(i%20+1) * testInterval / 2
		id, err := a.DispatchDelayed(context.Background(), "later", nil, delay)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	var (
		moved   map[string]int
		movers  map[string]int
		latest  time.Duration
		collect = func() {
			moved, movers, latest = map[string]int{}, map[string]int{}, 0
			for _, e := range f.rec.all(EventDelayedDue) {
				moved[e.TaskID]++
				movers[e.Instance]++
				latest = max(latest, e.Lateness)
			}
		}
	)
	// A task may run before its mover has reported moving it: wait for both.
	eventually(t, 10*time.Second, "every delayed task to be moved and run", func() bool {
		collect()
		for _, id := range ids {
			if runs.get(id) == 0 || moved[id] == 0 {
				return false
			}
		}
		return true
	})
	// One tick of lateness, plus a margin for a tick that the race detector
	// or a busy CI machine delays.
	if limit := testInterval + 50*time.Millisecond; latest > limit {
		t.Errorf("a task reached the stream %v after due; limit %v (one tick + margin)", latest, limit)
	}
	for _, id := range ids {
		if moved[id] != 1 || runs.get(id) != 1 {
			t.Errorf("task %s moved %d times and ran %d times; want 1 and 1", id, moved[id], runs.get(id))
		}
	}
	t.Logf("tasks moved per instance: %v; latest arrival %v after due", movers, latest)
}

// ScheduleAt runs a task at an absolute time, by the Redis clock.
func TestScheduleAt(t *testing.T) {
	f := newFleet(t)
	ran := make(chan time.Time, 1)
	cfg := f.config(map[string]Task{"at": {Handler: func(context.Context, []byte) error {
		ran <- time.Now()
		return nil
	}}})
	r := f.start(cfg)
	f.waitLeader()
	at := time.Now().Add(200 * time.Millisecond)
	if _, err := r.ScheduleAt(context.Background(), "at", nil, at); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-ran:
		if got.Before(at) {
			t.Errorf("ran at %v, before its time %v", got, at)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the scheduled task never ran")
	}
}

// Many concurrent scheduler ticks, from two runners, move each due task once.
func TestScheduleTicksRaceMovesOnce(t *testing.T) {
	f := newFleet(t)
	cfg := f.config(map[string]Task{"later": {Handler: func(context.Context, []byte) error { return nil }}})
	var rs []*Runner
	for range 2 {
		r, err := New(dial(t, f.addr), cfg)
		if err != nil {
			t.Fatal(err)
		}
		r.ctx = context.Background() // not started: only its scheduler runs
		rs = append(rs, r)
	}
	const n = 2000
	for range n {
		if _, err := rs[0].ScheduleAt(context.Background(), "later", nil, time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	for i := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			rs[i%2].schedule(election.Leadership{Leader: true})
		}()
	}
	for range 8 {
		<-done
	}
	moved := rs[0].Stats().DelayedMoved + rs[1].Stats().DelayedMoved
	length, err := rs[0].rdb.XLen(context.Background(), rs[0].keys.stream).Result()
	if err != nil {
		t.Fatal(err)
	}
	if moved != n || length != n {
		t.Fatalf("moved %d, stream holds %d; want %d and %d", moved, length, n, n)
	}
	t.Logf("moved by each runner: %d, %d", rs[0].Stats().DelayedMoved, rs[1].Stats().DelayedMoved)
}
