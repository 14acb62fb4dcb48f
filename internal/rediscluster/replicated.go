package rediscluster

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name the Sentinels monitor the primary under.
const MasterName = "leaselab"

// ReplicatedOptions configure StartReplicated.
type ReplicatedOptions struct {
	// Replicas of the primary. Default 1.
	Replicas int
	// Sentinels watching the primary. Default 1 (quorum 1: it alone decides
	// a failover); negative: none. Debian's redis-sentinel package only adds
	// a service and a config file: the Sentinel is `redis-server --sentinel`,
	// which the redis-server package ships.
	Sentinels int
	// DownAfter is the Sentinels' down-after-milliseconds. Default 1s.
	DownAfter time.Duration
	// Args are extra redis-server arguments for the primary and replicas.
	Args []string
	// Timeout bounds the start. Default 2m, as Options.Timeout's: a loaded
	// machine's start is slow, not broken.
	Timeout time.Duration
	// Server is the redis-server binary. Default: found on PATH.
	Server string
}

// Replicated is a primary with replicas (REPLICAOF), optionally watched by
// Sentinels.
type Replicated struct {
	// Nodes are the data nodes: Nodes[0] started as the primary, the rest as
	// its replicas. Failovers change roles: ask Primary.
	Nodes     []*Node
	Sentinels []*Node
	Dir       string

	stopOnce sync.Once
	mu       sync.Mutex
	clients  []*redis.Client
}

// StartReplicated spawns the primary, its replicas (waiting until each
// replication link is up) and the Sentinels (waiting until each knows every
// replica and every other Sentinel).
func StartReplicated(ctx context.Context, o ReplicatedOptions) (*Replicated, error) {
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Sentinels == 0 {
		o.Sentinels = 1
	}
	if o.Sentinels < 0 {
		o.Sentinels = 0
	}
	if o.DownAfter == 0 {
		o.DownAfter = time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	bin, err := serverBinary(o.Server)
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "leaselab-replicated-")
	if err != nil {
		return nil, fmt.Errorf("rediscluster: %w", err)
	}
	r := &Replicated{Dir: root}
	fail := func(err error) (*Replicated, error) { r.Stop(); return nil, err }
	args := append([]string{"--save", "", "--appendonly", "no", "--hz", "100", "--notify-keyspace-events", "Kgx$",
		"--repl-diskless-sync-delay", "0"}, o.Args...)
	p, err := spawnNode(ctx, bin, root, nil, args...)
	if err != nil {
		return fail(err)
	}
	r.Nodes = append(r.Nodes, p)
	for i := 0; i < o.Replicas; i++ {
		n, err := spawnNode(ctx, bin, root, nil, append(args, "--replicaof", "127.0.0.1", strconv.Itoa(p.Port))...)
		if err != nil {
			return fail(err)
		}
		r.Nodes = append(r.Nodes, n)
	}
	if err := r.waitLinks(ctx, p); err != nil {
		return fail(err)
	}
	quorum := o.Sentinels/2 + 1
	conf := []string{
		fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d %d", MasterName, p.Port, quorum),
		fmt.Sprintf("sentinel down-after-milliseconds %s %d", MasterName, o.DownAfter.Milliseconds()),
		fmt.Sprintf("sentinel failover-timeout %s 3000", MasterName),
		fmt.Sprintf("sentinel parallel-syncs %s 1", MasterName),
	}
	for i := 0; i < o.Sentinels; i++ {
		s, err := spawnNode(ctx, bin, root, conf, "--sentinel")
		if err != nil {
			return fail(fmt.Errorf("rediscluster: starting a Sentinel (redis-server --sentinel): %w", err))
		}
		r.Sentinels = append(r.Sentinels, s)
	}
	err = poll(ctx, 20*time.Second, "Sentinels that know every replica and each other", func(ctx context.Context) error {
		for _, s := range r.Sentinels {
			reps, err := s.Client().Do(ctx, "SENTINEL", "REPLICAS", MasterName).Slice()
			if err != nil {
				return err
			}
			if len(reps) != o.Replicas {
				return fmt.Errorf("Sentinel %s knows %d replicas", s.Addr, len(reps))
			}
			// A replica is a failover candidate once the Sentinel has
			// talked to it (info-refresh recent, link to the primary ok).
			for _, rep := range reps {
				f := fields(rep)
				if f["flags"] != "slave" || f["master-link-status"] != "ok" || f["info-refresh"] == "" || len(f["info-refresh"]) > 4 {
					return fmt.Errorf("Sentinel %s: replica %s not ready (flags %s, link %s, info-refresh %s)",
						s.Addr, f["name"], f["flags"], f["master-link-status"], f["info-refresh"])
				}
			}
			others, err := s.Client().Do(ctx, "SENTINEL", "SENTINELS", MasterName).Slice()
			if err != nil {
				return err
			}
			if len(others) != o.Sentinels-1 {
				return fmt.Errorf("Sentinel %s knows %d other Sentinels", s.Addr, len(others))
			}
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	return r, nil
}

// fields reads a SENTINEL REPLICAS entry: a flat list of names and values
// (RESP2) or a map (RESP3).
func fields(v any) map[string]string {
	m := map[string]string{}
	switch x := v.(type) {
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			m[fmt.Sprint(x[i])] = fmt.Sprint(x[i+1])
		}
	case map[any]any:
		for k, v := range x {
			m[fmt.Sprint(k)] = fmt.Sprint(v)
		}
	}
	return m
}

// waitLinks waits until every running data node but primary is its replica
// with the link up.
func (r *Replicated) waitLinks(ctx context.Context, primary *Node) error {
	return poll(ctx, 20*time.Second, "replication links up", func(ctx context.Context) error {
		for _, n := range r.Nodes {
			if n == primary || !n.Running() {
				continue
			}
			info, err := n.Client().Info(ctx, "replication").Result()
			if err != nil {
				return err
			}
			if infoField(info, "master_port") != strconv.Itoa(primary.Port) || infoField(info, "master_link_status") != "up" {
				return fmt.Errorf("%s: master_port:%s master_link_status:%s", n.Addr,
					infoField(info, "master_port"), infoField(info, "master_link_status"))
			}
		}
		return nil
	})
}

// Stop kills every node and Sentinel, closes the clients it handed out and
// removes Dir. Calling it twice is harmless.
func (r *Replicated) Stop() {
	r.stopOnce.Do(func() {
		r.mu.Lock()
		for _, c := range r.clients {
			_ = c.Close()
		}
		r.mu.Unlock()
		var wg sync.WaitGroup
		for _, n := range append(append([]*Node{}, r.Sentinels...), r.Nodes...) {
			wg.Add(1)
			go func() { defer wg.Done(); n.close() }()
		}
		wg.Wait()
		_ = os.RemoveAll(r.Dir)
	})
}

// Primary returns the one running data node that reports role:master.
func (r *Replicated) Primary(ctx context.Context) (*Node, error) {
	var found *Node
	for _, n := range r.Nodes {
		if !n.Running() {
			continue
		}
		info, err := n.Client().Info(ctx, "replication").Result()
		if err != nil {
			return nil, fmt.Errorf("rediscluster: %w", err)
		}
		if infoField(info, "role") == "master" {
			if found != nil {
				return nil, fmt.Errorf("rediscluster: two primaries: %s and %s", found.Addr, n.Addr)
			}
			found = n
		}
	}
	if found == nil {
		return nil, fmt.Errorf("rediscluster: no primary")
	}
	return found, nil
}

// SentinelAddrs are the Sentinels' addresses.
func (r *Replicated) SentinelAddrs() []string {
	a := make([]string, len(r.Sentinels))
	for i, s := range r.Sentinels {
		a[i] = s.Addr
	}
	return a
}

// FailoverClient returns a Sentinel-backed client (redis.NewFailoverClient)
// for MasterName (o may be nil; MasterName and SentinelAddrs are replaced).
// Stop closes it.
func (r *Replicated) FailoverClient(o *redis.FailoverOptions) *redis.Client {
	var opts redis.FailoverOptions
	if o != nil {
		opts = *o
	}
	opts.MasterName, opts.SentinelAddrs = MasterName, r.SentinelAddrs()
	c := redis.NewFailoverClient(&opts)
	r.mu.Lock()
	r.clients = append(r.clients, c)
	r.mu.Unlock()
	return c
}

// SentinelFailover asks the first Sentinel to fail the primary over
// (SENTINEL FAILOVER: no agreement needed) and waits until every Sentinel
// names a new primary that reports role:master and whose replicas' links
// are up. It returns the new primary.
func (r *Replicated) SentinelFailover(ctx context.Context) (*Node, error) {
	if len(r.Sentinels) == 0 {
		return nil, fmt.Errorf("rediscluster: no Sentinel")
	}
	old, err := r.Primary(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.Sentinels[0].Client().Do(ctx, "SENTINEL", "FAILOVER", MasterName).Err(); err != nil {
		return nil, fmt.Errorf("rediscluster: SENTINEL FAILOVER: %w", err)
	}
	return r.WaitSentinelPrimary(ctx, old)
}

// WaitSentinelPrimary waits until every Sentinel names a primary other than
// old (+switch-master; a FailoverClient follows it), after a kill or
// SentinelFailover, and returns it. The old primary, if alive, stays a
// writable primary until a Sentinel converts it (+convert-to-slave, on its
// next INFO of it: up to 10s later): WaitReplicated waits for that.
func (r *Replicated) WaitSentinelPrimary(ctx context.Context, old *Node) (*Node, error) {
	var now *Node
	err := poll(ctx, 20*time.Second, "a new primary named by every Sentinel", func(ctx context.Context) error {
		now = nil
		for _, s := range r.Sentinels {
			a, err := s.Client().Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MasterName).StringSlice()
			if err != nil {
				return err
			}
			if len(a) != 2 || a[1] == strconv.Itoa(old.Port) {
				return fmt.Errorf("Sentinel %s still names %v", s.Addr, a)
			}
			var n *Node
			for _, d := range r.Nodes {
				if strconv.Itoa(d.Port) == a[1] {
					n = d
				}
			}
			if n == nil || (now != nil && n != now) {
				return fmt.Errorf("Sentinels disagree or name an unknown node (%v)", a)
			}
			now = n
		}
		info, err := now.Client().Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		if infoField(info, "role") != "master" {
			return fmt.Errorf("%s is named but reports role:%s", now.Addr, infoField(info, "role"))
		}
		return nil
	})
	return now, err
}

// Promote fails over by hand, without Sentinel: REPLICAOF NO ONE on
// replica, then every other running data node replicates from it. Writes
// the replica had not received are lost (see HoldReplication).
func (r *Replicated) Promote(ctx context.Context, replica *Node) error {
	if err := replica.Client().Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("rediscluster: REPLICAOF NO ONE on %s: %w", replica.Addr, err)
	}
	for _, n := range r.Nodes {
		if n == replica || !n.Running() {
			continue
		}
		if err := n.Client().Do(ctx, "REPLICAOF", "127.0.0.1", replica.Port).Err(); err != nil {
			return fmt.Errorf("rediscluster: REPLICAOF on %s: %w", n.Addr, err)
		}
	}
	return nil
}

// WaitReplicated waits until there is one primary and every other running
// data node replicates from it with its link up.
func (r *Replicated) WaitReplicated(ctx context.Context) error {
	return poll(ctx, 20*time.Second, "one primary, every replica linked", func(ctx context.Context) error {
		p, err := r.Primary(ctx)
		if err != nil {
			return err
		}
		return r.waitLinks(ctx, p)
	})
}

// WaitInSync waits until every running replica has applied everything the
// primary wrote (see Cluster.WaitInSync).
func (r *Replicated) WaitInSync(ctx context.Context) error {
	p, err := r.Primary(ctx)
	if err != nil {
		return err
	}
	var rs []*Node
	for _, n := range r.Nodes {
		if n != p && n.Running() {
			rs = append(rs, n)
		}
	}
	return waitInSync(ctx, p, rs)
}

// HoldReplication is Cluster.HoldReplication for a replica of the pair.
func (r *Replicated) HoldReplication(ctx context.Context, replica *Node) (*Hold, error) {
	return holdWrites(ctx, replica)
}
