package model

import (
	"fmt"
	"time"
)

// FaultRedisPause pauses Redis's clients (CLIENT PAUSE) for For, as Redis
// does during a FAILOVER and operators do for maintenance. Mode
// RedisPauseWrite (the default): every write blocks until the pause ends,
// the elector's three scripts among them (they carry no no-writes flag),
// and reads answer; RedisPauseAll: every command blocks. A key whose time
// runs out meanwhile reads as gone but is deleted only after the pause. A
// blocked command whose client gave up (its read timed out: go-redis
// closes the connection) is dropped; the others run at the pause's end, in
// arrival order.
const FaultRedisPause FaultKind = "redis-pause"

// Redis pause modes (redis-pause's mode), CLIENT PAUSE's.
const (
	RedisPauseWrite = "write" // writes block, reads answer
	RedisPauseAll   = "all"   // every command blocks
)

// RedisPauseModes lists the redis-pause modes.
var RedisPauseModes = []string{RedisPauseWrite, RedisPauseAll}

var redisPauseKind = KindSpec{
	Kind:       FaultRedisPause,
	Doc:        "Redis pauses its clients' writes (or every command) for a while (CLIENT PAUSE)",
	OnRedis:    true,
	Spans:      true,
	Params:     []string{"mode"},
	ModeValues: RedisPauseModes,
	Modes:      []string{ModeRedisPause},
	Colour:     0x9467bd,
	Starter: func(sz StarterSizes) []StarterEntry {
		if sz.RedisPause <= 0 {
			return nil // not sized: the deployment's Redis is not paused
		}
		return []StarterEntry{{"redis-pause", fmt.Sprintf("Redis pauses writes for %v (CLIENT PAUSE WRITE, as during a FAILOVER or maintenance): the leader's renewals block, reads answer.", sz.RedisPause),
			Fault{Kind: FaultRedisPause, Mode: RedisPauseWrite, For: sz.RedisPause}}}
	},
	Axes: []SizeAxis{{Param: "redis_pause", Set: func(f *Fault, d time.Duration, _ float64) { f.For = d }}},
	ModeFault: func(_ string, _ Params, s FaultSize, _ time.Duration) (Fault, bool) {
		if s.RedisPause <= 0 {
			return Fault{}, false
		}
		return Fault{Kind: FaultRedisPause, Mode: RedisPauseWrite, For: s.RedisPause}, true
	},
	Needs: KindNeeds{Topologies: []Topology{RedisSingle}},
	TopologyProblem: func(redis Topology) string {
		return fmt.Sprintf("redis-pause pauses a single Redis; with redis: %s it would have to pause the node serving the lease, which is not built", redis)
	},
	scenarioProblems: redisPauseProblems,
	Size:             func(z *Sizing, f FaultOutcome, _ Fault) { z.Size.RedisPause = max(z.Size.RedisPause, lasted(f)) },
}

// redisPauseProblems: redis-pause i is one CLIENT PAUSE of the one Redis,
// whose heal unpauses every client: a second pause, a restart (a new
// process, unpaused) or a script flush during it would not do what it
// says.
func redisPauseProblems(s Scenario, i int, ok []bool, ps *problems) {
	f := s.Faults[i]
	end := s.HealAt(f)
	for j, g := range s.Faults {
		if j == i || !ok[j] || !g.Kind.OnRedis() || g.At < f.At || (g.At == f.At && j < i) || g.At >= end {
			continue
		}
		refs := []string{fmt.Sprintf("faults[%d]", i)}
		if f.For == 0 {
			refs = append(refs, "duration")
		}
		ps.badRef(fmt.Sprintf("faults[%d].at", j), refs, "%v is during the redis-pause of %s (%v to %v); a %s then would not do what it says (one CLIENT PAUSE, unpaused at its heal)", g.At, refs[0], f.At, end, g.Kind)
	}
}
