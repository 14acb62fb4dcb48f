package runner

import (
	"context"
	"testing"
	"time"
)

// An idle instance's blocking read can receive an entry up to Block after
// the read was sent, which is when the deferral check counts ClaimIdle from
// (the one safe anchor: Redis may deliver at once). With ClaimIdle only a
// little above the task Timeout and the default 1 s Block, every entry that
// arrived late in a read was deferred, left to be reclaimed ClaimIdle later,
// with no read-ahead at all (10 of 10 deferred before the fix). Block is now
// capped at half of ClaimIdle - Timeout, so a delivered task always has its
// whole Timeout before anyone may reclaim it, and it starts.
func TestLateInABlockingReadStarts(t *testing.T) {
	f := newFleet(t)
	cfg := f.config(map[string]Task{"t": {Timeout: time.Second, Handler: func(context.Context, []byte) error { return nil }}})
	cfg.Group = "late-in-block"
	cfg.Block = 0 // the default, 1 s
	cfg.ClaimIdle = 1200 * time.Millisecond
	in := f.start(cfg)
	const n = 6
	for i := range n {
		if _, err := in.Dispatch(context.Background(), "t", nil); err != nil {
			t.Fatal(err)
		}
		if i < n-1 {
			time.Sleep(370 * time.Millisecond) // the fault: arrivals spread over the blocking reads
		}
	}
	eventually(t, 5*time.Second, "every task handled", func() bool {
		return len(f.rec.all(EventTaskStarted))+len(f.rec.all(EventTaskDeferred)) >= n
	})
	if d := len(f.rec.all(EventTaskDeferred)); d != 0 {
		t.Errorf("%d of %d tasks deferred (started %d): an idle instance must start what it reads", d, n, len(f.rec.all(EventTaskStarted)))
	}
}
