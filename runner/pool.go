package runner

import (
	"context"
	"sync"
)

// pool bounds how many tasks an instance runs at once, and how many more it
// holds read ahead. Its size can change at any time (the leader's capacity
// chore): a smaller size only stops new fetches and starts until enough
// running tasks finished, so nothing in flight is dropped.
//
// A delivery is held from the read that delivered it until its worker is done
// with it (settled, or queued for a batched acknowledgement). A held delivery
// either runs (one of at most size workers) or waits in the read-ahead queue;
// a worker that finishes takes the next one from the queue without a round
// trip to Redis.
type pool struct {
	mu      sync.Mutex
	size    int
	ahead   int           // how many deliveries may wait beyond the running ones
	held    int           // slots reserved by the fetcher, running or queued
	running int           // workers running a task
	queue   []*delivery   // read ahead: delivered here, waiting for a worker
	changed chan struct{} // closed and replaced whenever held or size changes
}

func newPool(size, ahead int) *pool {
	return &pool{size: size, ahead: ahead, changed: make(chan struct{})}
}

// broadcast wakes every waiter. Called with mu held.
func (p *pool) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// reserve waits until it is worth reading and reserves up to n slots: some
// are free and either no delivery waits in the queue (a worker may be idle)
// or at least half the slots are free (so that reads come in batches, not
// one entry per finished task). It fails once ctx is done, free slots or not.
func (p *pool) reserve(ctx context.Context, n int) (int, error) {
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		p.mu.Lock()
		if p.running < p.size && len(p.queue) > 0 {
			p.mu.Unlock()
			return 0, nil // the caller starts them first
		}
		limit := p.size + p.ahead
		if free := limit - p.held; free > 0 && (len(p.queue) == 0 || 2*free >= limit) {
			n = min(n, free)
			p.held += n
			p.mu.Unlock()
			return n, nil
		}
		ch := p.changed
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
	p.broadcast()
	p.mu.Unlock()
}

// admit takes a delivery the fetcher reserved a slot for: true when a worker
// may start on it now (the caller starts one), false when it was queued.
func (p *pool) admit(d *delivery) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running < p.size && len(p.queue) == 0 {
		p.running++
		return true
	}
	d.queued = true
	p.queue = append(p.queue, d)
	return false
}

// startable pops the queued deliveries that may start now (after the pool
// grew); the caller starts a worker for each.
func (p *pool) startable() []*delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*delivery
	for p.running < p.size && len(p.queue) > 0 {
		out = append(out, p.queue[0])
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.running++
	}
	return out
}

// next is a worker's question once it is done with a delivery: the next
// queued one to run, or nil, in which case the worker must exit (it is no
// longer counted as running). done slots are released in the same step.
func (p *pool) next(done int) *delivery {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done > 0 {
		p.held -= done
		p.broadcast()
	}
	if len(p.queue) > 0 && p.running <= p.size {
		d := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		return d
	}
	p.running--
	p.broadcast()
	return nil
}

// resize sets the number of workers.
func (p *pool) resize(size int) {
	p.mu.Lock()
	p.size = size
	p.broadcast()
	p.mu.Unlock()
}

// state returns the size and the number of workers running a task.
func (p *pool) state() (size, running int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size, p.running
}

// waitIdle waits until no slot is held: nothing runs, nothing is queued.
func (p *pool) waitIdle(ctx context.Context) error {
	for {
		p.mu.Lock()
		idle, ch := p.held == 0, p.changed
		p.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
