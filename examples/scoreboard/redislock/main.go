// Command redislock is a leaselab agent whose leader lease is
// github.com/bsm/redislock, used as its README shows: Obtain with a TTL
// (no retry strategy: the follower's own loop tries once per Wait),
// Refresh every TTL/2, believe while refreshes succeed, Release on stop.
//
// The lock's value is the agent's hello id, given as Options.Token, so the
// harness can tell whose the key is. With SCOREBOARD_LIBRARY_VALUE=1 it
// leaves the token to redislock (a fresh random one per Obtain, known only
// after it, as Lock.Token(): too late for the hello, which comes first).
//
//	cd examples/scoreboard && go build -o /tmp/redislock-agent ./redislock
//	chaos run leader-crash --backend process --agent /tmp/redislock-agent
package main

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/bsm/redislock"

	"github.com/leaselab/leaselab/examples/scoreboard/internal/leader"
)

func main() {
	cfg := leader.FromEnv()
	rdb := cfg.Client()
	id := leader.NewID()
	l := &lease{client: redislock.New(rdb), key: cfg.Key, ttl: cfg.TTL}
	if !leader.LibraryValue() {
		l.token = id
	}
	leader.Main("redislock", id, cfg, l)
}

// lease is a redislock lock on one key.
type lease struct {
	client *redislock.Client
	key    string
	ttl    time.Duration
	token  string // "": redislock's own random token

	mu   sync.Mutex
	lock *redislock.Lock // the last lock obtained
}

func (l *lease) Acquire(ctx context.Context) error {
	lock, err := l.client.Obtain(ctx, l.key, l.ttl, &redislock.Options{Token: l.token})
	if errors.Is(err, redislock.ErrNotObtained) {
		return leader.ErrTaken
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.lock = lock
	l.mu.Unlock()
	return nil
}

func (l *lease) held() *redislock.Lock {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lock
}

func (l *lease) Renew(ctx context.Context) error {
	err := l.held().Refresh(ctx, l.ttl, nil)
	if errors.Is(err, redislock.ErrNotObtained) {
		return leader.ErrTaken
	}
	return err
}

func (l *lease) Release(ctx context.Context) error {
	lock := l.held()
	if lock == nil {
		return nil
	}
	err := lock.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return leader.ErrTaken
	}
	return err
}

// ValidUntil is zero: redislock counts no validity of its own (Lock.TTL
// asks Redis).
func (l *lease) ValidUntil() time.Time { return time.Time{} }

// ValidityMargin is 0: redislock counts no validity.
func (l *lease) ValidityMargin() time.Duration { return 0 }
