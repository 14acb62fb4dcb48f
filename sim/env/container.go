package env

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/leaselab/leaselab/internal/redisserver"
)

// Images of the container provider and docker-compose.yml. The public ones
// are pinned; the local ones are what docker/build-images.sh tags.
const (
	PublicRedisImage     = "redis:7.0.15"
	PublicToxiproxyImage = "ghcr.io/shopify/toxiproxy:" + ToxiproxyVersion
	LocalRedisImage      = "leaselab/redis:7.0.15-local"
	LocalToxiproxyImage  = "leaselab/toxiproxy:" + ToxiproxyVersion + "-local"
)

// DefaultContainerProxyPorts is how many proxy ports Containers publishes
// when it is not told the run's instance count (Environment, not
// EnvironmentFor).
const DefaultContainerProxyPorts = 16

// containerProxyPort is the port instance 0's proxy listens on inside the
// Toxiproxy container; instance i's is containerProxyPort+i.
const containerProxyPort = 21000

// redisCommand is the container's command: the harness's Redis settings
// (no persistence, hz 100, keyspace notifications). Both the public and the
// local image take it.
var redisCommand = []string{"redis-server", "--bind", "0.0.0.0", "--protected-mode", "no",
	"--save", "", "--appendonly", "no", "--hz", "100", "--notify-keyspace-events", "Kgx$"}

// Containers is the provider that starts Redis and Toxiproxy as containers
// with testcontainers-go, on a private network of their own: Toxiproxy
// reaches Redis by name there, and the harness reaches both, and each
// instance's proxy, through ports published on 127.0.0.1. Everything is
// removed when the environment closes, also when the run fails or is
// interrupted, whether or not testcontainers-go's reaper (Ryuk) runs:
// TESTCONTAINERS_RYUK_DISABLED=true is honoured and is what machines
// without registry access need. It restarts Redis by restarting its
// container.
type Containers struct {
	// RedisImage is the Redis image. Default: $LEASELAB_REDIS_IMAGE, else
	// LocalRedisImage if present, else PublicRedisImage.
	RedisImage string
	// ToxiproxyImage is the Toxiproxy image. Default:
	// $LEASELAB_TOXIPROXY_IMAGE, else LocalToxiproxyImage if present, else
	// PublicToxiproxyImage.
	ToxiproxyImage string
	// ProxyPorts is how many proxy ports Environment publishes. Default
	// DefaultContainerProxyPorts; EnvironmentFor publishes one per instance.
	ProxyPorts int
	// Label is the value of the LabelEnv label on everything started.
	// Default "sim".
	Label string
	// StartTimeout bounds setting up the environment. Default 2 minutes.
	StartTimeout time.Duration
	// Logf, if not nil, receives testcontainers-go's progress messages.
	Logf func(format string, args ...any)
}

// Environment starts the containers with DefaultContainerProxyPorts proxy
// ports (or ProxyPorts).
func (c Containers) Environment(ctx context.Context) (*Environment, error) {
	n := c.ProxyPorts
	if n <= 0 {
		n = DefaultContainerProxyPorts
	}
	return c.EnvironmentFor(ctx, n)
}

// Check reports whether c can start here: Docker answers, and the images
// (and the reaper's, if it is enabled) are present or can be pulled. The
// error wraps ErrDockerUnavailable or ErrImageUnavailable.
func (c Containers) Check(ctx context.Context) error {
	d, err := dialDocker(ctx)
	if err != nil {
		return err
	}
	defer d.Close()
	_, _, err = c.images(ctx, d)
	return err
}

// images resolves and ensures the images.
func (c Containers) images(ctx context.Context, d *testcontainers.DockerClient) (redisImage, toxiImage string, err error) {
	redisImage = imageFrom(ctx, d, c.RedisImage, "LEASELAB_REDIS_IMAGE", LocalRedisImage, PublicRedisImage)
	toxiImage = imageFrom(ctx, d, c.ToxiproxyImage, "LEASELAB_TOXIPROXY_IMAGE", LocalToxiproxyImage, PublicToxiproxyImage)
	for _, img := range []string{redisImage, toxiImage} {
		if err := ensureImage(ctx, d, img, imageHint); err != nil {
			return "", "", err
		}
	}
	return redisImage, toxiImage, ensureReaper(ctx, d)
}

// EnvironmentFor starts the containers for a run of n instances.
//
// A Docker call abandoned half-way may still take effect (a container
// created after its client gave up, never to be removed), so the calls run
// on a context of their own, bounded by StartTimeout, and an interrupt (ctx
// done) is honoured between them; whatever was started is then removed.
func (c Containers) EnvironmentFor(ctx context.Context, n int) (env *Environment, err error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: a container environment for %d instances", ErrEnvironment, n)
	}
	timeout := c.StartTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	interrupted := func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: setting up containers: %w", ErrEnvironment, err)
		}
		return nil
	}

	d, err := dialDocker(dctx)
	if err != nil {
		return nil, err
	}
	st := &stack{docker: d, id: randomHex(4)}
	defer func() {
		if err != nil {
			_ = st.close()
		}
	}()
	redisImage, toxiImage, err := c.images(dctx, d)
	if err != nil {
		return nil, err
	}
	if err := interrupted(); err != nil {
		return nil, err
	}

	host, bind := daemonHost(d)
	label := c.Label
	if label == "" {
		label = "sim"
	}
	// testcontainers-go adds its labels to the map it is given: one each.
	labels := func() map[string]string { return map[string]string{LabelEnv: label, labelStack: st.id} }
	st.network, err = tcnetwork.New(dctx, tcnetwork.WithLabels(labels()))
	if err != nil {
		return nil, fmt.Errorf("%w: creating the container network: %v", ErrEnvironment, err)
	}
	// A fixed host port keeps Redis's address across a container restart,
	// where Docker would hand out a new ephemeral one.
	redisPort, err := redisserver.FreePort()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEnvironment, err)
	}

	var logger tclog.Logger = tclog.NewNoopLogger()
	if c.Logf != nil {
		logger = logfLogger(c.Logf)
	}
	name := "leaselab-" + st.id
	base := testcontainers.GenericContainerRequest{Started: true, Logger: logger}
	redisReq, toxiReq := base, base
	redisReq.ContainerRequest = testcontainers.ContainerRequest{
		Name:           name + "-redis",
		Image:          redisImage,
		Cmd:            redisCommand,
		ExposedPorts:   []string{"6379/tcp"},
		Labels:         labels(),
		Networks:       []string{st.network.Name},
		NetworkAliases: map[string][]string{st.network.Name: {"redis"}},
		// Both images log this line once Redis listens.
		WaitingFor:         wait.ForLog("Ready to accept connections").WithStartupTimeout(30 * time.Second),
		HostConfigModifier: publish(bind, redisPort, "6379/tcp"),
	}
	toxiPorts := fmt.Sprintf("%d-%d/tcp", containerProxyPort, containerProxyPort+n-1)
	toxiReq.ContainerRequest = testcontainers.ContainerRequest{
		Name:           name + "-toxiproxy",
		Image:          toxiImage,
		Cmd:            []string{"-host=0.0.0.0", "-port=8474"},
		ExposedPorts:   []string{"8474/tcp", toxiPorts},
		Labels:         labels(),
		Networks:       []string{st.network.Name},
		NetworkAliases: map[string][]string{st.network.Name: {"toxiproxy"}},
		// Logged as the API starts listening; the harness then polls the
		// API itself. (An HTTP wait strategy would dial testcontainers-go's
		// Host(), which is wrong inside a container: see daemonHost.)
		WaitingFor:         wait.ForLog("Starting Toxiproxy HTTP server").WithStartupTimeout(30 * time.Second),
		HostConfigModifier: publish(bind, 0, "8474/tcp", toxiPorts),
	}

	// The two start at once: a second saved on every run.
	var wg sync.WaitGroup
	var redisErr, toxiErr error
	wg.Go(func() { st.redis, redisErr = testcontainers.GenericContainer(dctx, redisReq) })
	wg.Go(func() { st.toxiproxy, toxiErr = testcontainers.GenericContainer(dctx, toxiReq) })
	wg.Wait()
	if err := errors.Join(redisErr, toxiErr); err != nil {
		return nil, fmt.Errorf("%w: starting containers: %w", ErrEnvironment, err)
	}
	if err := interrupted(); err != nil {
		return nil, err
	}
	return st.environment(ctx, dctx, host, redisPort, n)
}

// labelStack labels one environment's containers and network, so that
// closing it removes them all, also one whose creation was not confirmed.
const labelStack = "org.leaselab.stack"

// stack is one environment's containers and network.
type stack struct {
	docker    *testcontainers.DockerClient
	id        string
	network   *testcontainers.DockerNetwork
	redis     testcontainers.Container
	toxiproxy testcontainers.Container
	closeOnce sync.Once
	closeErr  error
}

// environment describes the started stack to the harness. Its Docker call
// runs on dctx; its polls, harmless to abandon, follow ctx.
func (st *stack) environment(ctx, dctx context.Context, host string, redisPort, n int) (*Environment, error) {
	info, err := st.toxiproxy.Inspect(dctx)
	if err != nil {
		return nil, fmt.Errorf("%w: inspecting the Toxiproxy container: %v", ErrEnvironment, err)
	}
	// Container port → the host port Docker published it on.
	mapped := map[int]string{}
	for p, bindings := range info.NetworkSettings.Ports {
		if len(bindings) > 0 {
			mapped[int(p.Num())] = bindings[0].HostPort
		}
	}
	api, ok := mapped[8474]
	if !ok {
		return nil, fmt.Errorf("%w: the Toxiproxy API port is not published", ErrEnvironment)
	}
	redisAddr := net.JoinHostPort(host, strconv.Itoa(redisPort))
	env := &Environment{
		RedisAddr:     redisAddr,
		ProxyUpstream: "redis:6379",
		Toxiproxy:     toxiclient.NewClient(net.JoinHostPort(host, api)),
		ProxyListen: func(i int) string {
			if i >= n {
				return net.JoinHostPort(exhaustedHost, "0")
			}
			return "0.0.0.0:" + strconv.Itoa(containerProxyPort+i)
		},
		DialAddr: func(listen string) string {
			port, err := listenPort(listen)
			if hp, ok := mapped[port]; err == nil && ok {
				return net.JoinHostPort(host, hp)
			}
			return listen
		},
		RestartRedis: func(ctx context.Context) error { return st.restartRedis(ctx, redisAddr) },
		Close:        st.close,
	}
	// The wait strategies ran inside Docker's view; this is the harness's:
	// both answer through their published ports.
	if err := waitRedis(ctx, redisAddr); err != nil {
		return nil, err
	}
	if err := poll(ctx, "the Toxiproxy API at "+host+":"+api, func() error { _, err := env.Toxiproxy.Proxies(); return err }); err != nil {
		return nil, err
	}
	return env, nil
}

// restartRedis kills the Redis container and starts it again: the dataset
// (and with it the lease) is lost, as with the embedded server's restart.
// The host port is fixed, so the harness's address stays good.
func (st *stack) restartRedis(ctx context.Context, addr string) error {
	zero := 0
	if _, err := st.docker.ContainerRestart(ctx, st.redis.GetContainerID(), client.ContainerRestartOptions{Signal: "SIGKILL", Timeout: &zero}); err != nil {
		return fmt.Errorf("restarting the Redis container: %w", err)
	}
	return waitRedis(ctx, addr)
}

// waitRedis polls Redis at addr until it answers PING.
func waitRedis(ctx context.Context, addr string) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second, ReadTimeout: time.Second})
	defer rdb.Close()
	return poll(ctx, "Redis at "+addr, func() error { return rdb.Ping(ctx).Err() })
}

// poll calls check every 10 ms until it succeeds, for up to 30 s. A
// published port answers a little after the process inside listens:
// Docker's port proxy starts on its own.
func poll(ctx context.Context, what string, check func() error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s does not answer: %v", ErrEnvironment, what, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// close removes the containers and the network, on a context of its own:
// the run's may be the one that was cancelled. Whatever carries the stack's
// label goes too, in case a creation's reply never came.
func (st *stack) close() error {
	st.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var errs []error
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, c := range []testcontainers.Container{st.toxiproxy, st.redis} {
			if c == nil {
				continue
			}
			// Killed at once: the run is over, and neither keeps data.
			wg.Go(func() {
				err := c.Terminate(ctx, testcontainers.StopTimeout(0))
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			})
		}
		wg.Wait()
		errs = append(errs, st.sweep(ctx))
		st.closeErr = errors.Join(errs...)
		_ = st.docker.Close()
	})
	return st.closeErr
}

// sweep removes every container and network with the stack's label.
func (st *stack) sweep(ctx context.Context) error {
	f := make(client.Filters).Add("label", labelStack+"="+st.id)
	var errs []error
	cs, err := st.docker.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	errs = append(errs, err)
	for _, c := range cs.Items {
		_, err := st.docker.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		errs = append(errs, err)
	}
	ns, err := st.docker.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	errs = append(errs, err)
	for _, n := range ns.Items {
		_, err := st.docker.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// publish binds the container ports (each a port or a range) to hostPort
// (0: an ephemeral port each) on the host address bind.
func publish(bind netip.Addr, hostPort int, ports ...string) func(*container.HostConfig) {
	hp := ""
	if hostPort != 0 {
		hp = strconv.Itoa(hostPort)
	}
	return func(hc *container.HostConfig) {
		if hc.PortBindings == nil {
			hc.PortBindings = network.PortMap{}
		}
		for _, spec := range ports {
			r, err := network.ParsePortRange(spec)
			if err != nil {
				continue // testcontainers-go rejects the same spec with its own error
			}
			for p := range r.All() {
				hc.PortBindings[p] = []network.PortBinding{{HostIP: bind, HostPort: hp}}
			}
		}
	}
}

// logfLogger adapts a Logf to testcontainers-go's logger.
type logfLogger func(format string, args ...any)

func (f logfLogger) Printf(format string, args ...any) { f(format, args...) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
