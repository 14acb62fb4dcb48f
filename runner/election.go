package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ErrElection wraps the errors the elector reports (on its onError channel),
// so an EventError from the election can be told from the runner's own.
var ErrElection = errors.New("election")

// watchElection is the spec's StartElection, minus the flag: it turns the
// elector's signals into events. Leadership itself (IsLeader, and the gate
// of every chore) is the elector's own decision, read from the elector, so
// an OnEvent hook that blocks here delays only the events, never a change
// of leadership. The elector delivers promote and demote in order, one at a
// time, coalescing what a slow hook fell behind on. It runs until the
// elector has stopped, so the demote of Stop is received too (and the
// elector releases the lease only after that).
func (r *Runner) watchElection() {
	defer close(r.electionDone)
	for {
		select {
		case at := <-r.promote:
			l := r.elector.Leadership()
			r.emit(Event{Kind: EventLeadership, Leader: true, At: at, Term: l.Term, Token: l.Token})
		case at := <-r.demote:
			r.emit(Event{Kind: EventLeadership, Leader: false, At: at})
		case err := <-r.electionErrs:
			r.fail(fmt.Errorf("%w: %w", ErrElection, err))
		case <-r.electorStopped:
			return
		}
	}
}

// stopElection stops the elector (which demotes and releases the lease
// unless the runner was killed) and the goroutine that watches it.
func (r *Runner) stopElection() error {
	err := r.elector.Stop()
	close(r.electorStopped)
	<-r.electionDone
	if err != nil {
		return fmt.Errorf("runner: stopping the elector: %w", err)
	}
	return nil
}

// errKilled is what the lease client answers once the runner was killed.
var errKilled = errors.New("runner killed: no more Redis traffic")

// leaseClient is the elector's view of Redis. Once Start's context is
// cancelled it refuses every script, so a killed runner's elector stops
// without releasing the lease: it must look like a crashed process, whose
// lease only expires.
type leaseClient struct {
	redis.Scripter
	r *Runner
}

func (c leaseClient) dead(ctx context.Context) *redis.Cmd {
	if c.r.ctx == nil || c.r.ctx.Err() == nil {
		return nil
	}
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(errKilled)
	return cmd
}

func (c leaseClient) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	if cmd := c.dead(ctx); cmd != nil {
		return cmd
	}
	return c.Scripter.Eval(ctx, script, keys, args...)
}

func (c leaseClient) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	if cmd := c.dead(ctx); cmd != nil {
		return cmd
	}
	return c.Scripter.EvalSha(ctx, sha1, keys, args...)
}

func (c leaseClient) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	if cmd := c.dead(ctx); cmd != nil {
		return cmd
	}
	return c.Scripter.EvalRO(ctx, script, keys, args...)
}

func (c leaseClient) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	if cmd := c.dead(ctx); cmd != nil {
		return cmd
	}
	return c.Scripter.EvalShaRO(ctx, sha1, keys, args...)
}
