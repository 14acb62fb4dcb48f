package runner

import (
	"context"
	"sync"
	"time"
)

// pool bounds how many tasks an instance runs at once, and how many more it
// holds read ahead, and owns the worker goroutines that run them. Its size
// can change at any time (the leader's capacity chore): a smaller size only
// stops new fetches and starts until enough running tasks finished, so
// nothing in flight is dropped.
//
// A delivery is held from the read that delivered it until its worker is done
// with it (settled, or queued for a batched acknowledgement). A held delivery
// either runs (one of at most size workers) or waits in the queue. The
// workers are long-lived: there are size of them (more for a while after the
// pool shrank, until the extra ones finish their task); one that is done takes
// the next queued delivery without a round trip to Redis, and one that finds
// the queue empty parks until the fetcher admits more. Parked workers are
// woken one per admitted delivery, never more than there are deliveries.
type pool struct {
	mu      sync.Mutex
	size    int         // how many workers may run a task at once
	ahead   int         // the most deliveries that may wait beyond the running ones (window)
	held    int         // slots reserved by the fetcher, running or queued
	running int         // workers running a task
	queue   []*delivery // delivered here, waiting for a worker (FIFO)

	workers int       // worker goroutines alive
	idle    int       // workers parked in wake.Wait
	woken   int       // parked workers signalled and not yet running again
	wake    sync.Cond // parks idle workers (L is &mu)
	closed  bool      // no more deliveries: workers exit once the queue is empty
	spawn   func()    // starts one worker goroutine; nil before open

	changed chan struct{} // closed and replaced when held, size or workers change, while waiters
	waiters bool          // someone waits on changed
}

func newPool(size, ahead int) *pool {
	p := &pool{size: size, ahead: ahead, changed: make(chan struct{})}
	p.wake.L = &p.mu
	return p
}

// notify wakes every goroutine waiting on changed (the fetcher in reserve,
// Stop in waitIdle and waitWorkers), if there is one. Called with mu held.
func (p *pool) notify() {
	if p.waiters {
		close(p.changed)
		p.changed = make(chan struct{})
		p.waiters = false
	}
}

// wait returns the channel to wait on for the next change. Called with mu held.
func (p *pool) wait() <-chan struct{} {
	p.waiters = true
	return p.changed
}

// open starts size workers, each running spawn's goroutine, and the pool
// starts more whenever it grows beyond its workers.
func (p *pool) open(spawn func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spawn = spawn
	p.grow()
}

// grow starts workers until there are size of them. Called with mu held.
func (p *pool) grow() {
	if p.spawn == nil || p.closed {
		return
	}
	for ; p.workers < p.size; p.workers++ {
		go p.spawn()
	}
}

// readAheadWait bounds how long read-ahead makes a task wait: an instance
// holds no more deliveries beyond its running ones than its workers start
// within readAheadWait at their average task time.
const readAheadWait = 10 * time.Millisecond

// window returns how many deliveries may wait beyond the running ones, for
// tasks that take avg on average: ahead, but no more than size workers start
// within readAheadWait; none while avg is unknown (negative), so that the
// first read takes only what the workers start at once. Called with mu held.
func (p *pool) window(avg time.Duration) int {
	switch {
	case avg < 0:
		return 0
	case avg == 0:
		return p.ahead
	}
	return int(min(int64(p.ahead), int64(p.size)*int64(readAheadWait)/int64(avg)))
}

// reserve waits until it is worth reading and reserves up to n slots: some
// are free (size, plus the read-ahead window for tasks that take avg) and
// either no delivery waits in the queue (a worker may be idle) or at least
// half the slots are free (so that reads come in batches, not one entry per
// finished task). It fails once ctx is done, free slots or not.
func (p *pool) reserve(ctx context.Context, n int, average func() time.Duration) (int, error) {
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		avg := average() // again after every wake: tasks finished meanwhile
		p.mu.Lock()
		limit := p.size + p.window(avg)
		if free := limit - p.held; free > 0 && (len(p.queue) == 0 || 2*free >= limit) {
			n = min(n, free)
			p.held += n
			p.mu.Unlock()
			return n, nil
		}
		ch := p.wait()
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// release frees n held slots.
func (p *pool) release(n int) {
	if n == 0 {
		return
	}
	p.mu.Lock()
	p.held -= n
	p.notify()
	p.mu.Unlock()
}

// admit queues deliveries the fetcher reserved slots for, and wakes as many
// parked workers as may start on them.
func (p *pool) admit(ds []*delivery) {
	if len(ds) == 0 {
		return
	}
	p.mu.Lock()
	p.queue = append(p.queue, ds...)
	// Workers that will look at the queue soon: running ones (they take the
	// next delivery when done) count only for the slots beyond size.
	for n := min(len(p.queue), p.size-p.running) - p.woken; n > 0 && p.idle > p.woken; n-- {
		p.woken++
		p.wake.Signal()
	}
	p.mu.Unlock()
}

// take is a worker's loop step: done reports that it finished a delivery
// (its slot is released and it no longer counts as running). It returns the
// next delivery to run, parking while there is none, or nil when the worker
// must exit: the pool shrank below its workers, or it was closed and nothing
// is left to run.
func (p *pool) take(done bool) *delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done {
		p.running--
		p.held--
		p.notify()
	}
	for {
		if p.workers > p.size || (p.closed && len(p.queue) == 0) {
			p.workers--
			p.notify()
			return nil
		}
		if len(p.queue) > 0 && p.running < p.size {
			d := p.queue[0]
			p.queue[0] = nil
			p.queue = p.queue[1:]
			p.running++
			if len(p.queue) == 0 {
				p.notify() // reserve waits for an empty queue when few slots are free
			}
			return d
		}
		p.idle++
		p.wake.Wait()
		p.idle--
		if p.woken > 0 {
			p.woken--
		}
	}
}

// resize sets the number of workers that may run a task at once: it starts
// the missing workers, or lets the extra ones exit once they are done.
func (p *pool) resize(size int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.size = size
	p.grow()
	p.woken = 0
	p.wake.Broadcast() // extra workers exit; the others look at the queue
	p.notify()
}

// close tells the workers to exit once the queue is empty. Nothing may be
// admitted after.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.woken = 0
	p.wake.Broadcast()
	p.notify()
}

// state returns the size and the number of workers running a task.
func (p *pool) state() (size, running int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size, p.running
}

// waitIdle waits until no slot is held: nothing runs, nothing is queued.
func (p *pool) waitIdle(ctx context.Context) error {
	return p.waitFor(ctx, func() bool { return p.held == 0 })
}

// waitWorkers waits, after close, until every worker has exited except those
// still running a task (a handler that ignores its cancelled ctx: it exits
// when its handler returns).
func (p *pool) waitWorkers(ctx context.Context) error {
	return p.waitFor(ctx, func() bool { return p.workers == p.running })
}

// waitFor waits until cond, called with mu held, holds.
func (p *pool) waitFor(ctx context.Context, cond func() bool) error {
	for {
		p.mu.Lock()
		if cond() {
			p.mu.Unlock()
			return nil
		}
		ch := p.wait()
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
