// Package redistest gives a test a real Redis: a throwaway redis-server on a
// free loopback port (internal/redisserver), stopped at the test's cleanup, or
// the server named by LEASELAB_REDIS_ADDR. Spawned servers are never shared,
// so tests may run in parallel and flush, restart or break theirs.
package redistest

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/internal/redisserver"
)

// AddrEnv names an existing Redis to use instead of spawning one.
const AddrEnv = "LEASELAB_REDIS_ADDR"

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() {
	// go-redis logs every failed dial to stderr, and tests cut Redis off on purpose.
	redis.SetLogger(quiet{})
}

// Addr returns the address of a Redis for t: LEASELAB_REDIS_ADDR when set,
// otherwise a fresh redis-server (see Start).
func Addr(t testing.TB) string {
	t.Helper()
	if a := os.Getenv(AddrEnv); a != "" {
		return a
	}
	return Start(t).Addr
}

// Client returns a go-redis client for a new Addr(t), closed at cleanup.
func Client(t testing.TB) *redis.Client {
	t.Helper()
	return ClientAt(t, Addr(t))
}

// ClientAt returns a go-redis client for addr, closed at cleanup.
func ClientAt(t testing.TB, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Start spawns a redis-server owned by t and stops it at cleanup. It ignores
// LEASELAB_REDIS_ADDR: use it when the test restarts or kills the server.
// The test fails with a message naming both ways to get a Redis when no
// redis-server is installed.
func Start(t testing.TB) *redisserver.Server {
	t.Helper()
	s, err := redisserver.Start(context.Background(), redisserver.Options{Dir: t.TempDir()})
	if errors.Is(err, redisserver.ErrNotInstalled) {
		t.Fatalf("redistest: %v; or set %s=host:port to use a running Redis", err, AddrEnv)
	}
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}
