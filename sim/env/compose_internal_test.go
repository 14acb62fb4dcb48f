package env

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestParsePortRange(t *testing.T) {
	for in, want := range map[string]PortRange{
		"21000-21031": {21000, 21031},
		" 21000 ":     {21000, 21000},
		"1-65535":     {1, 65535},
	} {
		got, err := ParsePortRange(in)
		if err != nil || got != want {
			t.Errorf("ParsePortRange(%q) = %v, %v; want %v", in, got, err, want)
		}
		if again, _ := ParsePortRange(got.String()); again != got {
			t.Errorf("%v does not round-trip through String: %q", got, got.String())
		}
	}
	for _, in := range []string{"", "x", "21031-21000", "0-10", "65000-70000", "1-2-3", "21000-"} {
		if r, err := ParsePortRange(in); err == nil {
			t.Errorf("ParsePortRange(%q) = %v, want an error", in, r)
		}
	}
}

// TestExternalProxyPorts drives External against an in-process Toxiproxy,
// as a stand-in for one in a container: ports come from the range, runs
// of one process share it without overlap, a proxy already listening on a
// port keeps it, and a range too small is an error before anything starts.
func TestExternalProxyPorts(t *testing.T) {
	api, stop, err := startToxiproxy()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx := context.Background()
	// Only the range's first port is listened on (by the left-over proxy
	// below): a free one. The others are only handed out.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := l.Addr().(*net.TCPAddr).Port
	l.Close()
	port := func(i int) string { return strconv.Itoa(first + i) }
	ext := External{RedisAddr: "127.0.0.1:1", ToxiproxyAddr: api, ProxyUpstream: "redis:6379",
		ProxyPorts: PortRange{First: first, Last: first + 4}, ProxyHost: "127.0.0.1"}

	// A proxy left by someone else holds the range's first port.
	other, err := ext.Environment(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := other.ProxyListen(0); got != "0.0.0.0:"+port(0) {
		t.Fatalf("first listen address %q, want 0.0.0.0:%s", got, port(0))
	}
	if _, err := other.Toxiproxy.CreateProxy("left-over", "127.0.0.1:"+port(0), "127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}

	a, err := ext.EnvironmentFor(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ext.EnvironmentFor(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{a.ProxyListen(0), a.ProxyListen(1), b.ProxyListen(0), b.ProxyListen(1)}
	want := []string{"0.0.0.0:" + port(1), "0.0.0.0:" + port(2), "0.0.0.0:" + port(3), "0.0.0.0:" + port(4)}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("listen addresses %v, want %v", got, want)
	}
	if a.ProxyUpstream != "redis:6379" || a.RestartRedis != nil {
		t.Errorf("upstream %q, restart %v; want redis:6379 and none", a.ProxyUpstream, a.RestartRedis != nil)
	}
	if d := a.DialAddr("[::]:" + port(1)); d != "127.0.0.1:"+port(1) {
		t.Errorf("DialAddr([::]:%s) = %q, want 127.0.0.1:%s", port(1), d, port(1))
	}

	// The range is full: the next run is refused, saying why.
	if _, err := ext.EnvironmentFor(ctx, 1); err == nil || !strings.Contains(err.Error(), "no free proxy port in "+ext.ProxyPorts.String()) {
		t.Errorf("EnvironmentFor on a full range: %v", err)
	}
	// Without the instance count, the first proxy past the range fails at
	// Toxiproxy, naming the cause.
	c, err := ext.Environment(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Toxiproxy.CreateProxy("past-range", c.ProxyListen(0), "127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), exhaustedHost) {
		t.Errorf("creating a proxy past the range: %v; want an error naming %s", err, exhaustedHost)
	}
	_ = c.Close()

	// Closing gives the ports back.
	_ = a.Close()
	d, err := ext.EnvironmentFor(ctx, 2)
	if err != nil {
		t.Fatalf("after a run closed: %v", err)
	}
	if got := d.ProxyListen(1); got != "0.0.0.0:"+port(2) {
		t.Errorf("after a run closed, listen %q, want its port %s again", got, port(2))
	}
	_ = d.Close()
	_ = b.Close()
}

func TestExternalNeedsAddresses(t *testing.T) {
	if _, err := (External{RedisAddr: "127.0.0.1:6379"}).Environment(context.Background()); err == nil {
		t.Error("External without a Toxiproxy address: no error")
	}
}

func TestHostOf(t *testing.T) {
	for in, want := range map[string]string{"127.0.0.1:8474": "127.0.0.1", "0.0.0.0:8474": "127.0.0.1", "[::]:8474": "127.0.0.1", "docker-host:8474": "docker-host"} {
		if got := hostOf(in); got != want {
			t.Errorf("hostOf(%q) = %q, want %q", in, got, want)
		}
	}
}
