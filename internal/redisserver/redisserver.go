// Package redisserver runs a throwaway redis-server process: on a free
// loopback port, with no persistence, in its own process group, killed with
// its parent. The test helper (internal/redistest) and the simulator's default
// environment both use it, so there is one way to spawn Redis in leaselab.
package redisserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/internal/proc"
)

// ErrNotInstalled is returned by Start when no redis-server binary is
// found; the error wrapping it says where Start looked.
var ErrNotInstalled = errors.New("no redis-server")

// tempPrefix names the temporary directories of spawned servers:
// leaselab-redis-<pid of the harness>-<random>. A directory whose harness
// is gone (killed with SIGKILL, or it crashed) is removed by the next Start.
const tempPrefix = "leaselab-redis-"

// Options configure Start. Zero values mean the documented defaults.
type Options struct {
	// Path of the redis-server binary. Default: "redis-server" looked up on PATH.
	Path string
	// Dir is the server's working directory. Default: a new temporary
	// directory, removed by Stop.
	Dir string
	// Hz is the server's hz. Default 100: expired keys are noticed (and their
	// keyspace notifications sent) within ~12 ms instead of ~100 ms at hz 10.
	Hz int
	// ReadyTimeout bounds the wait for the first PONG. Default 10s.
	ReadyTimeout time.Duration
	// Password, when set, is required of every client (requirepass), so
	// that other local users cannot reach a run's Redis. Default: none.
	Password string
}

// Server is one redis-server process. Its port survives Restart.
type Server struct {
	Addr     string
	Version  string // the server's redis_version, read at start
	Password string // the password clients must give (Options.Password)

	path    string
	args    []string
	dir     string
	tempDir bool
	ready   time.Duration
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd has been reaped
}

// Start spawns a redis-server and waits until it answers PING. The server has
// keyspace notifications for keys, generic commands and expirations enabled
// ("Kgx$"), which the simulator's ground-truth lane subscribes to.
func Start(ctx context.Context, o Options) (*Server, error) {
	bin, err := lookPath(o.Path)
	if err != nil {
		return nil, err
	}
	s := &Server{path: bin, dir: o.Dir, ready: o.ReadyTimeout, Password: o.Password}
	if s.ready == 0 {
		s.ready = 10 * time.Second
	}
	if s.dir == "" {
		removeStaleDirs()
		if s.dir, err = os.MkdirTemp("", fmt.Sprintf("%s%d-", tempPrefix, os.Getpid())); err != nil {
			return nil, fmt.Errorf("creating redis-server directory: %w", err)
		}
		s.tempDir = true
	}
	hz := o.Hz
	if hz == 0 {
		hz = 100
	}
	port, err := FreePort()
	if err != nil {
		s.cleanDir()
		return nil, err
	}
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.args = []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--dir", s.dir, "--hz", strconv.Itoa(hz), "--notify-keyspace-events", "Kgx$",
		"--protected-mode", "no"}
	if o.Password != "" {
		s.args = append(s.args, "--requirepass", o.Password)
	}
	if err := s.start(ctx); err != nil {
		s.cleanDir()
		return nil, err
	}
	return s, nil
}

// lookPath finds the redis-server binary Options.Path names ("": on PATH).
func lookPath(path string) (string, error) {
	name := path
	if name == "" {
		name = "redis-server"
	}
	bin, err := exec.LookPath(name)
	if err == nil {
		return bin, nil
	}
	if path == "" {
		return "", fmt.Errorf("%w on PATH (install it: `apt-get install redis-server` or `brew install redis`)", ErrNotInstalled)
	}
	var ee *exec.Error
	var pe *fs.PathError
	if errors.As(err, &ee) {
		err = ee.Err
	}
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return "", fmt.Errorf("%w at %s: %v", ErrNotInstalled, path, err)
}

// Version is the version of the redis-server Start would spawn for path
// ("": the one on PATH), from its --version, and the binary's path; the
// error wraps ErrNotInstalled when there is none.
func Version(ctx context.Context, path string) (version, bin string, err error) {
	if bin, err = lookPath(path); err != nil {
		return "", "", err
	}
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if err != nil {
		return "", bin, fmt.Errorf("running %s --version: %w", bin, err)
	}
	// "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=…"
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "v="); ok {
			return v, bin, nil
		}
	}
	return "", bin, fmt.Errorf("%s --version: no version in %q", bin, strings.TrimSpace(string(out)))
}

func (s *Server) start(ctx context.Context) error {
	cmd := exec.Command(s.path, s.args...)
	cmd.SysProcAttr = proc.Attr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", s.path, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited

	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: s.Password, MaxRetries: -1, DialerRetries: 1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(s.ready)
	for {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		info, err := c.Info(pctx, "server").Result()
		cancel()
		if err == nil {
			s.Version = InfoField(info, "redis_version")
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("redis-server on %s exited before answering (port taken?): %v", s.Addr, cmd.ProcessState)
		case <-ctx.Done():
			s.kill()
			return fmt.Errorf("waiting for redis-server on %s: %w", s.Addr, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("redis-server on %s did not answer within %v: %w", s.Addr, s.ready, err)
		}
	}
}

// kill SIGKILLs the process group and waits for the process to be reaped.
func (s *Server) kill() {
	if s.cmd == nil {
		return
	}
	proc.KillGroup(s.cmd.Process)
	<-s.exited
	s.cmd = nil
}

// Stop kills the server, waits for it and removes its temporary directory.
// Calling it twice is harmless.
func (s *Server) Stop() {
	s.kill()
	s.cleanDir()
}

// Restart kills the server and starts a new one on the same port with an
// empty dataset, as a crash of a Redis without persistence does. Clients
// reconnect to the same address.
func (s *Server) Restart(ctx context.Context) error {
	s.kill()
	return s.start(ctx)
}

// Running reports whether the process is alive.
func (s *Server) Running() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// removeStaleDirs removes the temporary directories of servers whose
// harness process no longer exists: Stop never ran for them.
func removeStaleDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, d := range dirs {
		rest := strings.TrimPrefix(filepath.Base(d), tempPrefix)
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid <= 0 || pid == os.Getpid() || proc.Alive(pid) {
			continue // not ours to judge (an older name), or still in use
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && proc.OwnedByMe(fi) {
			_ = os.RemoveAll(d)
		}
	}
}

func (s *Server) cleanDir() {
	if s.tempDir {
		_ = os.RemoveAll(s.dir)
		s.tempDir = false
	}
}

// FreePort asks the kernel for a free loopback TCP port. Another process can
// take it before it is used; Start fails clearly if that happens.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// InfoField reads the value of "name:value" from an INFO reply.
func InfoField(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

// Pause freezes the server with SIGSTOP: connections stay open and accepted,
// but nothing is answered, as with a hung Redis or a silent network.
func (s *Server) Pause() error {
	if s.cmd == nil {
		return errors.New("redis-server is not running")
	}
	return proc.Freeze(s.cmd.Process)
}

// Resume undoes Pause with SIGCONT.
func (s *Server) Resume() error {
	if s.cmd == nil {
		return errors.New("redis-server is not running")
	}
	return proc.Thaw(s.cmd.Process)
}
