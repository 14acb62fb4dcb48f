package env

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/leaselab/leaselab/internal/rediscluster"
	"github.com/leaselab/leaselab/model"
)

// Topology is a Redis of more than one server that the harness spawned (a
// replicated pair or a Redis Cluster), and what a fault schedule can do to
// it. A failover changes the nodes' roles, never their addresses.
type Topology struct {
	// Kind is model.RedisReplicated or model.RedisCluster.
	Kind model.Topology
	// Nodes are the data nodes' addresses. In a cluster each instance gets
	// one proxy per node and a ClusterClient that dials a node through its
	// own proxy for it; a replicated pair is reached through one proxy per
	// instance whose upstream follows the primary.
	Nodes []string
	// Serving returns the address of the node that serves key now: the
	// primary, or the primary of key's hash slot.
	Serving func(ctx context.Context, key string) (string, error)
	// Failover promotes a replica of the node serving key (see the
	// redis-failover kind's lag, model/kind_redis_failover.go). switchTo is called with the
	// promoted node's address as soon as it serves, with how many bytes of
	// its primary's stream it dropped (a lossy failover's lost writes; 0
	// when clean): the harness points the instances' proxies there
	// (replicated: before the held writes resume; cluster clients follow
	// MOVED themselves) and its truth lane. Failover then waits until the
	// topology has settled (one primary per slot, every replica linked
	// again), so that the next failover finds a replica in sync.
	Failover func(ctx context.Context, key string, lag time.Duration, switchTo func(addr string, lost int64) error) error
	// Migrate moves key's hash slot to another primary and returns its
	// address; nil outside a cluster. A migration that fails is rolled back
	// (the slot stays with its source).
	Migrate func(ctx context.Context, key string) (string, error)
}

// Spawned is the provider of the topologies model.RedisReplicated and
// model.RedisCluster: the data nodes are always spawned from the local
// redis-server (a primary and a replica; or 3 primaries and 3 replicas,
// cluster-node-timeout 1s), with Toxiproxy in-process unless ToxiproxyAddr
// is given. The nodes take no password: they listen on loopback only.
// There is no Sentinel: a failover is the harness's own promotion.
type Spawned struct {
	// Redis is the topology: model.RedisReplicated or model.RedisCluster.
	Redis model.Topology
	// RedisServer is the redis-server binary. Default: found on PATH
	// (redis-cli, which creates a cluster, beside it or on PATH).
	RedisServer string
	// ToxiproxyAddr is the API address of an external Toxiproxy (host:port).
	// Default: an in-process server on a free loopback port.
	ToxiproxyAddr string
}

// Environment spawns the topology and returns it. The Environment's
// RedisAddr is the node serving keys at the start (the primary; any node of
// a cluster), and its Topology says how to follow them.
func (s Spawned) Environment(ctx context.Context) (env *Environment, err error) {
	var cs closers
	defer func() {
		if err != nil {
			_ = cs.close()
		}
	}()
	env = &Environment{}
	var t *Topology
	switch s.Redis {
	case model.RedisReplicated:
		r, err := rediscluster.StartReplicated(ctx, rediscluster.ReplicatedOptions{Sentinels: -1, Server: s.RedisServer})
		if err != nil {
			return nil, fmt.Errorf("%w: starting a primary and a replica: %v", ErrEnvironment, err)
		}
		cs.add(func() error { r.Stop(); return nil })
		t = replicatedTopology(r)
	case model.RedisCluster:
		c, err := rediscluster.Start(ctx, rediscluster.Options{Server: s.RedisServer})
		if err != nil {
			return nil, fmt.Errorf("%w: starting a Redis Cluster: %v", ErrEnvironment, err)
		}
		cs.add(func() error { c.Stop(); return nil })
		t = clusterTopology(c)
	default:
		return nil, fmt.Errorf("%w: topology %q is not spawned by this provider", ErrEnvironment, s.Redis)
	}
	env.Topology = t
	env.RedisAddr, env.ProxyUpstream = t.Nodes[0], t.Nodes[0]
	if env.Toxiproxy, err = toxiproxyAt(s.ToxiproxyAddr, &cs); err != nil {
		return nil, err
	}
	if s.ToxiproxyAddr == "" {
		// As Embedded's: a proxy re-pointed at a promoted node (or
		// re-enabled by a refuse partition's heal) listens on its port
		// again, which a port from the ephemeral range may have lost
		// meanwhile (CI: "bind: address already in use" re-pointing a
		// proxy at the promoted replica).
		env.ProxyListen = ports.listen
	}
	env.Close = cs.close
	return env, nil
}

// heldBack is how many bytes of its primary's stream replica has read and
// not applied: the writes a lossy promotion drops.
func heldBack(ctx context.Context, replica *rediscluster.Node) int64 {
	n, err := rediscluster.Lag(ctx, replica)
	if err != nil {
		return 0
	}
	return n
}

// replicatedTopology drives a primary and its replica.
func replicatedTopology(r *rediscluster.Replicated) *Topology {
	t := &Topology{Kind: model.RedisReplicated}
	for _, n := range r.Nodes {
		t.Nodes = append(t.Nodes, n.Addr)
	}
	t.Serving = func(ctx context.Context, _ string) (string, error) {
		p, err := r.Primary(ctx)
		if err != nil {
			return "", err
		}
		return p.Addr, nil
	}
	t.Failover = func(ctx context.Context, _ string, lag time.Duration, switchTo func(string, int64) error) error {
		old, err := r.Primary(ctx)
		if err != nil {
			return err
		}
		var replica *rediscluster.Node
		for _, n := range r.Nodes {
			if n != old && n.Running() {
				replica = n
			}
		}
		if replica == nil {
			return errors.New("no running replica to promote")
		}
		// paused is the node whose writes are held back: the primary's
		// clients (clean), or the replica's replication stream (lossy).
		var paused *rediscluster.Hold
		if lag == 0 {
			// Clean: hold the clients' writes on the primary, let the
			// replica apply everything, then promote it. The writes held
			// meanwhile fail over with their connections (the switch cuts
			// them) and go-redis retries them on the new primary.
			if paused, err = rediscluster.HoldWrites(ctx, old); err != nil {
				return err
			}
			if err := r.WaitInSync(ctx); err != nil {
				_ = paused.Release(context.WithoutCancel(ctx))
				return err
			}
		} else {
			// Lossy: the replica stops applying what the primary streams
			// (it buffers it), and is promoted lag later: REPLICAOF NO ONE
			// drops the buffered writes (measured on 7.0.15).
			if paused, err = r.HoldReplication(ctx, replica); err != nil {
				return err
			}
			if err := sleep(ctx, lag); err != nil {
				_ = paused.Release(context.WithoutCancel(ctx))
				return err
			}
		}
		var lost int64
		if lag > 0 {
			lost = heldBack(ctx, replica)
		}
		err = r.Promote(ctx, replica)
		if err == nil {
			err = switchTo(replica.Addr, lost)
		}
		// Writes resume only once the instances point at the new primary.
		err = errors.Join(err, paused.Release(context.WithoutCancel(ctx)))
		if err != nil {
			return err
		}
		return r.WaitReplicated(ctx)
	}
	return t
}

// clusterTopology drives a Redis Cluster.
func clusterTopology(c *rediscluster.Cluster) *Topology {
	t := &Topology{Kind: model.RedisCluster, Nodes: c.Addrs()}
	// settle waits for one primary per slot, then for the old primary's
	// resync as the new one's replica.
	settle := func(ctx context.Context) error {
		if err := c.WaitHealthy(ctx); err != nil {
			return err
		}
		return c.WaitReplicas(ctx)
	}
	t.Serving = func(ctx context.Context, key string) (string, error) {
		p, err := c.PrimaryOf(ctx, key)
		if err != nil {
			return "", err
		}
		return p.Addr, nil
	}
	t.Failover = func(ctx context.Context, key string, lag time.Duration, switchTo func(string, int64) error) error {
		primary, err := c.PrimaryOf(ctx, key)
		if err != nil {
			return err
		}
		replicas, err := c.ReplicasOf(ctx, primary)
		if err != nil {
			return err
		}
		if len(replicas) == 0 {
			return fmt.Errorf("%s has no replica in sync to promote", primary.Addr)
		}
		replica := replicas[0]
		if lag == 0 {
			// A coordinated CLUSTER FAILOVER pauses the primary's clients
			// until the replica has every write, then switches; clients
			// follow the MOVED the old primary answers.
			if err := c.Failover(ctx, replica, rediscluster.Coordinated); err != nil {
				return err
			}
			if err := switchTo(replica.Addr, 0); err != nil {
				return err
			}
			return settle(ctx)
		}
		// Lossy: the replica buffers what its primary streams and applies
		// nothing; lag later it takes over without a vote (TAKEOVER), which
		// drops the buffered writes. Its own writes stay paused until the
		// hold is released.
		hold, err := c.HoldReplication(ctx, replica)
		if err != nil {
			return err
		}
		var lost int64
		err = sleep(ctx, lag)
		if err == nil {
			lost = heldBack(ctx, replica)
			err = c.Failover(ctx, replica, rediscluster.Takeover)
		}
		if err == nil {
			err = switchTo(replica.Addr, lost)
		}
		if err = errors.Join(err, hold.Release(context.WithoutCancel(ctx))); err != nil {
			return err
		}
		return settle(ctx)
	}
	t.Migrate = func(ctx context.Context, key string) (string, error) {
		from, err := c.PrimaryOf(ctx, key)
		if err != nil {
			return "", err
		}
		ps, err := c.Primaries(ctx)
		if err != nil {
			return "", err
		}
		for _, to := range ps {
			if to != from {
				return to.Addr, c.MigrateSlot(ctx, key, to)
			}
		}
		return "", errors.New("no other primary to move the slot to")
	}
	return t
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
