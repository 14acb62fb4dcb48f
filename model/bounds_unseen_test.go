package model

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// UnseenAcquire: a key of TTL blocks ceil(TTL/Wait) of a follower's
// attempts, each Wait + hop after the last.
func TestUnseenAcquire(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		ttl, wait, want time.Duration
	}{
		{5 * time.Second, 6 * time.Second, 6001 * ms},
		{6 * time.Second, 6 * time.Second, 6001 * ms},
		{10 * time.Second, 3 * time.Second, 4 * 3001 * ms},
		{2 * time.Second, 3 * time.Second, 3001 * ms},
	} {
		got, f := UnseenAcquire(Params{TTL: tt.ttl, Wait: tt.wait})
		if got != tt.want || !strings.Contains(f, BoundText(got)) {
			t.Errorf("TTL %v, Wait %v: %v (%s), want %v", tt.ttl, tt.wait, got, f, tt.want)
		}
	}
}

// gapAndFailoverBounds evaluates a leader crash at 5.0225 s, the follower
// faults extra adds to the timeline, and the healthy follower's win at
// end; it returns the max_gap and failover limits.
func gapAndFailoverBounds(t *testing.T, params Params, follower []Fault, script func(*analysisScript), win float64) (gap, failover Check) {
	t.Helper()
	sc := Scenario{Params: params, Instances: 4,
		Faults: append([]Fault{{At: 5022500 * time.Microsecond, Kind: FaultCrash, Target: Target{Role: RoleLeader}}}, follower...),
		Expect: []Expectation{{Metric: "max_gap", Max: "predicted"}, {Metric: "failover", Max: "predicted"}}}
	s := new(analysisScript).gain(0, 0, "a").fault(5.0225, 0, "crash", "", 0).crash(5.0225, 0, "a")
	script(s)
	tl := s.gain(win, 2, "c").end(40)
	slices.SortStableFunc(tl, func(x, y Event) int { return int(x.At - y.At) })
	_, ev := evaluateOn(sc, tl)
	return checkOf(t, ev, "max_gap"), checkOf(t, ev, "failover")
}

// A follower crashed between its SET NX's landing and the reply, or cut
// off by a partition that let the SET NX through, holds the key for a TTL
// nobody believes: the crashed leader's gap (TTL + Wait) runs on for
// ceil(TTL/Wait) × (Wait + hop) per such follower
// (follower-crash-mid-acquire: 16.999 s of the 11 s the leader's crash
// alone allowed). A follower that crashed before the leader's fault held
// no key, and one that crashed after the next stable leader took over
// found the key taken; with a shared pool a replies-dropped partition leaves one per
// TTL while it lasts, and so does latency whose round trips straddle the
// read timeout (one when every one misses it, none when every one beats it).
func TestFollowerUnseenAcquireChainsTheGap(t *testing.T) {
	s := time.Second
	ms := time.Millisecond
	alone, aloneF := gapAndFailoverBounds(t, specTimings, nil, func(*analysisScript) {}, 10)
	for _, tt := range []struct {
		name    string
		params  Params
		faults  []Fault
		script  func(*analysisScript)
		extra   time.Duration
		chained bool
	}{
		{"crash mid-acquire", specTimings,
			[]Fault{{At: 13017870 * time.Microsecond, Kind: FaultCrash, Target: Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(13.01787, 1, "crash", "", 1).crash(13.01787, 1, "b") }, 6001 * ms, true},
		{"two crashes", specTimings,
			[]Fault{{At: 13 * s, Kind: FaultCrash, Target: Target{Indexes: []int{1}}}, {At: 19 * s, Kind: FaultCrash, Target: Target{Indexes: []int{3}}}},
			func(s *analysisScript) {
				s.fault(13, 1, "crash", "", 1).crash(13, 1, "b").fault(19, 2, "crash", "", 3).crash(19, 3, "d")
			}, 12002 * ms, true},
		{"crash before the leader's", specTimings,
			[]Fault{{At: 3 * s, Kind: FaultCrash, Target: Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(3, 1, "crash", "", 1).crash(3, 1, "b") }, 0, false},
		{"crash after the new leader", specTimings,
			[]Fault{{At: 25 * s, Kind: FaultCrash, Target: Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(25, 1, "crash", "", 1).crash(25, 1, "b") }, 0, false},
		{"replies dropped", specTimings,
			[]Fault{{At: 10500 * ms, For: 14 * s, Kind: FaultPartition, Mode: PartitionBlackholeReplies, Target: Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(10.5, 1, "partition", PartitionBlackholeReplies, 1).heal(24.5, 1) }, 6001 * ms, true},
		{"replies later than the timeout", specTimings,
			[]Fault{{At: 10500 * ms, For: 14 * s, Kind: FaultLatency, Latency: 6 * s, Direction: DirectionReplies, Target: Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(10.5, 1, "latency", "", 1).heal(24.5, 1) }, 6001 * ms, true},
		{"round trips straddling the timeout", specTimings,
			[]Fault{{At: 10500 * ms, For: 10 * s, Kind: FaultLatency, Latency: 2500 * ms, Jitter: 600 * ms, Target: Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(10.5, 1, "latency", "", 1).heal(20.5, 1) }, 4 * 6001 * ms, true},
		{"replies in time", specTimings,
			[]Fault{{At: 10500 * ms, For: 10 * s, Kind: FaultLatency, Latency: time.Second, Direction: DirectionReplies, Target: Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(10.5, 1, "latency", "", 1).heal(20.5, 1) }, 0, false},
		{"replies dropped, shared pool", Params{TTL: 5 * s, Wait: 6 * s, JitterMS: 5, Client: ClientParams{SharedPool: true}},
			[]Fault{{At: 10500 * ms, For: 14 * s, Kind: FaultPartition, Mode: PartitionBlackholeReplies, Target: Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(10.5, 1, "partition", PartitionBlackholeReplies, 1).heal(24.5, 1) }, 4 * 6001 * ms, true},
	} {
		gap, failover := gapAndFailoverBounds(t, tt.params, tt.faults, tt.script, 22)
		base, baseF := alone, aloneF
		if tt.params.Client.SharedPool {
			base, baseF = gapAndFailoverBounds(t, tt.params, nil, func(*analysisScript) {}, 10)
		}
		if gap.Max-base.Max != tt.extra || failover.Max-baseF.Max != tt.extra {
			t.Errorf("%s: gap %v, failover %v: %v and %v over the leader's crash alone (%v, %v), want %v",
				tt.name, gap.Max, failover.Max, gap.Max-base.Max, failover.Max-baseF.Max, base.Max, baseF.Max, tt.extra)
		}
		if got := strings.Contains(gap.Detail, "mid-acquire"); got != tt.chained {
			t.Errorf("%s: gap formula %q: chained %v, want %v", tt.name, gap.Detail, got, tt.chained)
		}
	}
}
