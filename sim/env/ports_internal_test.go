package env

import (
	"context"
	"net"
	"strconv"
	"testing"

	"github.com/leaselab/leaselab/internal/rediscluster"
	"github.com/leaselab/leaselab/model"
)

// TestProxiesListenBelowTheEphemeralRange: the in-process Toxiproxy's
// proxies get ports the kernel never hands out by itself, so a refuse
// partition's heal can listen on its port again, and the proxy it names
// takes it (a disabled proxy's port is not taken by a ":0" listener meanwhile).
// The spawned topologies' too: their proxies are re-pointed at a promoted
// node, which listens on the port again.
func TestProxiesListenBelowTheEphemeralRange(t *testing.T) {
	lo, ok := ephemeralLow()
	if !ok {
		t.Skip("no ephemeral port range to read (not Linux)")
	}
	t.Run("embedded", func(t *testing.T) {
		en, err := Embedded{}.Environment(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = en.Close() }()
		proxyPortHeld(t, en, lo)
	})
	t.Run("replicated", func(t *testing.T) {
		rediscluster.NeedTools(t)
		en, err := Spawned{Redis: model.RedisReplicated}.Environment(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = en.Close() }()
		proxyPortHeld(t, en, lo)
	})
}

// proxyPortHeld checks that en's proxies listen below the ephemeral range
// (whose first port is lo) and get their port back when re-enabled.
func proxyPortHeld(t *testing.T, en *Environment, lo int) {
	t.Helper()
	if en.ProxyListen == nil {
		t.Fatal("ProxyListen is nil for the in-process Toxiproxy")
	}
	p, err := en.Toxiproxy.CreateProxy("ports-test", en.ProxyListen(0), en.ProxyUpstream)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(p.Listen)
	n, _ := strconv.Atoi(port)
	if n >= lo || n < lo-belowEphemeral {
		t.Fatalf("proxy listens on %s; want a port in [%d, %d)", p.Listen, lo-belowEphemeral, lo)
	}
	if err := p.Disable(); err != nil {
		t.Fatal(err)
	}
	// Listeners the kernel places cannot land on the disabled port.
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
		if l.Addr().(*net.TCPAddr).Port == n {
			t.Fatalf("a :0 listener took the disabled proxy's port %d", n)
		}
	}
	if err := p.Enable(); err != nil {
		t.Fatalf("re-enabling the proxy on %s: %v", p.Listen, err)
	}
	c, err := net.Dial("tcp", p.Listen)
	if err != nil {
		t.Fatalf("dialing the re-enabled proxy: %v", err)
	}
	_ = c.Close()
}
