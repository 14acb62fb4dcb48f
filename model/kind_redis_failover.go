package model

import (
	"fmt"
	"time"
)

// FaultRedisFailover promotes a replica of the node that serves the lease
// (redis: replicated or cluster). With Lag 0 the failover is clean: writes
// stop, the replica catches up, then takes over. With a Lag the replica
// stops applying writes at At and is promoted Lag later without them: every
// write of that Lag is lost, the lease's renewals (and, if the Lag outlasts
// what is left of the lease, the lease itself) among them.
const FaultRedisFailover FaultKind = "redis-failover"

var redisFailoverKind = KindSpec{
	Kind:           FaultRedisFailover,
	Doc:            "a replica of the lease's node is promoted, clean or losing Lag of writes",
	OnRedis:        true,
	EmptiesScripts: true,
	Params:         []string{"lag"},
	Modes:          []string{ModeFailover},
	Colour:         0x637939,
	NoStarter:      "it needs replicas (redis: replicated or cluster), and the starter suite runs on a single Redis",
	Axes:           []SizeAxis{{Param: "lag", Set: func(f *Fault, d time.Duration, _ float64) { f.Lag = d }}},
	NoModeFault:    "advise's confirming scenarios run on a single Redis, and a failover needs replicas",
	Needs:          KindNeeds{Topologies: []Topology{RedisReplicated, RedisCluster}},
	TopologyProblem: func(Topology) string {
		return "redis-failover needs replicas: set redis: replicated or redis: cluster"
	},
	Text:     func(f Fault, dur func(time.Duration) string) []string { return []string{"lag " + dur(f.Lag)} },
	describe: func(f Fault, add func(k string, v any)) { add("lag", f.Lag) },
	problems: func(c faultCheck) {
		switch f := c.f; {
		case f.Lag < 0:
			c.bad(".lag", "%v; must not be negative", f.Lag)
		case c.inPhase() && f.At+f.Lag > c.s.Duration:
			c.badRef(".lag", []string{"duration"}, "the failover would come at %v, after the fault phase (duration %v)", f.At+f.Lag, c.s.Duration)
		}
	},
	scenarioProblems: failoverLagProblems,
	PlanEnd:          func(f Fault) time.Duration { return f.At + f.Lag + DefaultFailoverSwitch },
	Size: func(z *Sizing, f FaultOutcome, sf Fault) {
		// From the start (writes stop reaching the replica) to the switch:
		// the time the replica's copy of the lease must outlive.
		s, a := z.Size, f.Healed-f.Applied
		s.Failover = max(s.Failover, a)
		s.FailoverLag = max(s.FailoverLag, sf.Lag)
		s.FailoverSwitch = max(s.FailoverSwitch, a-min(sf.Lag, a))
	},
}

// failoverLagProblems: failover i holds the schedule for its lag (the
// replica is held back, then promoted): nothing else may be due meanwhile,
// or it would run late.
func failoverLagProblems(s Scenario, i int, ok []bool, ps *problems) {
	f := s.Faults[i]
	if f.Lag <= 0 {
		return
	}
	for j, g := range s.Faults {
		if j == i || !ok[j] {
			continue
		}
		due := []time.Duration{g.At}
		if !g.Instant() {
			due = append(due, s.HealAt(g))
		}
		for _, t := range due {
			if (t > f.At || (t == f.At && j > i)) && t <= f.At+f.Lag {
				other := fmt.Sprintf("faults[%d]", i)
				ps.badRef(fmt.Sprintf("faults[%d]", j), []string{other, "duration"}, "is due at %v, while the failover %s holds the schedule (its lag runs from %v to %v); move it out", t, other, f.At, f.At+f.Lag)
				break
			}
		}
	}
}
