package runner

import (
	"context"
	"testing"
	"time"
)

func TestCapacityFor(t *testing.T) {
	const lo, hi = 2, 10
	for _, c := range []struct {
		backlog   int64
		avg       time.Duration
		instances int
		want      int
	}{
		{0, time.Second, 3, lo},               // nothing to do
		{-5, time.Second, 1, lo},              // XLEN below pending (after a flush)
		{100, 0, 3, lo},                       // no average known
		{30, 100 * time.Millisecond, 1, 3},    // 3s of work, 1s target
		{25, 100 * time.Millisecond, 1, 3},    // 2.5 rounds up
		{80, 100 * time.Millisecond, 1, 8},    // exactly 8
		{30, 100 * time.Millisecond, 3, lo},   // shared by 3: 1 each, raised to lo
		{61, 100 * time.Millisecond, 2, 4},    // 3.05 rounds up
		{61, 100 * time.Millisecond, 0, 7},    // no live instance counted: as if 1
		{1000, 100 * time.Millisecond, 2, hi}, // far over: capped
		{1 << 40, time.Hour, 1, hi},           // no overflow
		{10, time.Millisecond, 1 << 30, lo},   // huge fleet
	} {
		if got := CapacityFor(c.backlog, c.avg, c.instances, time.Second, lo, hi); got != c.want {
			t.Errorf("CapacityFor(%d, %v, %d) = %d; want %d", c.backlog, c.avg, c.instances, got, c.want)
		}
	}
}

// The leader publishes a capacity for the backlog; every instance applies
// it; a leadership change keeps it, and the new leader's versions continue
// the old one's.
func TestCapacityPublishedAppliedAndKept(t *testing.T) {
	f := newFleet(t)
	cfg := f.config(map[string]Task{"work": {Handler: func(context.Context, []byte) error {
		time.Sleep(20 * time.Millisecond)
		return nil
	}}})
	cfg.Workers, cfg.MinWorkers, cfg.MaxWorkers = 1, 1, 4
	cfg.DrainTarget = 100 * time.Millisecond
	for range 3 {
		f.start(cfg)
	}
	old := f.waitLeader()
	for range 600 { // 12s of work: a backlog for seconds, even at 12 workers
		if _, err := old.Dispatch(context.Background(), "work", nil); err != nil {
			t.Fatal(err)
		}
	}
	allAt := func(runners []*instance, c int, from string) bool {
		for _, in := range runners {
			if s := in.Stats(); s.Capacity != c || s.CapacityFrom != from {
				return false
			}
		}
		return true
	}
	eventually(t, 5*time.Second, "every instance to apply the leader's capacity 4", func() bool {
		return allAt(f.runners, 4, old.ElectorID())
	})
	oldVersion := old.Stats().CapacityVersion

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := old.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	var rest []*instance
	for _, in := range f.runners {
		if in != old {
			rest = append(rest, in)
		}
	}
	var next *instance
	eventually(t, 5*time.Second, "a new leader to publish", func() bool {
		for _, in := range rest {
			s := in.Stats()
			if s.Capacity != 4 {
				t.Fatalf("instance %s dropped to capacity %d during the leadership change", in.ElectorID(), s.Capacity)
			}
			for _, cand := range rest {
				if s.CapacityFrom == cand.ElectorID() {
					next = cand
				}
			}
		}
		return next != nil
	})
	if !next.IsLeader() {
		t.Errorf("capacity came from %s, which does not lead", next.ElectorID())
	}
	if s := next.Stats(); s.CapacityVersion <= oldVersion {
		t.Errorf("the new leader published version %d; want more than the old leader's %d", s.CapacityVersion, oldVersion)
	}
	eventually(t, 5*time.Second, "every instance to apply the new leader's capacity", func() bool {
		return allAt(rest, 4, next.ElectorID())
	})
}
