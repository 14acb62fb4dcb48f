// Package leader is the leader loop the scoreboard's library agents share:
// a follower tries the library's lock once per Wait, a leader refreshes it
// every TTL/2 and believes while refreshes succeed (and, for a library that
// tracks one, while its own validity lasts), and a graceful stop steps
// down and releases. Only the Lease behind it differs per library, so that
// a difference on the scoreboard is the library's, not the loop's.
package leader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/agent"
)

// ErrTaken is what a Lease returns when another value holds the lock:
// not an error of the election, only a lost race or a live leader.
var ErrTaken = errors.New("lease held by another value")

// Lease is one library's lock used as a leader lease, on one key and one
// value.
type Lease interface {
	// Acquire tries once to take the lock; ErrTaken when another holds it.
	Acquire(ctx context.Context) error
	// Renew extends the held lock by its TTL; ErrTaken when the key no
	// longer holds this lease's value.
	Renew(ctx context.Context) error
	// Release deletes the key if it still holds this lease's value.
	Release(ctx context.Context) error
	// ValidUntil is the end of the lock's validity as the library itself
	// counts it (zero: the library counts none). A leader whose renewal
	// has not returned by then steps down.
	ValidUntil() time.Time
	// ValidityMargin is how long before the end of its TTL, counted from a
	// call's send, the library's validity ends (0: it counts none). The
	// hello declares it (validity_margin_ms), so that the harness predicts
	// a leader that steps down there.
	ValidityMargin() time.Duration
}

// Config is what the harness gives an agent, read from its environment.
type Config struct {
	Key       string        // LEASELAB_KEY: the lock's Redis key
	TTL, Wait time.Duration // LEASELAB_TTL_MS, LEASELAB_WAIT_MS
	Redis     *redis.Options
	// Nodes, with redis: cluster, are the cluster's nodes and this
	// instance's proxy to each (LEASELAB_REDIS_NODES); nil otherwise.
	Nodes map[string]string
}

// Client is the client the lease uses: a ClusterClient through the
// instance's proxies with redis: cluster, else one on LEASELAB_REDIS_ADDR;
// both with Redis's options.
func (c Config) Client() redis.UniversalClient {
	if c.Nodes != nil {
		return agent.NewClusterClient(c.Redis, c.Nodes, nil)
	}
	return redis.NewClient(c.Redis)
}

// FromEnv reads the harness's variables (docs/agents.md). The client's read
// timeout is the scenario's (LEASELAB_READ_TIMEOUT_MS; 0 there is no
// timeout, go-redis's -1); everything else is go-redis's default.
func FromEnv() Config {
	db, _ := strconv.Atoi(os.Getenv("LEASELAB_REDIS_DB"))
	nodes, err := agent.ClusterNodes(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rt := ms("LEASELAB_READ_TIMEOUT_MS", 0)
	if os.Getenv("LEASELAB_READ_TIMEOUT_MS") == "0" {
		rt = -1
	}
	return Config{
		Key:  os.Getenv("LEASELAB_KEY"),
		TTL:  ms("LEASELAB_TTL_MS", 5*time.Second),
		Wait: ms("LEASELAB_WAIT_MS", 6*time.Second),
		Redis: &redis.Options{
			Addr:        os.Getenv("LEASELAB_REDIS_ADDR"),
			Username:    os.Getenv("LEASELAB_REDIS_USERNAME"),
			Password:    os.Getenv("LEASELAB_REDIS_PASSWORD"),
			DB:          db,
			ReadTimeout: rt,
		},
		Nodes: nodes,
	}
}

// ms reads a duration in (possibly fractional) milliseconds.
func ms(name string, def time.Duration) time.Duration {
	f, err := strconv.ParseFloat(os.Getenv(name), 64)
	if err != nil {
		return def
	}
	return time.Duration(f * float64(time.Millisecond))
}

// NewID is a fresh random lease value for this process: 128 bits, hex.
func NewID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}

// LibraryValue reports whether the agent should leave the lock's value to
// the library (SCOREBOARD_LIBRARY_VALUE=1): its own random value per lock,
// which the hello cannot announce, to show what the harness then reports.
func LibraryValue() bool { return os.Getenv("SCOREBOARD_LIBRARY_VALUE") == "1" }

// Main runs an agent named name: it says hello with id (the value the
// lease writes), runs the loop until SIGTERM or the stop command (a
// graceful stop) or until the harness is gone (stdin ended: at once), and
// exits. The hello declares cfg.Redis's client and that it follows a
// Redis Cluster (cfg.Client).
func Main(name, id string, cfg Config, l Lease) {
	if err := run(name, id, cfg, l); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

func run(name, id string, cfg Config, l Lease) error {
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	client := agent.GoRedisClient(cfg.Redis, 0)
	client.ValidityMarginMS = float64(l.ValidityMargin()) / float64(time.Millisecond)
	ag := agent.New(agent.Options{Name: name, OnStop: cancel, Client: client, Cluster: true})
	if err := ag.Hello(id, cfg.Key); err != nil {
		return fmt.Errorf("saying hello: %w", err)
	}
	go func() { // the harness is gone: exit at once
		<-ag.Gone()
		os.Exit(0)
	}()
	loop(ctx, cfg, l, ag)
	// A graceful stop: loop has stepped down; release, say stopped.
	rctx, rcancel := context.WithTimeout(context.Background(), cfg.TTL)
	defer rcancel()
	if err := l.Release(rctx); err != nil && !errors.Is(err, ErrTaken) {
		fmt.Fprintln(os.Stderr, name+": releasing:", err)
	}
	ag.Stopped()
	return ag.Err()
}

// loop runs the election until ctx ends, leaving it a follower (a leader
// says demoted "stop" first).
func loop(ctx context.Context, cfg Config, l Lease, ag *agent.Agent) {
	var term uint64
	for {
		err := l.Acquire(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			term++
			ag.Promoted(term, 0)
			if !lead(ctx, cfg, l, ag) {
				return
			}
		} else if !errors.Is(err, ErrTaken) {
			ag.Error(fmt.Errorf("acquiring: %w", err))
		}
		// The next attempt comes Wait after this one's reply (or the
		// demotion), as the spec's follower does.
		select {
		case <-ctx.Done():
			return
		case <-time.After(cfg.Wait):
		}
	}
}

// lead refreshes the lease TTL/2 after the last call's reply (the spec's
// cadence) until a refresh fails, the
// library's validity runs out first, or ctx ends (a stop: false, after
// demoted "stop"). It returns true after a demotion the agent survives.
func lead(ctx context.Context, cfg Config, l Lease, ag *agent.Agent) bool {
	for {
		// The validity counts from the last call's send, so a slow reply
		// can leave it ending before the next refresh: it is watched
		// while the leader waits too, as the hello's validity_margin_ms
		// promises.
		expired, stop := validity(l)
		select {
		case <-ctx.Done():
			stop()
			ag.Stopping()
			ag.Demoted(agent.ReasonStop)
			return false
		case <-expired:
			ag.Demoted(agent.ReasonLost)
			return ctx.Err() == nil
		case <-time.After(cfg.TTL / 2):
		}
		stop()
		done := make(chan error, 1)
		go func() { done <- l.Renew(ctx) }()
		expired, stop = validity(l)
		select {
		case err := <-done:
			stop()
			switch {
			case err == nil:
				continue
			case errors.Is(err, ErrTaken):
				ag.Demoted(agent.ReasonLost)
			case ctx.Err() != nil:
				ag.Stopping()
				ag.Demoted(agent.ReasonStop)
				return false
			default:
				ag.Error(fmt.Errorf("refreshing: %w", err))
				ag.Demoted(agent.ReasonError)
			}
			return true
		case <-expired:
			// The library says the lock may be gone: stop acting, then let
			// the refresh in flight end before the lease is used again.
			ag.Demoted(agent.ReasonLost)
			<-done
			return ctx.Err() == nil
		}
	}
}

// validity is a channel that fires when the lease's own validity ends, and
// a stop for its timer; a lease that counts none never fires.
func validity(l Lease) (<-chan time.Time, func() bool) {
	until := l.ValidUntil()
	if until.IsZero() {
		return nil, func() bool { return false }
	}
	t := time.NewTimer(time.Until(until))
	return t.C, t.Stop
}
