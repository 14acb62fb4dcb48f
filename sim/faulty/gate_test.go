package faulty

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/env/envtest"
	"github.com/leaselab/leaselab/sim/realtime"
)

// TestGateConnIsHealthChecked: go-redis's pool health-checks an idle
// connection through the Gate as it does a plain TCP connection, so one the
// proxy closed (a refuse partition, a Redis restart) is dropped and a new one
// dialed, not sent on. Without retries that is the difference between the
// next command succeeding and failing with the closed connection's EOF; it
// was a whole dial round per refused renewal in-process that an agent
// process, dialing directly, did not skip (issue 24's calibration).
func TestGateConnIsHealthChecked(t *testing.T) {
	if testing.Short() {
		t.Skip("needs redis-server")
	}
	ctx := context.Background()
	environ := envtest.Embedded(t)
	proxy, err := environ.Toxiproxy.CreateProxy("leaselab-gate-healthcheck", "127.0.0.1:0", environ.ProxyUpstream)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Delete() })
	// One connection, no retries: a command sent on a closed connection
	// fails outright.
	opts := realtime.RedisOptions(model.ClientParams{MaxRetries: -1, PoolSize: 1}, proxy.Listen)
	opts.Dialer = NewGate().Dialer(proxy.Listen)
	rdb := redis.NewClient(environ.Auth.Apply(opts))
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("healthy ping: %v", err)
	}
	// Disabling the proxy closes its connections; enabling it again lets
	// new ones through. The pooled connection stays closed.
	if err := proxy.Disable(); err != nil {
		t.Fatal(err)
	}
	if err := proxy.Enable(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Errorf("ping after the proxy closed the pooled connection: %v; want the health check to drop it and dial anew", err)
	}
}
