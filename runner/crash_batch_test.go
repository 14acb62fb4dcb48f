package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A runner killed while a batch of acknowledgements is held back (completed
// tasks, not yet acknowledged): nothing is lost. The survivor reclaims the
// held tasks after ClaimIdle and completes them again, so every task is
// completed (acknowledged) at least once, and exactly the held ones run twice:
// no more than the README's bound of 2×AckBatch + Workers.
func TestCrashMidAckBatch(t *testing.T) {
	f := newFleet(t)
	runs := newCounter()
	cfg := f.config(map[string]Task{"t": countedTask(runs)})
	cfg.ClaimIdle = 300 * time.Millisecond
	cfg.AckBatch = 16
	cfg.MinWorkers, cfg.MaxWorkers = cfg.Workers, cfg.Workers

	// The victim acknowledges its first batch, then holds the next one.
	client := redis.NewClient(&redis.Options{Addr: f.addr})
	defer client.Close()
	a, err := New(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var batches atomic.Int64
	held := make(chan int, 1)
	release := make(chan struct{})
	a.ackHook = func(n int) {
		if batches.Add(1) == 2 {
			held <- n
			<-release
		}
	}
	const n = 200
	payloads := make([][]byte, n)
	ids, err := a.DispatchMany(context.Background(), "t", payloads)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var inBatch int
	select {
	case inBatch = <-held:
	case <-time.After(5 * time.Second):
		t.Fatal("no second batch")
	}
	// Crash once the next batch is queued for the acker in full (so workers
	// are running into the blocked hand-over).
	eventually(t, 5*time.Second, "a full acknowledgement queue", func() bool { return len(a.acks) == cap(a.acks) })
	cancel()
	_ = client.Close()
	close(release)
	select {
	case <-a.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the killed runner did not wind down")
	}
	ranOnVictim := 0
	for _, id := range ids {
		ranOnVictim += runs.get(id)
	}
	if ranOnVictim <= inBatch {
		t.Fatalf("the victim ran %d tasks, its held batch %d: no crash mid-batch", ranOnVictim, inBatch)
	}

	f.start(cfg)
	completed := func() map[string]bool {
		out := map[string]bool{}
		for _, e := range f.rec.all(EventTaskCompleted) {
			out[e.TaskID] = true
		}
		return out
	}
	eventually(t, 10*time.Second, "every task completed", func() bool { return len(completed()) == n })
	twice := 0
	for _, id := range ids {
		switch c := runs.get(id); {
		case c == 0:
			t.Errorf("task %s never ran", id)
		case c > 2:
			t.Errorf("task %s ran %d times", id, c)
		case c == 2:
			twice++
		}
	}
	if twice < inBatch {
		t.Errorf("%d tasks ran twice; want at least the %d of the held batch", twice, inBatch)
	}
	if bound := 2*cfg.AckBatch + cfg.Workers; twice > bound {
		t.Errorf("%d tasks ran twice, over the bound 2×AckBatch + Workers = %d", twice, bound)
	}
	probe := dial(t, f.addr)
	if l, err := probe.XLen(context.Background(), a.keys.stream).Result(); err != nil || l != 0 {
		t.Errorf("stream length %d (%v), want 0", l, err)
	}
	t.Logf("held batch %d, victim runs %d, run twice %d (bound %d)", inBatch, ranOnVictim, twice, 2*cfg.AckBatch+cfg.Workers)
}
