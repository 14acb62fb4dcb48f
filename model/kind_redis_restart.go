package model

import (
	"fmt"
	"time"
)

// FaultRedisRestart restarts Redis, empty (the lease is lost).
const FaultRedisRestart FaultKind = "redis-restart"

var redisRestartKind = KindSpec{
	Kind:           FaultRedisRestart,
	Doc:            "Redis restarts empty: the lease vanishes",
	OnRedis:        true,
	EmptiesScripts: true,
	Modes:          []string{ModeLeaseLoss},
	Colour:         0xe377c2,
	Starter: func(StarterSizes) []StarterEntry {
		return []StarterEntry{{"redis-restart", "Redis restarts empty: the lease vanishes behind the leader's back.", Fault{Kind: FaultRedisRestart}}}
	},
	NoAxes: "a restart is one action: how long Redis is down is the environment's (the virtual backend's RedisDowntime), not the fault's",
	ModeFault: func(string, Params, FaultSize, time.Duration) (Fault, bool) {
		return Fault{Kind: FaultRedisRestart}, true
	},
	Needs: KindNeeds{Topologies: []Topology{RedisSingle}, OwnedRedis: true},
	TopologyProblem: func(redis Topology) string {
		return fmt.Sprintf("redis-restart restarts a single Redis; with redis: %s use redis-failover", redis)
	},
	// From before the restart began to after Redis answered again: an
	// upper bound of the downtime, as the bound needs.
	Size: func(z *Sizing, f FaultOutcome, _ Fault) {
		z.Size.RedisDowntime = max(z.Size.RedisDowntime, f.Healed-f.Applied)
	},
}
