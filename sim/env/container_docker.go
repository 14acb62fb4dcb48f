package env

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// Errors of the container provider, each also an ErrEnvironment, so callers
// (simtest, the CLI) can tell "no Docker here" from a broken run.
var (
	// ErrDockerUnavailable: no Docker Engine answers.
	ErrDockerUnavailable = errors.New("docker is not reachable")
	// ErrImageUnavailable: an image is neither present nor pullable.
	ErrImageUnavailable = errors.New("image not available")
)

// LabelEnv labels every container and network the Containers provider
// starts, with Containers.Label (or "sim") as its value: the handle to find
// them (docker ps -a --filter label=org.leaselab.env) and to remove what a
// killed process left.
const LabelEnv = "org.leaselab.env"

// DockerAvailable reports whether a Docker Engine answers, as
// testcontainers-go finds it (DOCKER_HOST, ~/.testcontainers.properties,
// the default socket). The error wraps ErrDockerUnavailable.
func DockerAvailable(ctx context.Context) error {
	d, err := dialDocker(ctx)
	if err != nil {
		return err
	}
	return d.Close()
}

// dialDocker connects to the Docker Engine and pings it.
func dialDocker(ctx context.Context) (d *testcontainers.DockerClient, err error) {
	// testcontainers-go panics, rather than fails, on some hosts without Docker.
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("%w: %w: %v", ErrEnvironment, ErrDockerUnavailable, r)
		}
	}()
	d, err = testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w: %v", ErrEnvironment, ErrDockerUnavailable, err)
	}
	if _, err := d.Ping(ctx, client.PingOptions{}); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("%w: %w: %v", ErrEnvironment, ErrDockerUnavailable, err)
	}
	return d, nil
}

// ensureImage makes sure ref is present, pulling it once if it is not.
// testcontainers-go would retry a failing pull with backoff for minutes; on
// a machine without registry access one try is all it takes to know.
func ensureImage(ctx context.Context, d *testcontainers.DockerClient, ref, hint string) error {
	if _, err := d.ImageInspect(ctx, ref); err == nil {
		return nil
	}
	pull, err := d.ImagePull(ctx, ref, client.ImagePullOptions{})
	if err == nil {
		err = pull.Wait(ctx)
		_ = pull.Close()
	}
	if err == nil {
		if _, err = d.ImageInspect(ctx, ref); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: %w: %s is not present and could not be pulled (%v); %s", ErrEnvironment, ErrImageUnavailable, ref, err, hint)
}

// ensureReaper checks, when testcontainers-go's reaper (Ryuk) is enabled,
// that its image can be had, so a machine without registry access fails at
// once with the way out instead of retrying a pull.
func ensureReaper(ctx context.Context, d *testcontainers.DockerClient) error {
	cfg := testcontainers.ReadConfig()
	if cfg.Config.RyukDisabled || cfg.Config.HubImageNamePrefix != "" {
		return nil
	}
	//lint:ignore SA1019 the deprecated constant is still the image v0.45.0 pulls, and the only public name for it
	return ensureImage(ctx, d, testcontainers.ReaperDefaultImage,
		"it is testcontainers-go's reaper (Ryuk): set TESTCONTAINERS_RYUK_DISABLED=true, leaselab removes its containers and network without it")
}

// imageFrom is the image to use: the one given, else the environment
// variable's, else the local build if it is present, else the public one.
func imageFrom(ctx context.Context, d *testcontainers.DockerClient, given, envVar, local, public string) string {
	if given != "" {
		return given
	}
	if v := os.Getenv(envVar); v != "" {
		return v
	}
	if _, err := d.ImageInspect(ctx, local); err == nil {
		return local
	}
	return public
}

// imageHint is what to do when the images cannot be had.
const imageHint = "without registry access, build local images with docker/build-images.sh and set LEASELAB_REDIS_IMAGE and LEASELAB_TOXIPROXY_IMAGE (README.md, Running with Docker)"

// daemonHost is the host where published ports are reached, and the
// address to publish them on: 127.0.0.1 only when the Docker Engine runs on
// this machine (a unix socket, or TCP on loopback); a remote engine's host
// name and every interface otherwise. testcontainers-go's own Host() is not
// used: inside a container it answers the default gateway, an address the
// harness must not send its traffic to.
func daemonHost(d *testcontainers.DockerClient) (host string, bind netip.Addr) {
	loopback := netip.MustParseAddr("127.0.0.1")
	u, err := url.Parse(d.DaemonHost())
	if err != nil || (u.Scheme != "tcp" && u.Scheme != "http" && u.Scheme != "https") {
		return loopback.String(), loopback
	}
	host = u.Hostname()
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return loopback.String(), loopback
	}
	return host, netip.IPv4Unspecified()
}
