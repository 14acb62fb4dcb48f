package process_test

import (
	"context"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/internal/rediscluster"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/process"
)

// TestClusterBuiltinsOnProcesses: the Redis Cluster built-ins run on agent
// processes, which reach every node through their own proxy to it
// (LEASELAB_REDIS_NODES): a lossy failover of the lease's primary and a
// migration of its slot pass as on the real backend. An agent given one
// node's address alone never holds the lease (the key's slot answers
// MOVED), so a pass is the node map at work.
func TestClusterBuiltinsOnProcesses(t *testing.T) {
	rediscluster.NeedTools(t)
	bin := chaosAgent(t)
	for _, name := range []string{"redis-failover-lossy", "slot-migration"} {
		t.Run(name, func(t *testing.T) {
			e, ok := scenarios.Lookup(name)
			if !ok {
				t.Fatalf("no built-in %s", name)
			}
			sc := e.Scenario
			sc.TimeScale = 0.5
			res, err := sim.Run(context.Background(), sc, process.Backend{Agent: bin}, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != model.Pass {
				t.Errorf("verdict %s: %v", res.Verdict, res.Reasons)
			}
			if res.Analysis.Summary.LeaderGains == 0 {
				t.Error("no instance ever led")
			}
			s := res.Analysis.Summary
			t.Logf("%s on processes: max gap %v, max overlap %v, failover max %v, stale max %v", name, s.MaxGap, s.MaxOverlap, s.Failover.Max, s.MaxStale)
			assertNoAgents(t)
		})
	}
}

// TestClusterNeedsTheCapability: an agent that does not declare cluster
// is refused a redis: cluster scenario, saying why, before anything runs.
func TestClusterNeedsTheCapability(t *testing.T) {
	rediscluster.NeedTools(t)
	sc := short()
	sc.Redis = model.RedisCluster
	res, err := sim.Run(context.Background(), sc, process.Backend{Agent: python(t)}, sim.Options{})
	if !sim.IsRefusal(err) || res != nil {
		t.Fatalf("result %v, error %v: want a refusal, nothing run", res != nil, err)
	}
	if want := `does not declare the "cluster" capability in its hello (it declares stop): redis: cluster gives the agent every node`; !strings.Contains(err.Error(), want) {
		t.Fatalf("refusal %q, want %q", err, want)
	}
	assertNoAgents(t)
}
