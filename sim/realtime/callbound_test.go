package realtime

import (
	"github.com/leaselab/leaselab/model/bounds"

	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/stallmeter"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/env/envtest"
	"github.com/leaselab/leaselab/sim/faulty"
)

// callSlack is what a measured call may exceed its CallBound by: a few
// proxy hops and loopback round trips, timer and scheduling latency under
// -race with the subtests in parallel on two cores.
const callSlack = 50 * time.Millisecond

// callRuns is how many calls each (setting, mode) pair measures.
const callRuns = 3

// gatedOptions are RedisOptions through a Gate, as an in-process instance
// dials.
func gatedOptions(p model.ClientParams, addr string) *redis.Options {
	o := RedisOptions(p, addr)
	o.Dialer = faulty.NewGate().Dialer(addr)
	return o
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// TestCallBoundMeasured measures one renewal (the renew script's EVALSHA,
// as the elector sends it) under each partition mode, through the harness's
// own pieces: a real redis-server and in-process Toxiproxy (Embedded), a
// proxy per client, the client options and Gate of RedisOptions, and the
// partition applied by run.partition. Each duration must lie within
// [callMin, CallBound + callSlack] of the mode ModeOf maps it to, a
// renewal must apply in Redis exactly when its requests get through, and
// with replies dropped the demoted client's acquire must not apply.
func TestCallBoundMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("measures real calls against redis-server (~5 s)")
	}
	redis.SetLogger(quietLogger{}) // every refused dial would be logged
	environ := envtest.Embedded(t)
	admin := redis.NewClient(environ.Auth.Apply(&redis.Options{Addr: environ.RedisAddr, MaxRetries: -1}))
	t.Cleanup(func() { _ = admin.Close() })

	const ms = time.Millisecond
	settings := []struct {
		name string
		p    model.Params
	}{
		{"rt300", model.Params{Client: model.ClientParams{ReadTimeout: 300 * ms}}},
		{"rt300-noretry", model.Params{Client: model.ClientParams{ReadTimeout: 300 * ms, MaxRetries: -1}}},
		{"rt300-ctx450", model.Params{OpTimeout: 450 * ms, Client: model.ClientParams{ReadTimeout: 300 * ms, ContextTimeoutEnabled: true}}},
	}
	var (
		mu    sync.Mutex
		table []string
	)
	t.Cleanup(func() {
		slices.Sort(table)
		t.Logf("measured vs predicted (%d calls each):\n%s", callRuns, strings.Join(table, "\n"))
	})
	t.Run("group", func(t *testing.T) {
		for _, s := range settings {
			for _, partition := range model.PartitionModes {
				t.Run(s.name+"/"+partition, func(t *testing.T) {
					t.Parallel()
					p := s.p.WithDefaults()
					mode := model.ModeOf(model.FaultPartition, partition)
					lo, hi, loF, hiF := bounds.CallRange(p, mode)
					var got []time.Duration
					var stalled time.Duration
					for i := range callRuns {
						key := fmt.Sprintf("leaselab-callbound-%s-%s-%d", s.name, partition, i)
						d, stall, applied := measureRenew(t, environ, admin, p, partition, key)
						got = append(got, d)
						stalled = max(stalled, stall)
						if want := partition == model.PartitionBlackholeReplies; applied != want {
							t.Errorf("run %d: renewal applied in Redis = %v, want %v", i, applied, want)
						}
						if d < lo || !bounds.Within(d, hi, callSlack+stall) {
							t.Errorf("run %d: %v outside [%v, %v + %v + stalled %v]\n  min: %s\n  max: %s",
								i, d, lo, hi, callSlack, stall, loF, hiF)
						}
					}
					line := fmt.Sprintf("  %-14s %-19s measured %v-%v  predicted [%v, %v]  (max stall %v)",
						s.name, partition, slices.Min(got).Round(ms), slices.Max(got).Round(ms), lo, hi, stalled.Round(ms))
					t.Log(line)
					mu.Lock()
					table = append(table, line)
					mu.Unlock()
				})
			}
		}
	})
}

// measureRenew makes a client the way an instance does, takes the lease
// and renews it once healthy (so the script is loaded and the pool holds
// one initialized connection, as a leader's does), partitions it, and times
// one renewal, and how long the process was stalled meanwhile. applied
// says whether that renewal reached Redis: the lease is renewed for a
// minute, after the harness cut it to ten seconds.
func measureRenew(t *testing.T, environ *env.Environment, admin *redis.Client, p model.Params, partition, key string) (d, stall time.Duration, applied bool) {
	t.Helper()
	ctx := context.Background()
	const ttl, cut = time.Minute, 10 * time.Second
	proxy, err := environ.Toxiproxy.CreateProxy(key, "127.0.0.1:0", environ.ProxyUpstream)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proxy.Delete() }()
	rdb := redis.NewClient(environ.Auth.Apply(gatedOptions(p.Client, proxy.Listen)))
	defer func() { _ = rdb.Close() }()
	lease := election.LeaderKey(key)
	if err := admin.Del(ctx, lease).Err(); err != nil {
		t.Fatal(err)
	}
	for _, op := range []election.Op{election.OpAcquire, election.OpRenew} {
		if ok, err := election.RunOp(ctx, rdb, op, lease, "me", ttl); !ok || err != nil {
			t.Fatalf("healthy %v: %v %v", op, ok, err)
		}
	}
	if err := admin.PExpire(ctx, lease, cut).Err(); err != nil {
		t.Fatal(err)
	}

	fw := &faultWorld{proxies: [][]*toxiclient.Proxy{{proxy}}}
	if err := fw.Partition(0, 0, partition, true); err != nil {
		t.Fatal(err)
	}
	meter := stallmeter.Start()
	start := time.Now()
	opCtx, cancel := ctx, context.CancelFunc(func() {})
	if p.OpTimeout > 0 {
		opCtx, cancel = context.WithTimeout(ctx, p.OpTimeout) // as the elector does
	}
	ok, err := election.RunOp(opCtx, rdb, election.OpRenew, lease, "me", ttl)
	d = time.Since(start)
	stall = meter.Stop()
	cancel()
	if err == nil {
		t.Errorf("renewal through a %s partition returned %v, no error", partition, ok)
	}
	left, err := admin.PTTL(ctx, lease).Result()
	if err != nil {
		t.Fatal(err)
	}
	if partition == model.PartitionBlackholeReplies {
		noPhantom(t, admin, rdb, p, lease)
	}
	if err := fw.Partition(0, 0, partition, false); err != nil {
		t.Fatalf("healing: %v", err)
	}
	return d, stall, left > cut
}

// noPhantom checks predictReplies' claim that a bare elector, demoted by a
// renewal whose replies were dropped, cannot leave a phantom lease through
// the same partition: its client has no initialized connection left, and a
// new one's HELLO times out before the acquire's SET NX is written.
func noPhantom(t *testing.T, admin, rdb *redis.Client, p model.Params, lease string) {
	t.Helper()
	ctx := context.Background()
	if err := admin.Del(ctx, lease).Err(); err != nil {
		t.Fatal(err)
	}
	opCtx, cancel := ctx, context.CancelFunc(func() {})
	if p.OpTimeout > 0 {
		opCtx, cancel = context.WithTimeout(ctx, p.OpTimeout)
	}
	defer cancel()
	if ok, err := election.RunOp(opCtx, rdb, election.OpAcquire, lease, "me", time.Minute); ok || err == nil {
		t.Errorf("acquire through the partition: %v %v, want a failure", ok, err)
	}
	if n, err := admin.Exists(ctx, lease).Result(); err != nil || n != 0 {
		t.Errorf("the demoted leader's acquire applied (a phantom lease): exists %d %v", n, err)
	}
}

// TestLeaseLossRenewMeasured checks predictLeaseLoss's model of the first
// renewal after a Redis restart (its own Redis: a restart would disturb
// TestCallBoundMeasured): the pool's health check finds the connection the
// restart closed and dials a new one, so the renewal returns 0 (the key is
// gone) with no error and no backoff, with or without retries; the bound
// counts the slower case (a close not yet seen: EOF, then the retry after
// backoff(1)), so the renewal takes at most that. It also times the
// restart, the downtime D the run must report from above.
func TestLeaseLossRenewMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a redis-server")
	}
	redis.SetLogger(quietLogger{})
	ctx := context.Background()
	environ := envtest.Embedded(t)
	if environ.RestartRedis == nil {
		t.Skip("this environment cannot restart Redis")
	}
	const ms = time.Millisecond
	for _, c := range []model.ClientParams{{ReadTimeout: 300 * ms}, {ReadTimeout: 300 * ms, MaxRetries: -1}} {
		p := model.Params{Client: c}.WithDefaults()
		key := fmt.Sprintf("leaselab-leaseloss-%d", c.MaxRetries)
		proxy, err := environ.Toxiproxy.CreateProxy(key, "127.0.0.1:0", environ.ProxyUpstream)
		if err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(environ.Auth.Apply(gatedOptions(p.Client, proxy.Listen)))
		lease := election.LeaderKey(key)
		for _, op := range []election.Op{election.OpAcquire, election.OpRenew} {
			if ok, err := election.RunOp(ctx, rdb, op, lease, "me", time.Minute); !ok || err != nil {
				t.Fatalf("healthy %v: %v %v", op, ok, err)
			}
		}
		start := time.Now()
		if err := environ.RestartRedis(ctx); err != nil {
			t.Fatal(err)
		}
		downtime := time.Since(start)
		meter := stallmeter.Start()
		start = time.Now()
		ok, err := election.RunOp(ctx, rdb, election.OpRenew, lease, "me", time.Minute)
		d, stall := time.Since(start), meter.Stop()
		retries := max(p.Client.MaxRetries, 0)
		var lo, hi time.Duration // the slower case's backoff(1), or nothing
		if retries > 0 {
			lo, hi = bounds.RetryBackoff(1)
		}
		t.Logf("MaxRetries %d: restart took %v; renewal after it: %v %v in %v, the bound's slower case [%v, %v] (stall %v)",
			c.MaxRetries, downtime.Round(ms), ok, err, d.Round(100*time.Microsecond), lo, hi, stall.Round(ms))
		if ok || err != nil {
			t.Errorf("renewal after the restart: %v %v, want 0 and no error (the health check dialled anew)", ok, err)
		}
		if !bounds.Within(d, hi, callSlack+stall) {
			t.Errorf("renewal after the restart took %v, over the bound's %v + %v + stalled %v", d, hi, callSlack, stall)
		}
		_ = rdb.Close()
		_ = proxy.Delete()
	}
}
