package runner

import (
	"context"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// The chore ticker runs on the injected clock, and events are stamped with
// it: each step of a mock clock runs one more tick.
func TestChoresFollowTheInjectedClock(t *testing.T) {
	f := newFleet(t)
	mock := clock.NewMock() // starts at the Unix epoch
	cfg := f.config(map[string]Task{"noop": {Handler: func(context.Context, []byte) error { return nil }}})
	cfg.Clock = mock
	// The mock never fires the renewal unless advanced: a long lease keeps
	// Redis agreeing with the frozen leader for the test's duration.
	cfg.Election.TTL, cfg.Election.Wait = 10*time.Second, 10*time.Second
	f.start(cfg)
	f.waitLeader()
	schedulerRuns := func() int {
		n := 0
		for _, e := range f.rec.all(EventChore) {
			if e.Chore == ChoreScheduler {
				n++
			}
		}
		return n
	}
	for range 3 {
		before := schedulerRuns()
		mock.Add(testInterval)
		eventually(t, 5*time.Second, "a scheduler run on the mock's tick", func() bool { return schedulerRuns() > before })
	}
	for _, e := range f.rec.all(EventChore) {
		if e.At.After(mock.Now()) || e.At.Year() != 1970 {
			t.Errorf("chore stamped %v; want the mock's time (now %v)", e.At, mock.Now())
		}
	}
}
