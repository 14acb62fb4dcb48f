package agent

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
)

// Service is what RunElector tells the service as its elector's signals
// arrive. Each func is optional and runs on RunElector's goroutine, as the
// service's own reads of the elector's channels would: a slow one delays
// the next signal.
type Service struct {
	// Promoted: the service leads from now (the harness has been told).
	Promoted func()
	// Demoted: the service no longer leads (the harness is told next).
	Demoted func()
	// Error is an election error, already reported to the harness.
	Error func(err error)
}

// RunElector runs the service's elector as this agent, the loop a Go
// service built on election needs: it makes an elector of eo (whose
// demotions' reasons Transition notes before eo.OnTransition is called),
// reports its signals (Elector), says hello with its id and key, starts it
// and passes its signals on to s until the harness is gone — then it
// returns nil at once, the elector left running for the process to exit
// (nothing is stopped gracefully for a harness that is gone) — or ctx ends
// (SIGTERM, or the stop command's OnStop cancelling it). Then it stops
// gracefully: Stopping, the elector's Stop (its signals still read, so the
// elector is never blocked on them), Stopped; Stop's error is returned as
// a *StopError. An error saying hello is returned before the elector
// starts.
func (a *Agent) RunElector(ctx context.Context, eo election.Opts, s Service) error {
	hook := eo.OnTransition
	eo.OnTransition = func(t election.Transition) {
		a.Transition(t)
		if hook != nil {
			hook(t)
		}
	}
	if a.o.Client == nil {
		// The elector's client is the service's: declare it, so that the
		// harness predicts from what it does.
		if c, ok := eo.Redis.(interface{ Options() *redis.Options }); ok {
			a.o.Client = GoRedisClient(c.Options(), eo.OpTimeout)
		}
	}
	e, promote, demote, errs := election.NewElector(eo)
	promote, demote, errs = a.Elector(e, promote, demote, errs)
	if err := a.Hello(e.ID(), e.Key()); err != nil {
		_ = e.Stop() // never started: only marks it done
		return err
	}
	e.Start()
	call := func(f func()) {
		if f != nil {
			f()
		}
	}
	// One loop before and during the graceful stop: stopped is nil (never
	// ready) until ctx ends, and the signals are read throughout, so the
	// elector is never blocked on them while it stops.
	var stopped chan error
	done, gone := ctx.Done(), a.Gone()
	// leading: the service was told promoted and not yet demoted. The
	// stop's own demote signal can lose the race with the stop's end (the
	// elector is done, and the tee gives up on it; CI saw a service never
	// told demoted), so the stop's end tells it then.
	leading := false
	for {
		select {
		case <-promote:
			leading = true
			call(s.Promoted)
		case <-demote:
			leading = false
			call(s.Demoted)
		case err := <-errs:
			if s.Error != nil {
				s.Error(err)
			}
		case <-gone:
			if stopped == nil {
				return nil
			}
			gone = nil // stopping already: finish the stop
		case <-done:
			done = nil
			a.Stopping()
			stopped = make(chan error, 1)
			go func() { stopped <- e.Stop() }()
		case err := <-stopped:
			if leading {
				call(s.Demoted)
			}
			a.Stopped()
			if err != nil {
				return &StopError{Err: err}
			}
			return nil
		}
	}
}

// StopError is RunElector's error from the elector's graceful Stop: the
// agent said stopped, but the lease may not have been released.
type StopError struct{ Err error }

func (e *StopError) Error() string { return "agent: stopping the elector: " + e.Err.Error() }

// Unwrap returns the elector's Stop error.
func (e *StopError) Unwrap() error { return e.Err }
