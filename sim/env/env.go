// Package env provides what a real-time run needs from the outside world: a
// Redis the harness reaches directly and a Toxiproxy through which every
// instance's traffic flows. Providers: Embedded (a redis-server spawned on a
// free loopback port and Toxiproxy in-process, the default; or addresses of
// existing ones), External (a compose stack's services), Containers
// (testcontainers-go, images built locally). Each run gets its own
// Environment, and Close tears down everything a provider started.
package env

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/leaselab/leaselab/internal/redisserver"
)

// ToxiproxyVersion is the Toxiproxy the harness embeds and expects.
const ToxiproxyVersion = "2.12.0"

// ErrEnvironment marks errors of the environment (no redis-server, an
// unreachable Redis or Toxiproxy) as opposed to errors in the scenario.
var ErrEnvironment = errors.New("environment")

// Environment is what a run needs from the outside world: a Redis the
// harness reaches directly (for ground truth and Redis faults) and a
// Toxiproxy API through which every instance's traffic flows.
type Environment struct {
	// RedisAddr is the harness's unproxied address of Redis.
	RedisAddr string
	// ProxyUpstream is the address Toxiproxy dials to reach Redis. It
	// differs from RedisAddr when Toxiproxy runs in a container.
	ProxyUpstream string
	// Toxiproxy is the client of the Toxiproxy API. The in-process server is
	// driven through the same official client as an external one.
	Toxiproxy *toxiclient.Client
	// ProxyListen is the listen address asked for each new proxy.
	// Default "127.0.0.1:0" (a free port).
	ProxyListen func(instance int) string
	// DialAddr maps a proxy's listen address, as Toxiproxy reports it, to
	// the address an instance dials. Default: unchanged.
	DialAddr func(listen string) string
	// RestartRedis restarts Redis with an empty dataset; nil when the
	// provider cannot (an external Redis), which makes redis-restart
	// faults an error at validation.
	RestartRedis func(ctx context.Context) error
	// Topology is set when Redis is more than one server (redis:
	// replicated or cluster, from Spawned); nil for a single Redis.
	Topology *Topology
	// RedisVersion is the server's redis_version.
	RedisVersion string
	// Auth is how every connection to Redis authenticates (the harness's
	// and the instances'): the user's for a Redis given by address or
	// URL, a random password for a spawned redis-server.
	Auth Auth
	// Close tears down everything the provider started.
	Close func() error
}

// Provider sets up an Environment for one run. Each run gets its own, so
// runs can go in parallel.
type Provider interface {
	Environment(ctx context.Context) (*Environment, error)
}

// Embedded is the default provider: a redis-server the harness spawns itself
// (unless RedisAddr is given) and Toxiproxy in-process (unless ToxiproxyAddr
// is given). It needs nothing running beforehand, only a redis-server binary.
type Embedded struct {
	// RedisServer is the redis-server binary. Default: found on PATH.
	RedisServer string
	// RedisAddr is an existing Redis to use instead of spawning one.
	// Default: the address of LEASELAB_REDIS_URL, else LEASELAB_REDIS_ADDR,
	// else spawn.
	RedisAddr string
	// RedisAuth is how to authenticate to RedisAddr. Default: from
	// LEASELAB_REDIS_URL (go-redis's URL form, see ParseRedisURL) when
	// that gives the address, else the password in LEASELAB_REDIS_PASSWORD.
	RedisAuth Auth
	// ToxiproxyAddr is the API address of an external Toxiproxy (host:port).
	// Default: an in-process server on a free loopback port.
	ToxiproxyAddr string
}

// Environment starts what e names and returns it.
func (e Embedded) Environment(ctx context.Context) (env *Environment, err error) {
	var cs closers
	defer func() {
		if err != nil {
			_ = cs.close()
		}
	}()
	env = &Environment{}

	addr, auth := e.RedisAddr, e.RedisAuth
	if addr == "" {
		if u := os.Getenv("LEASELAB_REDIS_URL"); u != "" {
			if addr, auth, err = ParseRedisURL(u); err != nil {
				return nil, fmt.Errorf("%w: LEASELAB_REDIS_URL: %v", ErrEnvironment, err)
			}
		} else if addr = os.Getenv("LEASELAB_REDIS_ADDR"); addr != "" {
			auth.Password = os.Getenv("LEASELAB_REDIS_PASSWORD")
		}
	}
	if addr == "" {
		pw, err := randomPassword()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrEnvironment, err)
		}
		srv, err := redisserver.Start(ctx, redisserver.Options{Path: e.RedisServer, Password: pw})
		if err != nil {
			if errors.Is(err, redisserver.ErrNotInstalled) && e.RedisServer == "" {
				return nil, fmt.Errorf("%w: %v, or give a running Redis (--redis-addr, --redis-url)", ErrEnvironment, err)
			}
			return nil, fmt.Errorf("%w: %v", ErrEnvironment, err)
		}
		cs.add(func() error { srv.Stop(); return nil })
		addr, auth = srv.Addr, Auth{Password: pw}
		env.RedisVersion = srv.Version
		env.RestartRedis = srv.Restart
	}
	env.Auth = auth
	env.RedisAddr, env.ProxyUpstream = addr, addr

	if env.Toxiproxy, err = toxiproxyAt(e.ToxiproxyAddr, &cs); err != nil {
		return nil, err
	}
	if e.ToxiproxyAddr == "" {
		// The in-process proxies listen on this machine's loopback:
		// ports a refuse partition's heal can listen on again (ports.go).
		env.ProxyListen = ports.listen
	}
	env.Close = cs.close
	return env, nil
}

// closers is what an Environment must undo, in reverse order of setup.
type closers []func() error

func (cs *closers) add(f func() error) { *cs = append(*cs, f) }

func (cs closers) close() error {
	var errs []error
	for i := len(cs) - 1; i >= 0; i-- {
		errs = append(errs, cs[i]())
	}
	return errors.Join(errs...)
}

// toxiproxyAt returns a client of the Toxiproxy API at api (host:port), or
// of one started in-process when api is "" (its stop added to cs), once it
// answers.
func toxiproxyAt(api string, cs *closers) (*toxiclient.Client, error) {
	if api == "" {
		var stop func() error
		var err error
		if api, stop, err = startToxiproxy(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrEnvironment, err)
		}
		cs.add(stop)
	}
	c := toxiclient.NewClient(api)
	if _, err := c.Proxies(); err != nil {
		return nil, fmt.Errorf("%w: Toxiproxy API at %s: %v", ErrEnvironment, api, err)
	}
	return c, nil
}

// startToxiproxy runs the Toxiproxy v2.12.0 server in this process with its
// HTTP API on a free loopback port.
func startToxiproxy() (addr string, stop func() error, err error) {
	// Toxiproxy's bandwidth toxic logs through the global zerolog logger.
	zerolog.SetGlobalLevel(zerolog.Disabled)
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("listening for the Toxiproxy API: %w", err)
	}
	hs := &http.Server{Handler: srv.Routes(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { defer close(done); _ = hs.Serve(l) }()
	return l.Addr().String(), func() error {
		// Close every proxy's listener and connection, then the API.
		err := srv.Collection.Clear()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = errors.Join(err, hs.Shutdown(ctx))
		<-done
		return err
	}, nil
}
