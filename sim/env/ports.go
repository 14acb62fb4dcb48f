package env

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// A refuse partition disables an instance's proxy, which closes its listener,
// and the heal listens on the same port again. A port the kernel picked
// (":0") comes from its ephemeral range, so while the proxy is down any
// outgoing connection on the machine, or any other ":0" listener, may take
// it, and the heal fails with "address already in use". The in-process
// Toxiproxy's proxies therefore listen on ports below the ephemeral range,
// which the kernel never hands out by itself.

// belowEphemeral is how many ports under the ephemeral range the proxies
// may use.
const belowEphemeral = 8192

// proxyPorts hands out loopback listen addresses below the ephemeral range.
type proxyPorts struct {
	mu       sync.Mutex
	lo, hi   int // [lo, hi)
	next     int
	disabled bool
}

var ports = newProxyPorts()

func newProxyPorts() *proxyPorts {
	lo, ok := ephemeralLow()
	if !ok || lo-belowEphemeral < 1024 {
		return &proxyPorts{disabled: true}
	}
	p := &proxyPorts{lo: lo - belowEphemeral, hi: lo}
	// A random start, so that two harness processes on one machine rarely
	// probe the same ports.
	p.next = p.lo + rand.IntN(belowEphemeral)
	return p
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux).
func ephemeralLow() (int, bool) {
	if runtime.GOOS != "linux" {
		return 0, false
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false
	}
	lo, err := strconv.Atoi(f[0])
	return lo, err == nil
}

// listen returns a free loopback address for a new proxy: a port below the
// ephemeral range that nothing listens on, or "127.0.0.1:0" where there is
// no such range to avoid (or no free port in it).
func (p *proxyPorts) listen(int) string {
	if p.disabled {
		return "127.0.0.1:0"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for range p.hi - p.lo {
		port := p.next
		p.next++
		if p.next == p.hi {
			p.next = p.lo
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		if err := l.Close(); err != nil {
			continue
		}
		return addr
	}
	return "127.0.0.1:0"
}

// String describes the range, for errors and tests.
func (p *proxyPorts) String() string {
	if p.disabled {
		return "kernel-chosen ports"
	}
	return fmt.Sprintf("ports %d-%d", p.lo, p.hi-1)
}
