// Command redsync is a leaselab agent whose leader lease is
// github.com/go-redsync/redsync/v4 on one Redis (the Redlock algorithm
// with a quorum of one), used as its README shows: a Mutex with the TTL as
// its expiry, TryLock (one try: the follower's own loop tries once per
// Wait), Extend every TTL/2, Unlock on stop. The leader believes while
// extends succeed and the mutex's own validity (Until: the call's start +
// the expiry - a drift of 1 % of the expiry) lasts; the hello declares
// that margin (validity_margin_ms).
//
// The lock's value is the agent's hello id (WithGenValueFunc), so the
// harness can tell whose the key is. With SCOREBOARD_LIBRARY_VALUE=1 it
// leaves the value to redsync (a fresh random one per lock, Mutex.Value()
// after it: too late for the hello, which comes first).
//
//	cd examples/scoreboard && go build -o /tmp/redsync-agent ./redsync
//	chaos run leader-crash --backend process --agent /tmp/redsync-agent
package main

import (
	"context"
	"errors"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/leaselab/leaselab/examples/scoreboard/internal/leader"
)

func main() {
	cfg := leader.FromEnv()
	rdb := cfg.Client()
	id := leader.NewID()
	opts := []redsync.Option{redsync.WithExpiry(cfg.TTL), redsync.WithTries(1)}
	if !leader.LibraryValue() {
		opts = append(opts, redsync.WithGenValueFunc(func() (string, error) { return id, nil }))
	}
	m := redsync.New(goredis.NewPool(rdb)).NewMutex(cfg.Key, opts...)
	leader.Main("redsync", id, cfg, &lease{m: m, margin: time.Duration(float64(cfg.TTL) * driftFactor)})
}

// driftFactor is redsync's default (WithDriftFactor): Until is a call's
// start + expiry - expiry × driftFactor.
const driftFactor = 0.01

// lease is a redsync mutex. The loop calls one method at a time, as a
// Mutex needs.
type lease struct {
	m      *redsync.Mutex
	margin time.Duration
}

// taken maps redsync's "someone else holds it" errors to leader.ErrTaken.
func taken(err error) error {
	var t *redsync.ErrTaken
	var n *redsync.ErrNodeTaken
	if errors.Is(err, redsync.ErrFailed) || errors.Is(err, redsync.ErrExtendFailed) ||
		errors.As(err, &t) || errors.As(err, &n) {
		return leader.ErrTaken
	}
	return err
}

func (l *lease) Acquire(ctx context.Context) error { return taken(l.m.TryLockContext(ctx)) }

func (l *lease) Renew(ctx context.Context) error {
	ok, err := l.m.ExtendContext(ctx)
	if err == nil && !ok {
		return leader.ErrTaken
	}
	return taken(err)
}

func (l *lease) Release(ctx context.Context) error {
	if l.m.Value() == "" {
		return nil
	}
	_, err := l.m.UnlockContext(ctx)
	if errors.Is(err, redsync.ErrLockAlreadyExpired) {
		return leader.ErrTaken
	}
	return taken(err)
}

func (l *lease) ValidUntil() time.Time { return l.m.Until() }

func (l *lease) ValidityMargin() time.Duration { return l.margin }
