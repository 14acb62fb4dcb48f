package agent

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestClusterNodesRoundTrip(t *testing.T) {
	nodes := map[string]string{"127.0.0.1:7001": "127.0.0.1:40001", "127.0.0.1:7000": "127.0.0.1:40000"}
	s := FormatClusterNodes(nodes)
	if s != "127.0.0.1:7000=127.0.0.1:40000,127.0.0.1:7001=127.0.0.1:40001" {
		t.Fatalf("formatted %q", s)
	}
	got, err := ClusterNodes(func(k string) string { return map[string]string{ClusterNodesVar: s}[k] })
	if err != nil || len(got) != 2 || got["127.0.0.1:7001"] != "127.0.0.1:40001" {
		t.Fatalf("read back %v, %v", got, err)
	}
	if got, err := ClusterNodes(func(string) string { return "" }); got != nil || err != nil {
		t.Fatalf("unset: %v, %v; want nil, nil", got, err)
	}
	for _, bad := range []string{"127.0.0.1:7000", "a=b,a=c", "=b"} {
		if _, err := ClusterNodes(func(string) string { return bad }); err == nil || !strings.Contains(err.Error(), ClusterNodesVar) {
			t.Errorf("%q: error %v, want one naming %s", bad, err, ClusterNodesVar)
		}
	}
}

// TestClusterClientDialsTheProxy: the client knows a node by its own
// address and dials the node's proxy for it, never the node itself.
func TestClusterClientDialsTheProxy(t *testing.T) {
	var dialed []string
	c := NewClusterClient(&redisOptionsForTest, map[string]string{"10.9.9.9:7000": "127.0.0.1:1"},
		func(ctx context.Context, network, proxy string) (net.Conn, error) {
			dialed = append(dialed, proxy)
			return nil, &net.OpError{Op: "dial", Net: network, Err: errRefusedForTest}
		})
	defer c.Close()
	_ = c.Ping(context.Background()).Err()
	if len(dialed) == 0 {
		t.Fatal("never dialed")
	}
	for _, d := range dialed {
		if d != "127.0.0.1:1" {
			t.Fatalf("dialed %q, want only the proxy 127.0.0.1:1", d)
		}
	}
}

var (
	redisOptionsForTest = redis.Options{MaxRetries: -1}
	errRefusedForTest   = errors.New("refused by the test")
)
