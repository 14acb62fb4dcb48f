package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// FaultLatency adds Latency ± Jitter per Direction to the instance's link
// to Redis.
const FaultLatency FaultKind = "latency"

// Latency directions.
const (
	DirectionBoth     = "both"
	DirectionRequests = "requests"
	DirectionReplies  = "replies"
)

var latencyKind = KindSpec{
	Kind:   FaultLatency,
	Doc:    "every call of the instance is slower, one way or both",
	Params: []string{"latency", "jitter", "direction"},
	Modes:  []string{ModeLatency},
	Colour: 0xbcbd22,
	Starter: func(sz StarterSizes) []StarterEntry {
		return []StarterEntry{{"latency", fmt.Sprintf("Every call of the leader is %v slower each way.", sz.Latency),
			Fault{Kind: FaultLatency, For: sz.Long, Latency: sz.Latency, Target: Target{Role: RoleLeader}}}}
	},
	Axes: []SizeAxis{{Param: "latency", Set: func(f *Fault, d time.Duration, _ float64) { f.Latency, f.Jitter = d, min(f.Jitter, d) }}},
	ModeFault: func(_ string, _ Params, s FaultSize, long time.Duration) (Fault, bool) {
		if s.Latency < time.Millisecond {
			return Fault{}, false
		}
		return Fault{Kind: FaultLatency, For: long, Latency: s.Latency.Round(time.Millisecond)}, true
	},
	Text: func(f Fault, dur func(time.Duration) string) []string {
		l := dur(f.Latency)
		if f.Jitter > 0 {
			l += " ± " + dur(f.Jitter)
		}
		return []string{"latency " + l, "direction " + cmp.Or(f.Direction, DirectionBoth)}
	},
	defaults: func(f *Fault) {
		if f.Direction == "" {
			f.Direction = DirectionBoth
		}
	},
	describe: func(f Fault, add func(k string, v any)) {
		add("latency", f.Latency)
		if f.Jitter > 0 {
			add("jitter", f.Jitter)
		}
		add("direction", f.Direction)
	},
	problems: func(c faultCheck) {
		f := c.f
		switch {
		case f.Jitter < 0:
			c.bad(".jitter", "%v; must not be negative", f.Jitter)
		case f.Latency > 0 && f.Jitter > f.Latency:
			c.bad(".jitter", "%v is more than the latency %v (the delay would go negative)", f.Jitter, f.Latency)
		}
		if dirs := []string{DirectionBoth, DirectionRequests, DirectionReplies}; !slices.Contains(dirs, f.Direction) {
			c.bad(".direction", "unknown direction %q; want one of %s", f.Direction, strings.Join(dirs, ", "))
		}
	},
	scaledProblems: func(c faultCheck, scaled string) {
		if c.f.Latency < time.Millisecond {
			// Toxiproxy takes whole milliseconds; less would be 0.
			c.badRef(".latency", []string{"time_scale"}, "%v%s; must be at least 1ms", c.f.Latency, scaled)
		}
	},
	Size:           latencySize,
	SlowsReplies:   func(Fault) bool { return true },
	SlowWinner:     true,
	StretchesCalls: true,
	Phantoms:       latencyPhantoms,
	HoldsRequests: func(sf Fault) time.Duration {
		if sf.Direction == DirectionReplies {
			return 0
		}
		return sf.Latency + sf.Jitter
	},
}

// latencySize adds latency fault f to the size. Toxiproxy carries Latency
// - Jitter and the seeded part adds 0 to 2 × Jitter: one way ranges over
// Latency ± Jitter. Latency faults in force together on one instance add
// up.
func latencySize(z *Sizing, f FaultOutcome, sf Fault) {
	s, sc := z.Size, z.Scenario
	var req, rep time.Duration
	for _, g := range z.Faults {
		if FaultKind(g.Kind) != FaultLatency || g.ID < 0 || g.ID >= len(sc.Faults) ||
			g.Applied > f.Healed || f.Applied > g.Healed || !SharesTarget(f, g) {
			continue
		}
		gf := sc.Faults[g.ID]
		if gf.Direction != DirectionReplies {
			req += gf.Latency + gf.Jitter
		}
		if gf.Direction != DirectionRequests {
			rep += gf.Latency + gf.Jitter
		}
	}
	lo := sf.Latency - sf.Jitter
	minRTT := 2 * lo
	if sf.Direction == DirectionRequests || sf.Direction == DirectionReplies {
		minRTT = lo
	}
	if s.Latency == 0 {
		s.LatencyMinRTT = minRTT
	}
	s.Latency = max(s.Latency, req, rep)
	s.LatencyRTT = max(s.LatencyRTT, req+rep)
	s.LatencyMinRTT = min(s.LatencyMinRTT, minRTT)
	s.LatencyFor = max(s.LatencyFor, lasted(f))
}

// latencyPhantoms: latency leaves an unseen acquire only where a reply can
// come too late: none when every round trip beats the attempt timeout (or
// safe mode's acquire deadline, TTL - margin; a follower that wins late is
// slowWinner's); one when every round trip misses it (the retries' and
// later attempts' handshakes time out first); and when round trips
// straddle it, one per TTL while it lasts and its last command is on the
// wire, ceil((span + L)/TTL) + 1: a retry's handshake may be answered and
// its command time out, at each attempt (explore: a follower under 2.5 s ±
// 600 ms both ways after a leader's crash, 16.94 s of the crash's 11 s).
func latencyPhantoms(p Params, f Fault, g FaultOutcome, perTTL func(time.Duration) int) int {
	if f.Kind != FaultLatency {
		return 1 // its scenario fault is not known
	}
	hi, lo := f.Latency+f.Jitter, max(f.Latency-f.Jitter, 0)
	rtt, minRTT := 2*hi, 2*lo
	if f.Direction == DirectionRequests || f.Direction == DirectionReplies {
		rtt, minRTT = hi, lo
	}
	t := AttemptTimeout(p)
	if p.Guarded() {
		t = min(t, p.TTL-p.GuardMargin())
	}
	switch {
	case rtt < t:
		return 0
	case minRTT >= t:
		return 1
	}
	return perTTL(hi)
}
