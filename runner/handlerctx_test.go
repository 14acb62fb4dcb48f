package runner

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

type otherKey struct{}

// newHandlerCtx returns a handlerCtx started now with timeout, under parent.
func newHandlerCtx(parent context.Context, timeout time.Duration) *handlerCtx {
	c := &handlerCtx{}
	c.init(parent, "task-1", time.Now(), timeout)
	return c
}

// A handlerCtx behaves as the context.WithTimeout it stands for.
func TestHandlerCtx(t *testing.T) {
	parent := context.WithValue(context.Background(), otherKey{}, "v")

	t.Run("TaskID and Deadline build nothing", func(t *testing.T) {
		c := newHandlerCtx(parent, time.Minute)
		if TaskID(c) != "task-1" {
			t.Errorf("TaskID %q", TaskID(c))
		}
		if d, ok := c.Deadline(); !ok || d != c.deadline {
			t.Errorf("Deadline %v %v, want %v", d, ok, c.deadline)
		}
		if c.built.Load() {
			t.Error("built")
		}
		c.end(time.Now())
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err after end: %v, want Canceled", err)
		}
		<-c.Done()
	})

	t.Run("times out", func(t *testing.T) {
		c := newHandlerCtx(parent, 10*time.Millisecond)
		if c.Err() != nil {
			t.Fatalf("Err %v before the deadline", c.Err())
		}
		<-c.Done()
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err %v, want DeadlineExceeded", err)
		}
		c.end(time.Now())
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err after end %v, want DeadlineExceeded still", err)
		}
	})

	t.Run("past its deadline when first asked", func(t *testing.T) {
		c := &handlerCtx{}
		c.init(parent, "task-1", time.Now().Add(-time.Second), time.Millisecond)
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err %v, want DeadlineExceeded", err)
		}
	})

	t.Run("ended past its deadline, asked after", func(t *testing.T) {
		c := &handlerCtx{}
		c.init(parent, "task-1", time.Now().Add(-time.Second), time.Millisecond)
		c.end(time.Now())
		if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Err %v, want DeadlineExceeded", err)
		}
	})

	t.Run("end cancels what was built and what derives from it", func(t *testing.T) {
		c := newHandlerCtx(parent, time.Minute)
		child, cancel := context.WithCancel(c)
		defer cancel()
		fired := make(chan struct{})
		stop := context.AfterFunc(c, func() { close(fired) })
		defer stop()
		if child.Value(otherKey{}) != "v" || TaskID(child) != "task-1" {
			t.Errorf("child values %v %q", child.Value(otherKey{}), TaskID(child))
		}
		c.end(time.Now())
		<-child.Done()
		<-fired
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err %v, want Canceled", err)
		}
	})

	t.Run("deriving starts no goroutine", func(t *testing.T) {
		c := newHandlerCtx(parent, time.Minute)
		before := runtime.NumGoroutine()
		var children []context.Context
		for range 100 {
			child, cancel := context.WithCancel(c)
			defer cancel()
			children = append(children, child)
		}
		if n := runtime.NumGoroutine(); n >= before+50 {
			t.Errorf("%d goroutines after deriving 100 contexts, %d before", n, before)
		}
		c.end(time.Now())
		for _, child := range children {
			<-child.Done()
		}
	})

	t.Run("parent cancelled", func(t *testing.T) {
		p, cancel := context.WithCancel(parent)
		c := newHandlerCtx(p, time.Minute)
		done := c.Done()
		cancel()
		<-done
		if err := c.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("Err %v, want Canceled", err)
		}
		if context.Cause(c) != context.Canceled {
			t.Errorf("Cause %v", context.Cause(c))
		}
	})

	t.Run("the parent's earlier deadline", func(t *testing.T) {
		p, cancel := context.WithTimeout(parent, time.Second)
		defer cancel()
		c := newHandlerCtx(p, time.Minute)
		pd, _ := p.Deadline()
		if d, _ := c.Deadline(); d != pd {
			t.Errorf("Deadline %v, want the parent's %v", d, pd)
		}
		if d, _ := c.ctx().Deadline(); d != pd {
			t.Errorf("built Deadline %v, want the parent's %v", d, pd)
		}
	})

	t.Run("concurrent use", func(t *testing.T) {
		c := newHandlerCtx(parent, time.Minute)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				<-c.Done()
				if c.Err() == nil {
					t.Error("Err nil once Done is closed")
				}
			})
		}
		c.end(time.Now())
		wg.Wait()
	})
}
