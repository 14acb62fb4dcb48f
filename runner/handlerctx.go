package runner

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// handlerCtx is a handler's ctx under the real clock (Options.Clock nil). It
// is the context context.WithTimeout(parent, Timeout) would give at the
// handler's start, with the task's ID as a value (TaskID), but it builds that
// context — a timer, a registration with the parent — only when the handler
// first calls Done, Err or Value with a key of its own. A handler that never
// looks at its ctx (or only at TaskID or Deadline) costs no timer and no
// allocation beyond its delivery, which embeds this struct.
//
// After the handler returned, the worker ends it: the built context is
// cancelled, as a deferred cancel would; one built later (the handler kept
// ctx and looked at it afterwards) is born done, with context.Canceled if the
// handler returned before the deadline, else context.DeadlineExceeded.
//
// A context derived from it (context.WithCancel and friends, AfterFunc)
// finds the built context's own cancelCtx through Value, as with any
// standard context, so deriving starts no goroutine.
//
// One difference from context.WithTimeout: a handler that first looks at
// its ctx only after both its deadline passed and the runner's task
// context was cancelled (Stop out of time, a kill) sees context.Canceled
// where WithTimeout would say DeadlineExceeded, since the order of the two
// is not recorded.
type handlerCtx struct {
	parent   context.Context // Runner.taskCtx
	id       string
	deadline time.Time // start + Timeout, by the real clock

	built  atomic.Bool // inner and cancel are set
	mu     sync.Mutex  // serializes building and ending
	inner  context.Context
	cancel context.CancelFunc
	ended  bool // the handler returned; endedAt is when
	endAt  time.Time
}

// init prepares c for a handler starting now.
func (c *handlerCtx) init(parent context.Context, id string, now time.Time, timeout time.Duration) {
	c.parent, c.id, c.deadline = parent, id, now.Add(timeout)
}

// ctx returns the built context, building it on first use.
func (c *handlerCtx) ctx() context.Context {
	if c.built.Load() {
		return c.inner
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.built.Load() {
		return c.inner
	}
	base := context.WithValue(c.parent, taskIDKey{}, c.id)
	if c.ended && c.endAt.Before(c.deadline) {
		c.inner, c.cancel = context.WithCancel(base)
		c.cancel()
	} else {
		// Before the end, or ended past the deadline: a deadline in the
		// past gives a context that is done with DeadlineExceeded.
		c.inner, c.cancel = context.WithDeadline(base, c.deadline)
	}
	c.built.Store(true)
	return c.inner
}

// end is called once the handler returned, at now.
func (c *handlerCtx) end(now time.Time) {
	if !c.built.Load() {
		c.mu.Lock()
		if !c.built.Load() {
			c.ended, c.endAt = true, now
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
	}
	c.cancel()
}

// Deadline returns the task's deadline, or the parent's when that is
// earlier (as context.WithDeadline does), without building the context.
func (c *handlerCtx) Deadline() (time.Time, bool) {
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Done returns the built context's Done channel.
func (c *handlerCtx) Done() <-chan struct{} { return c.ctx().Done() }

// Err returns the built context's Err.
func (c *handlerCtx) Err() error { return c.ctx().Err() }

// Value returns the task's ID for TaskID, else the built context's value.
func (c *handlerCtx) Value(key any) any {
	if _, ok := key.(taskIDKey); ok {
		return c.id
	}
	return c.ctx().Value(key)
}

// String names the context, as the standard ones do.
func (c *handlerCtx) String() string { return "runner.handlerCtx(" + c.id + ")" }
