// Package rediscluster runs throwaway replicated Redis topologies for tests:
// a Redis Cluster (Start: primaries and replicas, `cluster-enabled yes`,
// created with `redis-cli --cluster create`) and a primary with replicas
// watched by Sentinels (StartReplicated). Every node is a redis-server
// process on a free loopback port, with no persistence, in its own temporary
// directory and process group, killed with its parent (Linux); Stop kills
// them all and removes the directories. The helpers break them the way
// production breaks: fail a primary over (clean, FORCE, TAKEOVER), kill a
// node, freeze it (SIGSTOP), hold back replication so a failover loses the
// last writes, and migrate a slot to another primary.
//
// It spawns its own processes rather than internal/redisserver's, because
// cluster nodes and Sentinels need their own command lines and config files.
package rediscluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/internal/proc"
	"github.com/leaselab/leaselab/internal/redisserver"
)

// ErrNotInstalled is returned when redis-server or redis-cli is missing.
var ErrNotInstalled = errors.New("rediscluster: redis-server and redis-cli are needed (Debian: `apt-get install redis-server`, which ships both)")

// ErrNoCluster is returned when the redis-server refuses cluster mode.
var ErrNoCluster = errors.New("rediscluster: this redis-server does not support cluster mode")

// Node is one redis-server process of a topology.
type Node struct {
	Addr string
	Port int
	Dir  string // its own directory under the topology's, removed by Stop
	// ID is the Cluster node ID (CLUSTER MYID); empty outside a Cluster.
	ID string

	path string
	args []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	client *redis.Client
}

// Client is a plain client of this one node (no redirections), for admin
// commands and inspection. It is closed by Stop.
func (n *Node) Client() *redis.Client {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.client == nil {
		n.client = redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialerRetries: 1,
			DialTimeout: 300 * time.Millisecond, ReadTimeout: 5 * time.Second, DisableIdentity: true})
	}
	return n.client
}

// PID is the process ID, 0 when the node is not running.
func (n *Node) PID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// Running reports whether the process is alive.
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return false
	}
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// Kill SIGKILLs the node (a crash) and waits until it is reaped.
func (n *Node) Kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	proc.KillGroup(cmd.Process)
	<-exited
}

// Pause freezes the node with SIGSTOP: connections stay open, nothing is
// answered, and its peers see it time out (cluster-node-timeout).
func (n *Node) Pause() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return errors.New("rediscluster: node is not running")
	}
	return proc.Freeze(n.cmd.Process)
}

// Resume undoes Pause with SIGCONT.
func (n *Node) Resume() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return errors.New("rediscluster: node is not running")
	}
	return proc.Thaw(n.cmd.Process)
}

func (n *Node) close() {
	n.Kill()
	n.mu.Lock()
	c := n.client
	n.client = nil
	n.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// spawnNode starts redis-server in dir/<port> with the common arguments,
// then extra, and waits for its first reply. A cluster node also gets its
// own free bus port (cluster-port): the default, port + 10000, may be taken
// or beyond 65535. A port taken between the probe and the bind (many
// topologies start at once) is retried on fresh ports.
func spawnNode(ctx context.Context, bin, root string, conf []string, extra ...string) (*Node, error) {
	cluster := slices.Contains(extra, "--cluster-enabled")
	var err error
	for range 5 {
		var n *Node
		if n, err = spawnNodeOnce(ctx, bin, root, conf, cluster, extra); err == nil {
			return n, nil
		}
		if !strings.Contains(err.Error(), "Address already in use") {
			return nil, err
		}
	}
	return nil, err
}

func spawnNodeOnce(ctx context.Context, bin, root string, conf []string, cluster bool, extra []string) (*Node, error) {
	port, err := redisserver.FreePort()
	if err != nil {
		return nil, err
	}
	n := &Node{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, path: bin,
		Dir: filepath.Join(root, strconv.Itoa(port))}
	if err := os.Mkdir(n.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("rediscluster: %w", err)
	}
	if conf != nil {
		// Sentinel insists on a config file, and rewrites it with its state.
		file := filepath.Join(n.Dir, "redis.conf")
		if err := os.WriteFile(file, []byte(strings.Join(conf, "\n")+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("rediscluster: %w", err)
		}
		n.args = append(n.args, file)
	}
	n.args = append(n.args, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", n.Dir,
		"--daemonize", "no", "--protected-mode", "no", "--logfile", filepath.Join(n.Dir, "log"))
	if cluster {
		bus, err := redisserver.FreePort()
		for err == nil && bus == port {
			bus, err = redisserver.FreePort()
		}
		if err != nil {
			return nil, err
		}
		n.args = append(n.args, "--cluster-port", strconv.Itoa(bus))
	}
	n.args = append(n.args, extra...)
	if err := n.start(ctx); err != nil {
		_ = os.RemoveAll(n.Dir)
		return nil, err
	}
	return n, nil
}

func (n *Node) start(ctx context.Context) error {
	cmd := exec.Command(n.path, n.args...)
	cmd.SysProcAttr = proc.Attr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("rediscluster: starting %s: %w", n.path, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	n.mu.Lock()
	n.cmd, n.exited = cmd, exited
	n.mu.Unlock()

	c := redis.NewClient(&redis.Options{Addr: n.Addr, MaxRetries: -1, DialerRetries: 1,
		DialTimeout: 200 * time.Millisecond, DisableIdentity: true})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := c.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(n.Dir, "log"))
			return fmt.Errorf("rediscluster: redis-server on %s exited before answering: %s", n.Addr, lastLines(string(log), 3))
		case <-ctx.Done():
			n.Kill()
			return fmt.Errorf("rediscluster: waiting for %s: %w", n.Addr, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			n.Kill()
			return fmt.Errorf("rediscluster: %s did not answer within 10s: %w", n.Addr, err)
		}
	}
}

func lastLines(s string, k int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > k {
		lines = lines[len(lines)-k:]
	}
	return strings.Join(lines, " | ")
}

// binaries finds redis-server and redis-cli.
// binaries finds redis-server (path, else on PATH) and redis-cli (beside
// it, else on PATH).
func binaries(path string) (server, cli string, err error) {
	if server, err = serverBinary(path); err != nil {
		return "", "", err
	}
	if cli = filepath.Join(filepath.Dir(server), "redis-cli"); !isExecutable(cli) {
		if cli, err = exec.LookPath("redis-cli"); err != nil {
			return "", "", ErrNotInstalled
		}
	}
	return server, cli, nil
}

// serverBinary is path, or redis-server found on PATH.
func serverBinary(path string) (string, error) {
	if path != "" {
		return path, nil
	}
	server, err := exec.LookPath("redis-server")
	if err != nil {
		return "", ErrNotInstalled
	}
	return server, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// infoField reads "name:value" from an INFO reply (or CLUSTER INFO).
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), name+":"); ok {
			return v
		}
	}
	return ""
}

// poll calls f every few milliseconds until it returns nil, ctx ends or d
// passes; it returns f's last error.
func poll(ctx context.Context, d time.Duration, what string, f func(context.Context) error) error {
	deadline := time.Now().Add(d)
	for {
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		err := f(cctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("rediscluster: %s not reached within %v: %w", what, d, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("rediscluster: waiting for %s: %w (last: %v)", what, ctx.Err(), err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
