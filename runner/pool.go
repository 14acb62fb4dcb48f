package runner

import (
	"context"
	"sync"
)

// pool bounds how many tasks an instance runs at once. Its size can change at
// any time (the leader's capacity chore): a smaller size only stops new
// fetches until enough running tasks finished, so nothing in flight is
// dropped.
type pool struct {
	mu      sync.Mutex
	size    int
	busy    int           // slots reserved by the fetcher or running a task
	changed chan struct{} // closed and replaced whenever busy or size changes
}

func newPool(size int) *pool {
	return &pool{size: size, changed: make(chan struct{})}
}

// broadcast wakes every waiter. Called with mu held.
func (p *pool) broadcast() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// reserve waits until at least one slot is free and reserves up to n of
// them. It fails once ctx is done, free slots or not.
func (p *pool) reserve(ctx context.Context, n int) (int, error) {
	for {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		p.mu.Lock()
		if free := p.size - p.busy; free > 0 {
			n = min(n, free)
			p.busy += n
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

// release frees n slots.
func (p *pool) release(n int) {
	if n == 0 {
		return
	}
	p.mu.Lock()
	p.busy -= n
	p.broadcast()
	p.mu.Unlock()
}

// resize sets the number of slots.
func (p *pool) resize(size int) {
	p.mu.Lock()
	p.size = size
	p.broadcast()
	p.mu.Unlock()
}

// state returns the size and the number of busy slots.
func (p *pool) state() (size, busy int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.size, p.busy
}

// waitIdle waits until no slot is busy.
func (p *pool) waitIdle(ctx context.Context) error {
	for {
		p.mu.Lock()
		idle, ch := p.busy == 0, p.changed
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
