package sweep

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

var (
	comboAll    = flag.Bool("combo.all", false, "search the whole combination corpus (TestCombinationCorpus), not a sample")
	comboSample = flag.Int("combo.sample", 8, "combinations TestCombinationCorpus searches when not -combo.all")
	comboBudget = flag.Int("combo.budget", 300, "explore runs per combination")
	comboSeed   = flag.Uint64("combo.seed", 1, "which sample TestCombinationCorpus draws")
	comboMatch  = flag.String("combo.match", "", "search only the combinations whose name matches this regexp (TestCombinationCorpus)")
)

// comboFaults are the fault kinds the combination corpus pairs, each as a
// fault of its usual size aimed at the leader (a Redis fault hits every
// instance).
var comboFaults = []model.Fault{
	{Kind: model.FaultCrash},
	{Kind: model.FaultPause, For: 4 * time.Second},
	{Kind: model.FaultSuspend, For: 4 * time.Second},
	{Kind: model.FaultClock, For: 10 * time.Second, Rate: 0.5},
	{Kind: model.FaultLatency, For: 10 * time.Second, Latency: time.Second},
	{Kind: model.FaultPartition, Mode: model.PartitionBlackhole, For: 10 * time.Second},
	{Kind: model.FaultPartition, Mode: model.PartitionBlackholeReplies, For: 10 * time.Second},
	{Kind: model.FaultPartition, Mode: model.PartitionRefuse, For: 10 * time.Second},
	{Kind: model.FaultPartition, Mode: model.PartitionReset, For: 10 * time.Second},
	{Kind: model.FaultRedisRestart},
	{Kind: model.FaultRedisPause, For: 8 * time.Second},
	{Kind: model.FaultScriptFlush},
	// Replicated and cluster topologies only (the validator refuses them
	// on a single Redis): a clean failover, a lossy one (the replica a
	// lease behind), a slot migration.
	{Kind: model.FaultRedisFailover},
	{Kind: model.FaultRedisFailover, Lag: 6 * time.Second},
	{Kind: model.FaultSlotMigration},
}

// comboTopologies are the Redis topologies the corpus runs each pair on.
var comboTopologies = []model.Topology{model.RedisSingle, model.RedisReplicated, model.RedisCluster}

// comboPlacements put the second fault on the same leader, on the next
// leader (after the first fault's failover) or on a follower.
var comboPlacements = []struct {
	name  string
	after time.Duration
	role  string
}{
	{"same-leader", time.Second, model.RoleLeader},
	{"next-leader", 14 * time.Second, model.RoleLeader},
	{"follower", 500 * time.Millisecond, model.RoleFollower},
}

// comboScenario is one combination: fault a, then fault b placed by p,
// the first at 1 s (before the first renewal: a cold script cache) or at
// 6.25 s (warm).
func comboScenario(a, b model.Fault, p int, cold bool, topo model.Topology) model.Scenario {
	at := 6250 * time.Millisecond
	if cold {
		at = time.Second
	}
	pl := comboPlacements[p]
	a.At, b.At = at, at+pl.after
	// A role nobody has then (the leader crashed, no follower yet) skips
	// the fault: the rest of the schedule is still searched.
	if !a.Kind.OnRedis() {
		a.Target, a.AllowSkipped = model.Target{Role: model.RoleLeader}, true
	}
	if !b.Kind.OnRedis() {
		b.Target, b.AllowSkipped = model.Target{Role: pl.role}, true
	}
	cache := map[bool]string{true: "cold", false: "warm"}[cold]
	kind := func(f model.Fault) string {
		switch {
		case f.Mode != "":
			return string(f.Kind) + "." + f.Mode
		case f.Lag > 0:
			return string(f.Kind) + ".lossy"
		}
		return string(f.Kind)
	}
	name := fmt.Sprintf("combo-%s-%s-%s-%s-%s", kind(a), kind(b), pl.name, cache, topo)
	exp := []model.Expectation{}
	for _, m := range ExploreMetrics {
		exp = append(exp, model.Expectation{Metric: model.Metric(m), Max: "predicted", Slack: time.Millisecond})
	}
	return model.Scenario{Name: name, Redis: topo, Instances: 3, Duration: 40 * time.Second, Recovery: 15 * time.Second,
		Faults: []model.Fault{a, b}, Expect: exp}
}

// TestCombinationCorpus: pairs of fault kinds × {the same leader, the next
// leader, a follower} × {cold script cache, warm} × {single, replicated,
// cluster}, each searched by explore on the virtual backend; no schedule
// may beat a predicted bound. CI searches a sample; the whole corpus (4,050
// combinations, those the topology cannot run refused), or the
// combinations whose name matches a regexp:
//
//	go test ./sweep -run TestCombinationCorpus -combo.all -timeout 2h
//	go test ./sweep -run TestCombinationCorpus -combo.match script-flush
func TestCombinationCorpus(t *testing.T) {
	type combo struct {
		a, b, p int
		cold    bool
		topo    model.Topology
	}
	var all []combo
	for _, topo := range comboTopologies {
		for a := range comboFaults {
			for b := range comboFaults {
				for p := range comboPlacements {
					for _, cold := range []bool{true, false} {
						all = append(all, combo{a, b, p, cold, topo})
					}
				}
			}
		}
	}
	scenario := func(c combo) model.Scenario {
		return comboScenario(comboFaults[c.a], comboFaults[c.b], c.p, c.cold, c.topo)
	}
	// The validator refuses a kind the topology lacks (a failover on a
	// single Redis), and a fault in force when another cannot act: those
	// are no schedules, and a sample draws among the others.
	var valid []combo
	invalid := 0
	for _, c := range all {
		if sc := scenario(c); sc.Validate() != nil {
			invalid++
		} else {
			valid = append(valid, c)
		}
	}
	all = valid
	if *comboMatch != "" {
		re, err := regexp.Compile(*comboMatch)
		if err != nil {
			t.Fatalf("-combo.match: %v", err)
		}
		var kept []combo
		for _, c := range all {
			if re.MatchString(scenario(c).Name) {
				kept = append(kept, c)
			}
		}
		all = kept
	} else if !*comboAll {
		r := rand.New(rand.NewPCG(*comboSeed, 0))
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		all = all[:min(*comboSample, len(all))]
	}
	for _, c := range all {
		sc := scenario(c)
		res, err := Explore(context.Background(), Space{Base: sc, Budget: *comboBudget, Seeds: 2}, ExploreOptions{})
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		for _, w := range res.Violations() {
			t.Errorf("%s: %s %v > %v (%s); schedule %s", sc.Name, w.Metric, w.Measured, w.Predicted, w.Formula, res.scheduleText(w.Schedule))
		}
	}
	t.Logf("%d combinations searched; %d of the corpus are not valid schedules", len(all), invalid)
}
