package runner

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A worker that empties the queue without finishing a task (take(false), or
// a parked worker woken by admit) changes reserve's condition (len(queue) ==
// 0), so it must wake the fetcher: otherwise a fetcher waiting in reserve
// with a free slot sleeps on until some running task finishes, a worker
// idle and a task waiting in Redis (found in review).
func TestReserveWokenWhenQueueDrains(t *testing.T) {
	p := newPool(8, 64)
	gate := make(chan struct{})
	block := make(chan struct{})
	var spawned atomic.Int32
	p.open(func() {
		if spawned.Add(1) > 6 {
			<-gate // workers 7 and 8 are slow to reach take
		}
		for d := p.take(false); d != nil; d = p.take(true) {
			<-block
		}
	})
	ds := func(n int, from int) []*delivery {
		out := make([]*delivery, n)
		for i := range out {
			out[i] = &delivery{entry: fmt.Sprint(from + i)}
		}
		return out
	}
	state := func() (running, queued int, waiting bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.running, len(p.queue), p.waiters
	}
	until := func(what string, cond func() bool) {
		deadline := time.Now().Add(5 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("not within 5s: %s", what)
			}
			runtime.Gosched()
		}
	}
	ctx := context.Background()
	if n, _ := p.reserve(ctx, 6, func() time.Duration { return -1 }); n != 6 {
		t.Fatalf("reserve %d", n)
	}
	p.admit(ds(6, 0))
	until("6 running", func() bool { r, _, _ := state(); return r == 6 })
	n, _ := p.reserve(ctx, 64, func() time.Duration { return -1 }) // 2 free workers
	p.release(n - 1)                                               // the read returned one entry
	p.admit(ds(1, 6))                                              // queued: workers 7 and 8 have not reached take yet
	got := make(chan int, 1)
	go func() { n, _ := p.reserve(ctx, 64, func() time.Duration { return -1 }); got <- n }() // the fetcher's next loop
	until("the fetcher waits", func() bool { _, _, w := state(); return w })
	p.mu.Lock()
	ch := p.changed
	p.mu.Unlock()
	close(gate)
	until("7 running, queue empty", func() bool { r, q, _ := state(); return r == 7 && q == 0 })
	// Now 1 slot is free and the queue is empty: reserve would return 1.
	select {
	case <-ch:
	default:
		t.Errorf("7 of 8 running, queue empty, the fetcher still waits (nothing notified it): an idle worker and no read until a task finishes")
	}
	close(block)
	p.release(<-got)
	p.close()
	_ = p.waitWorkers(ctx)
}

// After a run of fast tasks, a backlog of slow ones (30 ms: a window of 2
// for 8 workers). The first read takes 64 (the window of the fast past:
// inherent). Once 16 slow tasks finished, the average says 2, so the queue
// should only shrink: the fetcher's reserve must recompute the average at
// every wake, not keep the one from before it started waiting (which read
// again when half of its 72 slots were free: 36 more slow tasks, found in
// review).
func TestWindowFollowsFinishedTasks(t *testing.T) {
	f := newFleet(t)
	var slowDone atomic.Int64
	cfg := f.config(map[string]Task{
		"fast": {Handler: func(context.Context, []byte) error { return nil }},
		"slow": {Handler: func(context.Context, []byte) error {
			time.Sleep(30 * time.Millisecond) // the task's work
			slowDone.Add(1)
			return nil
		}},
	})
	cfg.Workers, cfg.MinWorkers, cfg.MaxWorkers = 8, 8, 8
	var mu sync.Mutex
	maxQueued := 0
	var in *instance
	var ready atomic.Bool
	cfg.OnEvent = func(e Event) {
		f.rec.add(e)
		if !ready.Load() || e.Kind != EventTaskStarted || e.Task != "slow" || slowDone.Load() < 16 {
			return
		}
		in.pool.mu.Lock()
		q := len(in.pool.queue)
		in.pool.mu.Unlock()
		mu.Lock()
		maxQueued = max(maxQueued, q)
		mu.Unlock()
	}
	in = f.start(cfg)
	ready.Store(true)
	ctx := context.Background()
	if _, err := in.DispatchMany(ctx, "fast", make([][]byte, 2000)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "fast tasks done", func() bool { return len(f.rec.all(EventTaskCompleted)) == 2000 })
	if _, err := in.DispatchMany(ctx, "slow", make([][]byte, 200)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "slow tasks done", func() bool { return slowDone.Load() == 200 })
	mu.Lock()
	defer mu.Unlock()
	if maxQueued > 48 {
		t.Errorf("with 16+ slow tasks finished (window 2), %d entries were queued: the fetcher read again on the fast tasks' window", maxQueued)
	}
	t.Logf("max queued after 16 slow tasks finished: %d", maxQueued)
}
