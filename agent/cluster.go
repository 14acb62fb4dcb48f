package agent

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ClusterNodesVar is the environment variable that gives an agent the
// Redis Cluster of a redis: cluster scenario (ClusterNodes).
const ClusterNodesVar = "LEASELAB_REDIS_NODES"

// ClusterNodes reads the Redis Cluster the harness gives an agent in
// LEASELAB_REDIS_NODES: one node=proxy pair per cluster node, comma
// separated ("127.0.0.1:7000=127.0.0.1:41001,..."). The node is the
// address the cluster itself names (CLUSTER SLOTS, MOVED, ASK); the proxy
// is this instance's own proxy to that node, where the harness's faults
// act on it: a client must know the nodes by the first and dial the
// second (NewClusterClient does). nil and no error when the variable is
// unset (a single or replicated Redis: LEASELAB_REDIS_ADDR).
func ClusterNodes(getenv func(string) string) (map[string]string, error) {
	v := strings.TrimSpace(getenv(ClusterNodesVar))
	if v == "" {
		return nil, nil
	}
	nodes := map[string]string{}
	for _, pair := range strings.Split(v, ",") {
		node, proxy, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || node == "" || proxy == "" {
			return nil, fmt.Errorf("agent: %s: %q is not node=proxy", ClusterNodesVar, pair)
		}
		if _, dup := nodes[node]; dup {
			return nil, fmt.Errorf("agent: %s: node %s given twice", ClusterNodesVar, node)
		}
		nodes[node] = proxy
	}
	return nodes, nil
}

// FormatClusterNodes writes nodes (node address → proxy address) as
// ClusterNodes reads them, in the nodes' order.
func FormatClusterNodes(nodes map[string]string) string {
	pairs := make([]string, 0, len(nodes))
	for node, proxy := range nodes {
		pairs = append(pairs, node+"="+proxy)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// NewClusterClient is a go-redis ClusterClient for nodes (ClusterNodes)
// that knows every node by its own address and reaches it only through
// its proxy, so that it learns the slot map from the nodes and follows
// MOVED and ASK as a client of the cluster does, while every byte passes
// the harness's faults. o gives what a single-node client would use:
// credentials, timeouts, retries, pool size (its Addr and Dialer are not
// used). dial dials a proxy's address; nil: a net.Dialer.
func NewClusterClient(o *redis.Options, nodes map[string]string, dial func(ctx context.Context, network, proxy string) (net.Conn, error)) *redis.ClusterClient {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	addrs := make([]string, 0, len(nodes))
	for node := range nodes {
		addrs = append(addrs, node)
	}
	sort.Strings(addrs)
	return redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: addrs,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			proxy, ok := nodes[addr]
			if !ok {
				return nil, fmt.Errorf("no proxy for cluster node %s", addr)
			}
			return dial(ctx, network, proxy)
		},
		Username:              o.Username,
		Password:              o.Password,
		ReadTimeout:           o.ReadTimeout,
		WriteTimeout:          o.WriteTimeout,
		DialTimeout:           o.DialTimeout,
		MaxRetries:            o.MaxRetries,
		ContextTimeoutEnabled: o.ContextTimeoutEnabled,
		PoolSize:              o.PoolSize,
	})
}
