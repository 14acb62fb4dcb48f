package rediscluster

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/redis/go-redis/v9"
)

// RequireEnv, set to 1, turns the skip of a test that cannot start a
// cluster or a replicated pair (no redis-cli, no cluster support) into a
// failure. CI sets it: there the tests must run.
const RequireEnv = "LEASELAB_REQUIRE_CLUSTER"

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() {
	// go-redis logs every failed dial; the tests kill nodes on purpose.
	redis.SetLogger(quiet{})
}

// skipOrFail skips t when err says the topology cannot exist here, unless
// RequireEnv is set; any other error fails t.
func skipOrFail(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrNotInstalled) || errors.Is(err, ErrNoCluster) {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("%v (%s=1: required)", err, RequireEnv)
		}
		t.Skipf("skipping: %v (set %s=1 to fail instead)", err, RequireEnv)
	}
	t.Fatal(err)
}

// New starts a Cluster for t and stops it at t's cleanup. It skips t (with
// the reason) when redis-server, redis-cli or cluster support is missing,
// unless LEASELAB_REQUIRE_CLUSTER=1.
func New(t testing.TB, o Options) *Cluster {
	t.Helper()
	c, err := Start(context.Background(), o)
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(c.Stop)
	return c
}

// NewReplicated starts a Replicated for t and stops it at t's cleanup, with
// New's skip rule.
func NewReplicated(t testing.TB, o ReplicatedOptions) *Replicated {
	t.Helper()
	r, err := StartReplicated(context.Background(), o)
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(r.Stop)
	return r
}

// NeedTools skips t where no replicated pair or cluster can be spawned
// (no redis-cli), unless RequireEnv makes that a failure.
func NeedTools(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("redis-cli"); err != nil {
		if os.Getenv(RequireEnv) == "1" {
			t.Fatalf("redis-cli not found (%s=1: required)", RequireEnv)
		}
		t.Skipf("skipping: redis-cli not found (set %s=1 to fail instead)", RequireEnv)
	}
}
