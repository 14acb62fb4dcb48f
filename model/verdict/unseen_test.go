package verdict

import (
	"github.com/leaselab/leaselab/model"

	"slices"
	"strings"
	"testing"
	"time"
)

// gapAndFailoverBounds evaluates a leader crash at 5.0225 s, the follower
// faults extra adds to the timeline, and the healthy follower's win at
// end; it returns the max_gap and failover limits.
func gapAndFailoverBounds(t *testing.T, params model.Params, follower []model.Fault, script func(*analysisScript), win float64) (gap, failover model.Check) {
	t.Helper()
	sc := model.Scenario{Params: params, Instances: 4,
		Faults: append([]model.Fault{{At: 5022500 * time.Microsecond, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}}}, follower...),
		Expect: []model.Expectation{{Metric: "max_gap", Max: "predicted"}, {Metric: "failover", Max: "predicted"}}}
	s := new(analysisScript).gain(0, 0, "a").fault(5.0225, 0, "crash", "", 0).crash(5.0225, 0, "a")
	script(s)
	tl := s.gain(win, 2, "c").end(40)
	slices.SortStableFunc(tl, func(x, y model.Event) int { return int(x.At - y.At) })
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
		params  model.Params
		faults  []model.Fault
		script  func(*analysisScript)
		extra   time.Duration
		chained bool
	}{
		{"crash mid-acquire", specTimings,
			[]model.Fault{{At: 13017870 * time.Microsecond, Kind: model.FaultCrash, Target: model.Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(13.01787, 1, "crash", "", 1).crash(13.01787, 1, "b") }, 6001 * ms, true},
		{"two crashes", specTimings,
			[]model.Fault{{At: 13 * s, Kind: model.FaultCrash, Target: model.Target{Indexes: []int{1}}}, {At: 19 * s, Kind: model.FaultCrash, Target: model.Target{Indexes: []int{3}}}},
			func(s *analysisScript) {
				s.fault(13, 1, "crash", "", 1).crash(13, 1, "b").fault(19, 2, "crash", "", 3).crash(19, 3, "d")
			}, 12002 * ms, true},
		{"crash before the leader's", specTimings,
			[]model.Fault{{At: 3 * s, Kind: model.FaultCrash, Target: model.Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(3, 1, "crash", "", 1).crash(3, 1, "b") }, 0, false},
		{"crash after the new leader", specTimings,
			[]model.Fault{{At: 25 * s, Kind: model.FaultCrash, Target: model.Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(25, 1, "crash", "", 1).crash(25, 1, "b") }, 0, false},
		{"replies dropped", specTimings,
			[]model.Fault{{At: 10500 * ms, For: 14 * s, Kind: model.FaultPartition, Mode: model.PartitionBlackholeReplies, Target: model.Target{Indexes: []int{1}}}},
			func(s *analysisScript) {
				s.fault(10.5, 1, "partition", model.PartitionBlackholeReplies, 1).heal(24.5, 1)
			}, 6001 * ms, true},
		{"replies later than the timeout", specTimings,
			[]model.Fault{{At: 10500 * ms, For: 14 * s, Kind: model.FaultLatency, Latency: 6 * s, Direction: model.DirectionReplies, Target: model.Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(10.5, 1, "latency", "", 1).heal(24.5, 1) }, 6001 * ms, true},
		{"round trips straddling the timeout", specTimings,
			[]model.Fault{{At: 10500 * ms, For: 10 * s, Kind: model.FaultLatency, Latency: 2500 * ms, Jitter: 600 * ms, Target: model.Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(10.5, 1, "latency", "", 1).heal(20.5, 1) }, 4 * 6001 * ms, true},
		{"replies in time", specTimings,
			[]model.Fault{{At: 10500 * ms, For: 10 * s, Kind: model.FaultLatency, Latency: time.Second, Direction: model.DirectionReplies, Target: model.Target{Indexes: []int{1}}}},
			func(s *analysisScript) { s.fault(10.5, 1, "latency", "", 1).heal(20.5, 1) }, 0, false},
		{"replies dropped, shared pool", model.Params{TTL: 5 * s, Wait: 6 * s, JitterMS: 5, Client: model.ClientParams{SharedPool: true}},
			[]model.Fault{{At: 10500 * ms, For: 14 * s, Kind: model.FaultPartition, Mode: model.PartitionBlackholeReplies, Target: model.Target{Indexes: []int{1}}}},
			func(s *analysisScript) {
				s.fault(10.5, 1, "partition", model.PartitionBlackholeReplies, 1).heal(24.5, 1)
			}, 4 * 6001 * ms, true},
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
