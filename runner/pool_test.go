package runner

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// The pool's long-lived workers: never more running than the size in force,
// more workers when it grows, fewer once the extra ones are done when it
// shrinks, every admitted delivery run once, and every worker gone after close.
func TestPoolWorkers(t *testing.T) {
	p := newPool(2, 8)
	var (
		mu      sync.Mutex
		running int
		limit   = 2 // the most that may run at once in the current phase
		ran     = map[string]int{}
	)
	started := make(chan string, 16)
	proceed := make(chan struct{})
	p.open(func() {
		for d := p.take(false); d != nil; d = p.take(true) {
			mu.Lock()
			running++
			if running > limit {
				t.Errorf("%d running, limit %d", running, limit)
			}
			mu.Unlock()
			started <- d.entry
			<-proceed
			mu.Lock()
			running--
			ran[d.entry]++
			mu.Unlock()
		}
	})
	ctx := context.Background()
	n, err := p.reserve(ctx, 100, func() time.Duration { return 0 })
	if err != nil || n != 10 {
		t.Fatalf("reserve: %d, %v; want 10 (size 2 + ahead 8)", n, err)
	}
	ds := make([]*delivery, n)
	for i := range ds {
		ds[i] = &delivery{entry: fmt.Sprint(i)}
	}
	p.admit(ds)
	if a, b := <-started, <-started; min(a, b) != "0" || max(a, b) != "1" {
		t.Errorf("started %s and %s first, want the head of the queue, 0 and 1", a, b)
	}

	// Grow: two more workers start on the queue.
	mu.Lock()
	limit = 4
	mu.Unlock()
	p.resize(4)
	<-started
	<-started
	if _, r := p.state(); r != 4 {
		t.Errorf("%d running after growing to 4", r)
	}

	// Shrink: the four finish their tasks, then one at a time runs the rest.
	p.resize(1)
	for range 4 {
		proceed <- struct{}{}
	}
	mu.Lock()
	limit = 1
	mu.Unlock()
	for range 6 {
		<-started
		proceed <- struct{}{}
	}
	if err := p.waitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	p.close()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := p.waitWorkers(wctx); err != nil {
		t.Fatalf("workers did not exit: %v", err)
	}
	p.mu.Lock()
	if p.workers != 0 || p.held != 0 || p.running != 0 {
		t.Errorf("after close: %d workers, %d held, %d running", p.workers, p.held, p.running)
	}
	p.mu.Unlock()
	for _, d := range ds {
		if ran[d.entry] != 1 {
			t.Errorf("delivery %s ran %d times", d.entry, ran[d.entry])
		}
	}
}

// The read-ahead window: none before a task finished, ReadAhead for fast
// tasks, what the workers start within readAheadWait for slow ones.
func TestPoolReadAheadWindow(t *testing.T) {
	p := newPool(8, 64)
	for _, c := range []struct {
		avg  time.Duration
		want int
	}{
		{-1, 0},                     // unknown: read for the free workers only
		{0, 64},                     // instant (a frozen clock)
		{time.Microsecond, 64},      // capped by ReadAhead
		{time.Millisecond, 64},      // 80 within 10 ms: capped
		{5 * time.Millisecond, 16},  // 8 workers × 2 tasks each
		{30 * time.Millisecond, 2},  // 8 × 1/3
		{time.Second, 0},            // slow: none
		{time.Duration(1 << 62), 0}, // no overflow
	} {
		if got := p.window(c.avg); got != c.want {
			t.Errorf("window(%v) = %d, want %d", c.avg, got, c.want)
		}
	}
	if n, _ := p.reserve(context.Background(), 100, func() time.Duration { return -1 }); n != 8 {
		t.Errorf("first reserve: %d slots, want the 8 workers'", n)
	}
}

// The fetcher's estimate of the task time: unknown until a task finished,
// then each window's mean weighs half.
func TestTaskMeter(t *testing.T) {
	r := &Runner{}
	var m taskMeter
	if got := m.average(r); got != -1 {
		t.Errorf("no task yet: %v, want -1", got)
	}
	r.ran.Add(4)
	r.ranNS.Add(int64(4 * time.Millisecond))
	if got := m.average(r); got != time.Millisecond {
		t.Errorf("after 4 tasks of 1ms: %v", got)
	}
	if got := m.average(r); got != time.Millisecond {
		t.Errorf("nothing new: %v, want 1ms still", got)
	}
	r.ran.Add(1)
	r.ranNS.Add(int64(3 * time.Millisecond))
	if got := m.average(r); got != 2*time.Millisecond {
		t.Errorf("then one of 3ms: %v, want 2ms", got)
	}
}
