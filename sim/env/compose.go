package env

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
)

// SizedProvider is a Provider that needs the run's instance count to set up
// its Environment: one that publishes one port per proxy (a container's)
// or reserves them from a fixed range (a compose stack's). Run uses
// EnvironmentFor when its provider has it.
type SizedProvider interface {
	Provider
	EnvironmentFor(ctx context.Context, instances int) (*Environment, error)
}

// For sets up p's Environment for a run of n instances.
func For(ctx context.Context, p Provider, n int) (*Environment, error) {
	if sp, ok := p.(SizedProvider); ok {
		return sp.EnvironmentFor(ctx, n)
	}
	return p.Environment(ctx)
}

// External is the provider for a Redis and a Toxiproxy that someone else
// runs, typically the docker-compose.yml stack: Toxiproxy then lives in a
// container, so the proxies it opens listen inside that container, and it
// reaches Redis by a name only the container network knows.
//
// With ProxyPorts set, the proxy of instance i listens on ProxyListenHost
// and a port of the range, and the instance dials ProxyHost at the same port
// number: the range must be published on the host at the same numbers (the
// compose file does so). Without it, Toxiproxy is taken to run on this host
// and picks a free loopback port for each proxy, as in Embedded.
//
// Redis is the user's: redis-restart faults are refused.
type External struct {
	// RedisAddr is Redis as the harness reaches it (ground truth, Redis
	// faults). Required.
	RedisAddr string
	// ToxiproxyAddr is the Toxiproxy API (host:port). Required.
	ToxiproxyAddr string
	// RedisAuth is how to authenticate to Redis (both addresses).
	RedisAuth Auth
	// ProxyUpstream is Redis as Toxiproxy reaches it, e.g. "redis:6379" on
	// a compose network. Default RedisAddr.
	ProxyUpstream string
	// ProxyPorts is the range of published ports the proxies listen on.
	// Zero: a free port on Toxiproxy's loopback, which only this host can
	// dial.
	ProxyPorts PortRange
	// ProxyListenHost is the address the proxies listen on, inside
	// Toxiproxy's container. Default "0.0.0.0" (every interface, so the
	// published ports reach them).
	ProxyListenHost string
	// ProxyHost is the host the instances dial the published proxy ports
	// on. Default: ToxiproxyAddr's host (127.0.0.1 if that is a wildcard).
	ProxyHost string
}

// Environment connects to the Redis and Toxiproxy e names. Proxy ports are
// taken from the range as the run asks for them.
func (e External) Environment(ctx context.Context) (*Environment, error) {
	return e.EnvironmentFor(ctx, 0)
}

// EnvironmentFor is Environment for a run of n instances: it reserves n
// ports of the range up front, so a range too small for the run (or taken
// by other runs) is an error before anything starts.
func (e External) EnvironmentFor(ctx context.Context, n int) (*Environment, error) {
	if e.RedisAddr == "" || e.ToxiproxyAddr == "" {
		return nil, fmt.Errorf("%w: an external environment needs both the Redis address and the Toxiproxy API address", ErrEnvironment)
	}
	if e.ProxyPorts != (PortRange{}) {
		if err := e.ProxyPorts.validate(); err != nil {
			return nil, fmt.Errorf("%w: proxy ports: %v", ErrEnvironment, err)
		}
	}
	tp := toxiclient.NewClient(e.ToxiproxyAddr)
	existing, err := tp.Proxies()
	if err != nil {
		return nil, fmt.Errorf("%w: Toxiproxy API at %s: %v", ErrEnvironment, e.ToxiproxyAddr, err)
	}
	env := &Environment{RedisAddr: e.RedisAddr, ProxyUpstream: e.ProxyUpstream, Toxiproxy: tp, Auth: e.RedisAuth, Close: func() error { return nil }}
	if env.ProxyUpstream == "" {
		env.ProxyUpstream = e.RedisAddr
	}
	if e.ProxyPorts == (PortRange{}) {
		return env, nil
	}

	// Ports that proxies already listen on (another process's run, or one
	// that died without cleaning up) are not offered.
	busy := map[int]bool{}
	for _, p := range existing {
		if port, err := listenPort(p.Listen); err == nil {
			busy[port] = true
		}
	}
	ports := &portLease{pool: e.ToxiproxyAddr, r: e.ProxyPorts, busy: busy, byInstance: map[int]int{}}
	if n > 0 {
		if err := ports.reserve(n); err != nil {
			ports.release()
			return nil, fmt.Errorf("%w: %v", ErrEnvironment, err)
		}
	}
	listenHost := e.ProxyListenHost
	if listenHost == "" {
		listenHost = "0.0.0.0"
	}
	dialHost := e.ProxyHost
	if dialHost == "" {
		dialHost = hostOf(e.ToxiproxyAddr)
	}
	env.ProxyListen = func(i int) string {
		port, err := ports.take(i)
		if err != nil {
			// Toxiproxy refuses to listen on it, and Run reports this.
			return net.JoinHostPort(exhaustedHost, "0")
		}
		return net.JoinHostPort(listenHost, strconv.Itoa(port))
	}
	env.DialAddr = func(listen string) string {
		port, err := listenPort(listen)
		if err != nil {
			return listen
		}
		return net.JoinHostPort(dialHost, strconv.Itoa(port))
	}
	env.Close = func() error { ports.release(); return nil }
	return env, nil
}

// exhaustedHost is the listen host handed out when no proxy port is left:
// Toxiproxy fails to listen on it, with the cause in its error. Not a valid
// domain name, so the resolver rejects it without asking DNS.
const exhaustedHost = "no free port left in the proxy range"

// PortRange is an inclusive range of TCP ports.
type PortRange struct {
	First, Last int
}

// ParsePortRange reads "21000-21031" or a single "21000".
func ParsePortRange(s string) (PortRange, error) {
	first, last, isRange := strings.Cut(strings.TrimSpace(s), "-")
	var r PortRange
	var err error
	if r.First, err = strconv.Atoi(first); err != nil {
		return PortRange{}, fmt.Errorf("port range %q: %v", s, err)
	}
	r.Last = r.First
	if isRange {
		if r.Last, err = strconv.Atoi(last); err != nil {
			return PortRange{}, fmt.Errorf("port range %q: %v", s, err)
		}
	}
	if err := r.validate(); err != nil {
		return PortRange{}, fmt.Errorf("port range %q: %v", s, err)
	}
	return r, nil
}

// Len is the number of ports in r.
func (r PortRange) Len() int { return r.Last - r.First + 1 }

// String is r as ParsePortRange reads it.
func (r PortRange) String() string {
	if r.First == r.Last {
		return strconv.Itoa(r.First)
	}
	return fmt.Sprintf("%d-%d", r.First, r.Last)
}

func (r PortRange) validate() error {
	if r.First < 1 || r.Last > 65535 || r.First > r.Last {
		return errors.New("want ports 1-65535, first ≤ last")
	}
	return nil
}

// portsInUse are the proxy ports this process's runs hold, per Toxiproxy,
// so that runs in parallel (chaos run --parallel) share one range.
var portsInUse = struct {
	sync.Mutex
	m map[string]map[int]bool
}{m: map[string]map[int]bool{}}

// portLease is the proxy ports one run holds.
type portLease struct {
	pool       string
	r          PortRange
	busy       map[int]bool // listened on by proxies that were there before the run
	mu         sync.Mutex
	byInstance map[int]int
}

// take returns instance i's port, taking the lowest free one if it has none.
func (l *portLease) take(i int) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p, ok := l.byInstance[i]; ok {
		return p, nil
	}
	portsInUse.Lock()
	defer portsInUse.Unlock()
	used := portsInUse.m[l.pool]
	if used == nil {
		used = map[int]bool{}
		portsInUse.m[l.pool] = used
	}
	for p := l.r.First; p <= l.r.Last; p++ {
		if !used[p] && !l.busy[p] {
			used[p] = true
			l.byInstance[i] = p
			return p, nil
		}
	}
	return 0, fmt.Errorf("no free proxy port in %s: it has %d ports, runs of this process hold %d and existing proxies %d; publish a wider range",
		l.r, l.r.Len(), len(used), len(l.busy))
}

// reserve takes ports for instances 0..n-1.
func (l *portLease) reserve(n int) error {
	for i := range n {
		if _, err := l.take(i); err != nil {
			return fmt.Errorf("%d instances: %w", n, err)
		}
	}
	return nil
}

// release gives the ports back.
func (l *portLease) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	portsInUse.Lock()
	defer portsInUse.Unlock()
	for i, p := range l.byInstance {
		delete(portsInUse.m[l.pool], p)
		delete(l.byInstance, i)
	}
}

// listenPort is the port of a listen address as Toxiproxy reports it
// ("[::]:21000", "0.0.0.0:21000", "127.0.0.1:34567").
func listenPort(listen string) (int, error) {
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(port)
}

// hostOf is the host of addr, with wildcards turned into loopback.
func hostOf(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	switch host {
	case "", "0.0.0.0", "::":
		return "127.0.0.1"
	}
	return host
}
