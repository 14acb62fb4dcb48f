package faulty

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"time"
)

// errDead is what every I/O of a crashed instance returns.
var errDead = errors.New("sim: instance crashed")

// Gate sits between an instance's go-redis client and the network, for the
// faults Toxiproxy cannot express because they belong to the process, not
// the network:
//   - Hold (a pause, as in GC or SIGSTOP): reads and writes block until
//     Release, then carry on with whatever was buffered, as a resumed
//     process's would;
//   - Kill (a crash): every read, write and dial fails from now on and every
//     connection is closed, so the dead instance sends nothing more.
type Gate struct {
	mu    sync.Mutex
	open  chan struct{} // closed while traffic flows; replaced by Hold
	dead  bool
	conns map[*gatedConn]struct{}

	// Latency jitter: each chunk written (requests) or read (replies) waits
	// a uniform [0, 2×jitter] drawn from rng, on top of Toxiproxy's fixed
	// latency of (latency − jitter). Toxiproxy's own jitter uses an unseeded
	// global RNG, and updating a running toxic races inside Toxiproxy
	// v2.12.0, so the seeded part lives here.
	reqJitter, repJitter time.Duration
	rng                  *rand.Rand
}

// NewGate returns an open gate.
func NewGate() *Gate {
	g := &Gate{open: make(chan struct{}), conns: map[*gatedConn]struct{}{}}
	close(g.open)
	return g
}

// Hold blocks traffic until Release.
func (g *Gate) Hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default: // already held
	}
}

// Release lets held traffic go.
func (g *Gate) Release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// SetJitter sets the per-chunk jitter of requests and replies (0: none),
// drawn from rng.
func (g *Gate) SetJitter(requests, replies time.Duration, rng *rand.Rand) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reqJitter, g.repJitter, g.rng = requests, replies, rng
}

// jitter draws the delay of one chunk in one direction.
func (g *Gate) jitter(requests bool) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	j := g.repJitter
	if requests {
		j = g.reqJitter
	}
	if j <= 0 || g.rng == nil {
		return 0
	}
	return time.Duration(g.rng.Int64N(int64(2*j) + 1))
}

// Kill closes every connection and fails all later traffic.
func (g *Gate) Kill() {
	g.mu.Lock()
	g.dead = true
	conns := g.conns
	g.conns = map[*gatedConn]struct{}{}
	select {
	case <-g.open:
	default:
		close(g.open) // wake held I/O so it can fail
	}
	g.mu.Unlock()
	for c := range conns {
		_ = c.Conn.Close()
	}
}

// wait blocks while the gate is held and reports whether the instance is dead.
func (g *Gate) wait() error {
	g.mu.Lock()
	open, dead := g.open, g.dead
	g.mu.Unlock()
	if dead {
		return errDead
	}
	<-open
	g.mu.Lock()
	dead = g.dead
	g.mu.Unlock()
	if dead {
		return errDead
	}
	return nil
}

// Dialer returns a go-redis Options.Dialer that connects to addr through the gate.
func (g *Gate) Dialer(addr string) func(ctx context.Context, network, _ string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		if err := g.wait(); err != nil {
			return nil, err
		}
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		gc := &gatedConn{Conn: c, g: g}
		g.mu.Lock()
		if g.dead {
			g.mu.Unlock()
			_ = c.Close()
			return nil, errDead
		}
		g.conns[gc] = struct{}{}
		g.mu.Unlock()
		return gc, nil
	}
}

type gatedConn struct {
	net.Conn
	g *Gate
}

// SyscallConn exposes the socket, as the *net.TCPConn of go-redis's own
// dialer does, so that the pool health-checks an idle connection before
// reusing it (a non-blocking MSG_PEEK, which reads nothing): it finds one the
// proxy or Redis closed and dials instead, as a production client does,
// rather than sending on it and taking the EOF. Without it a refuse
// partition's renewal took one dial round less in-process than in an agent
// process (issue 24's calibration: 1.28 s against 1.69-1.81 s).
func (c *gatedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.New("sim: gated connection has no socket")
	}
	return sc.SyscallConn()
}

// Read also waits after the data arrived: a reply that lands while the
// instance is paused is seen only after it resumes.
func (c *gatedConn) Read(b []byte) (int, error) {
	if err := c.g.wait(); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(b)
	if d := c.g.jitter(false); d > 0 && n > 0 {
		time.Sleep(d)
	}
	if werr := c.g.wait(); werr != nil {
		return 0, werr
	}
	return n, err
}

func (c *gatedConn) Write(b []byte) (int, error) {
	if d := c.g.jitter(true); d > 0 {
		time.Sleep(d)
	}
	if err := c.g.wait(); err != nil {
		return 0, err
	}
	return c.Conn.Write(b)
}

func (c *gatedConn) Close() error {
	c.g.mu.Lock()
	delete(c.g.conns, c)
	c.g.mu.Unlock()
	return c.Conn.Close()
}
