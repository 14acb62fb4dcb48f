package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"

	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// analysisScript builds hand-made timelines; times are in seconds so test
// tables read like the spec's numbers.
type analysisScript []model.Event

func atSec(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

func (s *analysisScript) add(e model.Event) *analysisScript { *s = append(*s, e); return s }

func (s *analysisScript) start(at float64, i int, id string) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.InstanceStarted, Instance: i, ID: id})
}
func (s *analysisScript) gain(at float64, i int, id string) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.LeaderGained, Instance: i, ID: id})
}
func (s *analysisScript) lose(at float64, i int, id string) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.LeaderLost, Instance: i, ID: id})
}
func (s *analysisScript) crash(at float64, i int, id string) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.InstanceCrashed, Instance: i, ID: id})
}
func (s *analysisScript) stop(at float64, i int, id string) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.InstanceStopped, Instance: i, ID: id})
}
func (s *analysisScript) pause(at float64, i int) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.InstancePaused, Instance: i})
}
func (s *analysisScript) resume(at float64, i int) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.InstanceResumed, Instance: i})
}
func (s *analysisScript) holder(at float64, id string, late time.Duration) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.RedisHolder, Instance: -1, Holder: id, Lateness: late})
}

// fault applies a fault; mode is a partition's mode (recorded as Mode and Detail).
func (s *analysisScript) fault(at float64, id int, kind, mode string, target ...int) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.FaultApplied, Instance: -1, FaultID: id, Fault: kind, Mode: mode, Detail: mode, Target: target})
}
func (s *analysisScript) heal(at float64, id int) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.FaultHealed, Instance: -1, FaultID: id})
}
func (s *analysisScript) chore(at float64, i int, id, kind string) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: model.ChoreRan, Instance: i, ID: id, Chore: kind})
}
func (s *analysisScript) task(at float64, kind model.Kind, task string) *analysisScript {
	return s.add(model.Event{At: atSec(at), Kind: kind, Instance: 0, Task: task})
}
func (s *analysisScript) end(at float64) model.Timeline {
	s.add(model.Event{At: atSec(at), Kind: model.RunEnded, Instance: -1, Detail: "complete"})
	return model.Timeline(*s)
}

// specTimings are the spec's timings with jitter off, so bounds are exact.
var specTimings = model.Params{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: -1}

func wantWindow(start, end float64, open bool) model.Window {
	return analysis.NewWindow(atSec(start), atSec(end), open)
}

func TestAnalyzeBeliefs(t *testing.T) {
	tests := []struct {
		name string
		tl   model.Timeline
		want []analysis.Belief
	}{
		{
			name: "lost",
			tl:   new(analysisScript).gain(1, 0, "a").lose(3, 0, "a").end(5),
			want: []analysis.Belief{{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(1, 3, false), EndedBy: model.LeaderLost}},
		},
		{
			name: "crash and stop end the belief",
			tl:   new(analysisScript).gain(1, 0, "a").gain(2, 1, "b").crash(3, 0, "a").stop(4, 1, "b").end(5),
			want: []analysis.Belief{
				{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(1, 3, false), EndedBy: model.InstanceCrashed},
				{Member: model.Member{Instance: 1, ID: "b"}, Window: wantWindow(2, 4, false), EndedBy: model.InstanceStopped},
			},
		},
		{
			name: "open at run end",
			tl:   new(analysisScript).gain(1, 0, "a").end(5),
			want: []analysis.Belief{{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(1, 5, true), EndedBy: model.RunEnded}},
		},
		{
			name: "restart at the same index with a new id",
			tl: new(analysisScript).start(0, 0, "a").gain(1, 0, "a").crash(2, 0, "a").
				start(3, 0, "b").gain(4, 0, "b").end(6),
			want: []analysis.Belief{
				{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(1, 2, false), EndedBy: model.InstanceCrashed},
				{Member: model.Member{Instance: 0, ID: "b"}, Window: wantWindow(4, 6, true), EndedBy: model.RunEnded},
			},
		},
		{
			name: "restart without a recorded crash ends the old belief",
			tl:   new(analysisScript).start(0, 0, "a").gain(1, 0, "a").start(3, 0, "b").end(6),
			want: []analysis.Belief{{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(1, 3, false), EndedBy: model.InstanceStarted}},
		},
		{
			name: "id taken from InstanceStarted when LeaderGained has none",
			tl:   new(analysisScript).start(0, 0, "a").gain(1, 0, "").lose(2, 0, "").end(3),
			want: []analysis.Belief{{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(1, 2, false), EndedBy: model.LeaderLost}},
		},
		{
			name: "repeated promotion is one belief",
			tl:   new(analysisScript).gain(1, 0, "a").gain(2, 0, "a").lose(3, 0, "a").end(4),
			want: []analysis.Belief{{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(1, 3, false), EndedBy: model.LeaderLost}},
		},
		{
			name: "a late event of an old incarnation does not end the new one",
			tl: new(analysisScript).start(0, 0, "a").crash(1, 0, "a").start(2, 0, "b").gain(3, 0, "b").
				lose(4, 0, "a").end(5),
			want: []analysis.Belief{{Member: model.Member{Instance: 0, ID: "b"}, Window: wantWindow(3, 5, true), EndedBy: model.RunEnded}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := analysis.Analyze(tt.tl, specTimings).Beliefs
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("beliefs\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestAnalyzeOverlapsAndGaps(t *testing.T) {
	a, b, c := model.Member{Instance: 0, ID: "a"}, model.Member{Instance: 1, ID: "b"}, model.Member{Instance: 2, ID: "c"}
	tests := []struct {
		name     string
		tl       model.Timeline
		overlaps []analysis.Overlap
		gaps     []analysis.Gap
	}{
		{
			name: "same-instant handover is neither overlap nor gap",
			tl:   new(analysisScript).gain(0, 0, "a").lose(5, 0, "a").gain(5, 1, "b").end(10),
		},
		{
			name: "same-instant handover recorded gain first",
			tl:   new(analysisScript).gain(0, 0, "a").gain(5, 1, "b").lose(5, 0, "a").end(10),
		},
		{
			name: "a belief gained and lost at one instant is no overlap",
			tl:   new(analysisScript).gain(0, 0, "a").gain(4, 1, "b").lose(4, 1, "b").end(10),
		},
		{
			name: "demote and re-promote at one instant is no gap",
			tl:   new(analysisScript).gain(0, 0, "a").lose(4, 0, "a").gain(4, 0, "a").end(10),
		},
		{
			name:     "overlap then gap running into the end",
			tl:       new(analysisScript).gain(0, 0, "a").gain(5, 1, "b").lose(8, 0, "a").lose(10, 1, "b").end(12),
			overlaps: []analysis.Overlap{{Window: wantWindow(5, 8, false), Leaders: []model.Member{a, b}}},
			gaps:     []analysis.Gap{{Window: wantWindow(10, 12, true), Counted: 2 * time.Second}},
		},
		{
			name:     "run ends inside an overlap",
			tl:       new(analysisScript).gain(0, 0, "a").gain(5, 1, "b").end(9),
			overlaps: []analysis.Overlap{{Window: wantWindow(5, 9, true), Leaders: []model.Member{a, b}}},
		},
		{
			name: "three-way overlap is one window with everyone",
			tl: new(analysisScript).gain(0, 0, "a").gain(2, 1, "b").gain(4, 2, "c").lose(6, 1, "b").
				lose(8, 2, "c").end(10),
			overlaps: []analysis.Overlap{{Window: wantWindow(2, 8, false), Leaders: []model.Member{a, b, c}}},
		},
		{
			name: "no gap before the first leader, none opening at the very end",
			tl:   new(analysisScript).gain(3, 0, "a").lose(10, 0, "a").end(10),
		},
		{
			name: "gap names the fault before it",
			tl: new(analysisScript).fault(1, 7, "latency", "", 1).gain(2, 0, "a").fault(4, 2, "crash", "", 0).
				crash(4, 0, "a").gain(15, 1, "b").end(20),
			gaps: []analysis.Gap{{Window: wantWindow(4, 15, false), After: &analysis.FaultRef{ID: 2, Kind: "crash", Applied: atSec(4)}, Counted: 11 * time.Second}},
		},
		{
			name: "leader crashes while another pauses; a third takes over",
			tl: new(analysisScript).gain(0, 0, "a").pause(2, 1).crash(3, 0, "a").gain(12, 2, "c").
				resume(20, 1).end(25),
			gaps: []analysis.Gap{{Window: wantWindow(3, 12, false), Counted: 9 * time.Second}},
		},
		{
			name: "leader crashes while the only other instance pauses: excused",
			tl: new(analysisScript).start(0, 0, "a").start(0, 1, "b").gain(0, 0, "a").pause(2, 1).
				crash(3, 0, "a").resume(10, 1).gain(11, 1, "b").end(25),
			// Counted: only 10s..11s, after b resumed, could anyone have led.
			gaps: []analysis.Gap{{Window: wantWindow(3, 11, false), Excuse: "for part of it no instance could lead (all crashed, stopped, paused or partitioned)", Counted: time.Second}},
		},
		{
			name: "nobody up until a late start: excused",
			tl:   new(analysisScript).gain(0, 0, "a").crash(2, 0, "a").start(10, 1, "b").gain(11, 1, "b").end(20),
			gaps: []analysis.Gap{{Window: wantWindow(2, 11, false), Excuse: "for part of it no instance could lead (all crashed, stopped, paused or partitioned)", Counted: time.Second}},
		},
		{
			name: "a paused instance that crashed and restarted is no longer paused",
			tl: new(analysisScript).start(0, 0, "a").start(0, 1, "b").gain(0, 0, "a").pause(1, 1).crash(2, 1, "b").
				start(3, 1, "b2").crash(4, 0, "a").gain(15, 1, "b2").end(20),
			gaps: []analysis.Gap{{Window: wantWindow(4, 15, false), Counted: 11 * time.Second}},
		},
		{
			name: "everyone partitioned: excused",
			tl: new(analysisScript).gain(0, 0, "a").add(model.Event{At: atSec(1), Kind: model.InstanceStarted, Instance: 1, ID: "b"}).
				fault(2, 0, "partition", "blackhole").lose(14, 0, "a").heal(30, 0).gain(32, 1, "b").end(40),
			gaps: []analysis.Gap{{
				Window: wantWindow(14, 32, false), After: &analysis.FaultRef{ID: 0, Kind: "partition", Applied: atSec(2)},
				Excuse:  "for part of it no instance could lead (all crashed, stopped, paused or partitioned)",
				Counted: 2 * time.Second, // from the heal at 30s
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			an := analysis.Analyze(tt.tl, specTimings)
			if !reflect.DeepEqual(an.Overlaps, tt.overlaps) {
				t.Errorf("overlaps\n got %+v\nwant %+v", an.Overlaps, tt.overlaps)
			}
			if !reflect.DeepEqual(an.Gaps, tt.gaps) {
				t.Errorf("gaps\n got %+v\nwant %+v", an.Gaps, tt.gaps)
			}
			for _, w := range an.Overlaps {
				if w.Duration <= 0 {
					t.Errorf("zero-length overlap %+v", w)
				}
			}
		})
	}
}

func TestAnalyzeHandoversAndCounts(t *testing.T) {
	tl := new(analysisScript).start(0, 0, "a").start(0, 1, "b").
		gain(1, 0, "a").gain(1.5, 0, "a").lose(2, 0, "a").
		gain(3, 0, "a").lose(4, 0, "a"). // regained after a gap: no handover
		gain(5, 1, "b").crash(6, 1, "b").
		start(7, 1, "b2").gain(8, 1, "b2"). // same index, new incarnation: a handover
		add(model.Event{At: atSec(9), Kind: model.ElectorError, Instance: 1, Err: "i/o timeout"}).
		add(model.Event{At: atSec(9), Kind: model.ElectorError, Instance: 0, Err: "EOF"}).
		end(10)
	a := analysis.Analyze(tl, specTimings)
	want := []analysis.Handover{
		{At: atSec(5), From: model.Member{Instance: 0, ID: "a"}, To: model.Member{Instance: 1, ID: "b"}},
		{At: atSec(8), From: model.Member{Instance: 1, ID: "b"}, To: model.Member{Instance: 1, ID: "b2"}},
	}
	if !reflect.DeepEqual(a.Handovers, want) {
		t.Errorf("handovers\n got %+v\nwant %+v", a.Handovers, want)
	}
	if s := a.Summary; s.LeaderGains != 5 || s.Handovers != 2 || s.ElectorErrors != 2 {
		t.Errorf("counts: gains %d handovers %d errors %d, want 5 2 2", s.LeaderGains, s.Handovers, s.ElectorErrors)
	}
}

func TestAnalyzeRedisLane(t *testing.T) {
	tests := []struct {
		name    string
		tl      model.Timeline
		stale   []analysis.Stale
		phantom []analysis.Phantom
	}{
		{
			name: "expiry under a believing leader, then a follower takes the key",
			tl: new(analysisScript).start(0, 0, "a").start(0, 1, "b").
				gain(1, 0, "a").holder(1, "a", 0).holder(3, "a", 0).holder(6, "", 0).holder(7, "b", 0).
				gain(8, 1, "b").lose(10, 0, "a").end(12),
			stale:   []analysis.Stale{{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(6, 10, false), Holder: ""}},
			phantom: []analysis.Phantom{{Member: model.Member{Instance: 1, ID: "b"}, Window: wantWindow(7, 8, false)}},
		},
		{
			name:  "no holder is assumed before the first notification",
			tl:    new(analysisScript).gain(1, 0, "a").holder(2, "a", 0).lose(5, 0, "a").holder(5, "", 0).end(6),
			stale: []analysis.Stale{{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(1, 2, false), Holder: ""}},
		},
		{
			name: "a crashed holder's key is a phantom until it expires",
			tl: new(analysisScript).start(0, 0, "a").holder(1, "a", 0).gain(1, 0, "a").crash(3, 0, "a").
				holder(8, "", 0).end(9),
			phantom: []analysis.Phantom{{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(3, 8, false)}},
		},
		{
			name: "a late renewal after demotion extends one phantom",
			tl: new(analysisScript).holder(1, "a", 0).gain(1, 0, "a").lose(3, 0, "a").holder(4, "a", 0).
				holder(9, "", 0).end(10),
			phantom: []analysis.Phantom{{Member: model.Member{Instance: 0, ID: "a"}, Window: wantWindow(3, 9, false)}},
		},
		{
			name:    "an unknown id is a phantom with no instance, open at the end",
			tl:      new(analysisScript).holder(1, "zz", 0).end(4),
			phantom: []analysis.Phantom{{Member: model.Member{Instance: -1, ID: "zz"}, Window: wantWindow(1, 4, true)}},
		},
		{
			name: "same-instant notification and promotion: nothing",
			tl:   new(analysisScript).holder(1, "a", 0).gain(1, 0, "a").lose(3, 0, "a").holder(3, "", 0).end(4),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lane := analysis.Analyze(tt.tl, specTimings).Redis
			if !lane.Observed {
				t.Fatal("lane not observed")
			}
			if !reflect.DeepEqual(lane.Stale, tt.stale) {
				t.Errorf("stale\n got %+v\nwant %+v", lane.Stale, tt.stale)
			}
			if !reflect.DeepEqual(lane.Phantom, tt.phantom) {
				t.Errorf("phantom\n got %+v\nwant %+v", lane.Phantom, tt.phantom)
			}
		})
	}

	t.Run("not observed without notifications", func(t *testing.T) {
		lane := analysis.Analyze(new(analysisScript).gain(1, 0, "a").end(5), specTimings).Redis
		if lane.Observed || lane.Stale != nil {
			t.Errorf("lane %+v", lane)
		}
	})
	t.Run("notification lateness", func(t *testing.T) {
		ms := time.Millisecond
		tl := new(analysisScript).holder(1, "a", 10*ms).holder(2, "", 0).holder(3, "a", 30*ms).
			holder(4, "", 80*ms).end(5)
		got := analysis.Analyze(tl, specTimings).Redis.NotificationLateness
		want := analysis.DurationStats{Count: 3, Min: 10 * ms, Median: 30 * ms, Max: 80 * ms}
		if got != want {
			t.Errorf("lateness %+v, want %+v", got, want)
		}
	})
}

func TestAnalyzeFaults(t *testing.T) {
	d := func(s float64) *time.Duration { v := atSec(s); return &v }
	tests := []struct {
		name string
		tl   model.Timeline
		want model.FaultOutcome // FaultSpan is not compared
	}{
		{
			name: "leader crash: failover after TTL + Wait",
			tl: new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").heal(10, 0).
				gain(21, 1, "b").end(40),
			want: model.FaultOutcome{
				LeadersAtInjection: []model.Member{{Instance: 0, ID: "a"}}, LeaderHit: true,
				Demotion: d(0), Failover: d(11), NewLeader: &model.Member{Instance: 1, ID: "b"}, Recovery: d(11),
			},
		},
		{
			name: "blackholed leader: stable leader only when the overlap ends",
			tl: new(analysisScript).gain(0, 0, "a").fault(10, 1, "partition", "mode=blackhole", 0).
				gain(15.1, 1, "b").lose(22.5, 0, "a").heal(30, 1).end(40),
			want: model.FaultOutcome{
				LeadersAtInjection: []model.Member{{Instance: 0, ID: "a"}}, LeaderHit: true,
				Demotion: d(12.5), Failover: d(12.5), NewLeader: &model.Member{Instance: 1, ID: "b"}, Recovery: d(0),
			},
		},
		{
			name: "a short-lived new leader is not stable",
			tl: new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").
				gain(21, 1, "b").lose(23, 1, "b").gain(24, 2, "c").end(40),
			want: model.FaultOutcome{
				LeadersAtInjection: []model.Member{{Instance: 0, ID: "a"}}, LeaderHit: true,
				Demotion: d(0), Failover: d(14), NewLeader: &model.Member{Instance: 2, ID: "c"},
			},
		},
		{
			name: "no stable leader before the run ends",
			tl: new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").
				gain(21, 1, "b").end(23),
			want: model.FaultOutcome{
				LeadersAtInjection: []model.Member{{Instance: 0, ID: "a"}}, LeaderHit: true, Demotion: d(0),
				Note: "no stable leader before the run ended",
			},
		},
		{
			name: "fault on a follower",
			tl:   new(analysisScript).gain(0, 0, "a").fault(10, 0, "latency", "", 1).heal(20, 0).end(30),
			want: model.FaultOutcome{
				LeadersAtInjection: []model.Member{{Instance: 0, ID: "a"}}, Recovery: d(0), Note: "the fault did not hit the leader",
			},
		},
		{
			name: "no leader at injection",
			tl:   new(analysisScript).fault(1, 0, "crash", "", 0).gain(2, 1, "b").end(30),
			want: model.FaultOutcome{Note: "no leader at injection"},
		},
		{
			name: "leader keeps leading through the fault",
			tl: new(analysisScript).gain(0, 0, "a").fault(10, 0, "latency", "", 0).heal(20, 0).
				lose(60, 0, "a").end(70), // demoted long after heal + TTL + Wait: not this fault
			want: model.FaultOutcome{
				LeadersAtInjection: []model.Member{{Instance: 0, ID: "a"}}, LeaderHit: true, Recovery: d(0),
				Note: "the hit leader kept believing it led through the fault",
			},
		},
		{
			name: "same-instant handover by graceful stop: the new leader is stable at once",
			tl: new(analysisScript).gain(0, 0, "a").fault(10, 0, "graceful-stop", "", 0).stop(10, 0, "a").
				gain(10, 1, "b").heal(10, 0).end(30),
			want: model.FaultOutcome{
				LeadersAtInjection: []model.Member{{Instance: 0, ID: "a"}}, LeaderHit: true,
				Demotion: d(0), Failover: d(0), NewLeader: &model.Member{Instance: 1, ID: "b"}, Recovery: d(0),
			},
		},
		{
			name: "a leader gaining at the injection instant was not leading at injection",
			tl: new(analysisScript).gain(0, 0, "a").lose(10, 0, "a").gain(10, 1, "b").
				fault(10, 0, "crash", "", 1).crash(10, 1, "b").gain(20, 0, "a").end(30),
			want: model.FaultOutcome{LeadersAtInjection: []model.Member{{Instance: 0, ID: "a"}}, Note: "the fault did not hit the leader"},
		},
		{
			name: "demote and re-promote at one instant does not restart stability",
			tl: new(analysisScript).gain(0, 0, "a").fault(3.9, 0, "latency", "", 1).heal(3.95, 0).
				lose(4, 0, "a").gain(4, 0, "a").end(20),
			want: model.FaultOutcome{LeadersAtInjection: []model.Member{{Instance: 0, ID: "a"}}, Recovery: d(0), Note: "the fault did not hit the leader"},
		},
		{
			name: "a fault with no target hits the leader",
			tl: new(analysisScript).gain(0, 0, "a").fault(10, 0, "lease-loss", "").heal(10, 0).
				gain(10.5, 1, "b").lose(12.5, 0, "a").end(30),
			want: model.FaultOutcome{
				LeadersAtInjection: []model.Member{{Instance: 0, ID: "a"}}, LeaderHit: true,
				Demotion: d(2.5), Failover: d(2.5), NewLeader: &model.Member{Instance: 1, ID: "b"}, Recovery: d(2.5),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := analysis.Analyze(tt.tl, specTimings)
			if len(a.Faults) != 1 {
				t.Fatalf("want 1 fault, got %d", len(a.Faults))
			}
			got := a.Faults[0]
			got.FaultSpan = model.FaultSpan{}
			got.Gaps, got.Overlaps, got.MaxGap, got.MaxOverlap = nil, nil, 0, 0 // TestAnalysisDrawables
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("outcome\n got %s\nwant %s", analysisJSON(got), analysisJSON(tt.want))
			}
		})
	}

	t.Run("spans and failover stats", func(t *testing.T) {
		tl := new(analysisScript).gain(0, 0, "a").
			fault(10, 3, "crash", "", 0).crash(10, 0, "a").heal(10, 3).gain(21, 1, "b").
			fault(30, 4, "partition", "refuse", 1).heal(31, 4).lose(32, 1, "b").gain(35, 2, "c").
			fault(50, 5, "crash", "", 2).crash(50, 2, "c").gain(52, 0, "a2").
			end(70)
		a := analysis.Analyze(tl, specTimings)
		spans := []model.FaultSpan{a.Faults[0].FaultSpan, a.Faults[1].FaultSpan, a.Faults[2].FaultSpan}
		want := []model.FaultSpan{
			{ID: 3, Kind: "crash", Mode: model.ModeLeaderCrash, Target: []int{0}, Applied: atSec(10), Healed: atSec(10), Reach: atSec(21)},
			{ID: 4, Kind: "partition", Mode: model.ModePartitionRefuse, Target: []int{1}, Detail: "refuse", Applied: atSec(30), Healed: atSec(31), Reach: atSec(42)},
			{ID: 5, Kind: "crash", Mode: model.ModeLeaderCrash, Target: []int{2}, Applied: atSec(50), Healed: atSec(70), Open: true, Reach: atSec(70)},
		}
		if !reflect.DeepEqual(spans, want) {
			t.Errorf("spans\n got %+v\nwant %+v", spans, want)
		}
		// failovers: 11s, 5s (32 → 35 stable), 2s
		if got, want := a.Summary.Failover, (analysis.DurationStats{Count: 3, Min: atSec(2), Median: atSec(5), Max: atSec(11)}); got != want {
			t.Errorf("failover stats %+v, want %+v", got, want)
		}
	})
}

func TestAnalyzeChores(t *testing.T) {
	p := specTimings
	p.ChoreInterval = time.Second
	tests := []struct {
		name string
		tl   model.Timeline
		want []analysis.DuplicateChore
	}{
		{
			name: "two instances within one interval",
			tl:   new(analysisScript).chore(0, 0, "a", "scheduler").chore(0.5, 1, "b", "scheduler").end(2),
			want: []analysis.DuplicateChore{{
				Chore: "scheduler", First: analysis.ChoreRun{Member: model.Member{Instance: 0, ID: "a"}, At: 0}, Second: analysis.ChoreRun{Member: model.Member{Instance: 1, ID: "b"}, At: atSec(0.5)}, Apart: atSec(0.5),
			}},
		},
		{
			name: "at the same instant",
			tl:   new(analysisScript).chore(1, 1, "b", "metrics").chore(1, 0, "a", "metrics").end(2),
			want: []analysis.DuplicateChore{{
				Chore: "metrics", First: analysis.ChoreRun{Member: model.Member{Instance: 1, ID: "b"}, At: atSec(1)}, Second: analysis.ChoreRun{Member: model.Member{Instance: 0, ID: "a"}, At: atSec(1)},
			}},
		},
		{
			name: "exactly one interval apart is the normal cadence",
			tl:   new(analysisScript).chore(0, 0, "a", "scheduler").chore(1, 1, "b", "scheduler").end(2),
		},
		{
			name: "same instance, or a restart of it, is not a duplicate",
			tl:   new(analysisScript).chore(0, 0, "a", "scheduler").chore(0.2, 0, "a", "scheduler").chore(0.4, 0, "a2", "scheduler").end(2),
		},
		{
			name: "different chores do not clash",
			tl:   new(analysisScript).chore(0, 0, "a", "scheduler").chore(0.2, 1, "b", "metrics").end(2),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := analysis.Analyze(tt.tl, p)
			if !reflect.DeepEqual(a.DuplicateChores, tt.want) {
				t.Errorf("duplicates\n got %+v\nwant %+v", a.DuplicateChores, tt.want)
			}
			if a.Summary.DuplicateChores != len(tt.want) {
				t.Errorf("summary count %d", a.Summary.DuplicateChores)
			}
		})
	}
}

func TestAnalyzeTasks(t *testing.T) {
	ms := time.Millisecond
	tl := new(analysisScript).
		task(0, model.TaskDispatched, "t1").task(1, model.TaskCompleted, "t1").
		task(0, model.TaskDispatched, "t2"). // lost
		task(0, model.TaskDispatched, "t3").task(1, model.TaskCompleted, "t3").
		add(model.Event{At: atSec(2), Kind: model.TaskReclaimed, Instance: 1, ID: "b", Task: "t3"}).
		add(model.Event{At: atSec(3), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: "t3"}).
		task(0, model.TaskDispatched, "t4").task(1, model.TaskFailed, "t4"). // failed, never completed: lost
		// Completed by two incarnations, the second without a reclaim: delivered twice.
		task(0, model.TaskDispatched, "t5").
		add(model.Event{At: atSec(1), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: "t5"}).
		add(model.Event{At: atSec(2), Kind: model.TaskCompleted, Instance: 2, ID: "c", Task: "t5"}).
		// c reclaims what b still holds, and completes it before b's slow
		// acknowledgement is answered: redelivery, whichever reports first.
		task(0, model.TaskDispatched, "t6").
		add(model.Event{At: atSec(1), Kind: model.TaskReclaimed, Instance: 2, ID: "c", Task: "t6"}).
		add(model.Event{At: atSec(2), Kind: model.TaskCompleted, Instance: 2, ID: "c", Task: "t6"}).
		add(model.Event{At: atSec(3), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: "t6"}).
		// b reclaims its own entry and runs it again: one incarnation
		// twice, a runner bug.
		task(0, model.TaskDispatched, "t7").
		add(model.Event{At: atSec(1), Kind: model.TaskReclaimed, Instance: 1, ID: "b", Task: "t7"}).
		add(model.Event{At: atSec(1), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: "t7"}).
		add(model.Event{At: atSec(2), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: "t7"}).
		// c's reclaimed run failed: the reclaim does not credit its later
		// completion of another delivery.
		task(0, model.TaskDispatched, "t8").
		add(model.Event{At: atSec(1), Kind: model.TaskReclaimed, Instance: 2, ID: "c", Task: "t8"}).
		add(model.Event{At: atSec(2), Kind: model.TaskFailed, Instance: 2, ID: "c", Task: "t8"}).
		add(model.Event{At: atSec(3), Kind: model.TaskCompleted, Instance: 1, ID: "b", Task: "t8"}).
		add(model.Event{At: atSec(4), Kind: model.TaskCompleted, Instance: 2, ID: "c", Task: "t8"}).
		add(model.Event{At: atSec(1), Kind: model.DelayedDue, Lateness: 40 * ms}).
		add(model.Event{At: atSec(2), Kind: model.DelayedDue, Lateness: 0}).
		add(model.Event{At: atSec(3), Kind: model.DelayedDue, Lateness: 100 * ms}).
		add(model.Event{At: atSec(4), Kind: model.DelayedDue, Lateness: 20 * ms}).
		end(5)
	a := analysis.Analyze(tl, specTimings)
	if want := []string{"t2", "t4"}; !slices.Equal(a.LostTasks, want) {
		t.Errorf("lost %v, want %v", a.LostTasks, want)
	}
	want := []analysis.RepeatedTask{
		{Task: "t3", Completions: 2, By: []model.Member{{Instance: 0, ID: ""}, {Instance: 1, ID: "b"}}, Reclaims: 1},
		{Task: "t5", Completions: 2, By: []model.Member{{Instance: 1, ID: "b"}, {Instance: 2, ID: "c"}}},
		{Task: "t6", Completions: 2, By: []model.Member{{Instance: 2, ID: "c"}, {Instance: 1, ID: "b"}}, Reclaims: 1},
		{Task: "t7", Completions: 2, By: []model.Member{{Instance: 1, ID: "b"}, {Instance: 1, ID: "b"}}, Reclaims: 1},
		{Task: "t8", Completions: 2, By: []model.Member{{Instance: 1, ID: "b"}, {Instance: 2, ID: "c"}}},
	}
	if !reflect.DeepEqual(a.RepeatedTasks, want) {
		t.Errorf("repeated %+v, want %+v", a.RepeatedTasks, want)
	}
	for i, redelivered := range []bool{true, false, true, false, false} {
		if got := a.RepeatedTasks[i].Redelivered(); got != redelivered {
			t.Errorf("%s: Redelivered() = %v, want %v", a.RepeatedTasks[i].Task, got, redelivered)
		}
	}
	s := a.Summary
	if s.TasksDispatched != 8 || s.TasksLost != 2 || s.TasksRepeated != 5 {
		t.Errorf("task counts %d/%d/%d", s.TasksDispatched, s.TasksLost, s.TasksRepeated)
	}
	if want := (analysis.DurationStats{Count: 4, Min: 0, Median: 30 * ms, Max: 100 * ms}); s.DelayedLateness != want {
		t.Errorf("delayed lateness %+v, want %+v", s.DelayedLateness, want)
	}
}

func TestAnalyzeClaims(t *testing.T) {
	claim := func(a analysis.Analysis, name string) analysis.Claim {
		for _, c := range a.Claims {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("no claim %q", name)
		return analysis.Claim{}
	}
	tests := []struct {
		name                 string
		tl                   model.Timeline
		gap, split, calm     analysis.ClaimVerdict
		gapMeasured, overlap time.Duration
	}{
		{
			name: "one steady leader, no fault",
			tl:   new(analysisScript).gain(0, 0, "a").end(60),
			gap:  analysis.NotExercised, split: analysis.NotExercised, calm: analysis.Held,
		},
		{
			name: "crash gap at the bound",
			tl: new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").
				gain(21.04, 1, "b").end(40),
			gap: analysis.Held, split: analysis.Held, calm: analysis.Held, gapMeasured: atSec(11.04),
		},
		{
			name: "crash gap beyond bound and slack",
			tl: new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").
				gain(21.1, 1, "b").end(40),
			gap: analysis.NotHeld, split: analysis.Held, calm: analysis.Held, gapMeasured: atSec(11.1),
		},
		{
			name: "open gap already beyond the bound",
			tl:   new(analysisScript).gain(0, 0, "a").gain(1, 1, "b").lose(1, 0, "a").crash(2, 1, "b").end(20),
			gap:  analysis.NotHeld, split: analysis.NotExercised, calm: analysis.Held, gapMeasured: atSec(18),
		},
		{
			// b is paused for one second inside a 29s gap: that second is
			// excused, the 28s after it are not.
			name: "a moment with nobody able to lead does not excuse the whole gap",
			tl: new(analysisScript).start(0, 0, "a").start(0, 1, "b").gain(0, 0, "a").crash(1, 0, "a").
				pause(1, 1).resume(2, 1).gain(30, 1, "b").end(40),
			gap: analysis.NotHeld, split: analysis.NotExercised, calm: analysis.Held, gapMeasured: atSec(28),
		},
		{
			name: "blackholed leader overlaps for longer than the TTL",
			tl: new(analysisScript).gain(0, 0, "a").fault(10, 0, "partition", "blackhole", 0).
				gain(15.1, 1, "b").lose(22.6, 0, "a").heal(30, 0).end(40),
			gap: analysis.Held, split: analysis.NotHeld, calm: analysis.Held, overlap: atSec(7.5),
		},
		{
			name: "overlap with no fault anywhere near",
			tl: new(analysisScript).gain(0, 0, "a").fault(1, 0, "latency", "", 0).heal(2, 0).
				gain(30, 1, "b").lose(31, 0, "a").end(40), // after heal + TTL + Wait = 13s
			gap: analysis.Held, split: analysis.Held, calm: analysis.NotHeld, overlap: atSec(1),
		},
		{
			name: "overlap inside the fault's reach is explained",
			tl: new(analysisScript).gain(0, 0, "a").fault(1, 0, "latency", "", 0).heal(2, 0).
				gain(12, 1, "b").lose(13, 0, "a").end(40),
			gap: analysis.Held, split: analysis.Held, calm: analysis.Held, overlap: atSec(1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := analysis.Analyze(tt.tl, specTimings)
			g, s, c := claim(a, analysis.ClaimGap), claim(a, analysis.ClaimSplitBrain), claim(a, analysis.ClaimNoFaultlessSplit)
			if g.Verdict != tt.gap || s.Verdict != tt.split || c.Verdict != tt.calm {
				t.Errorf("verdicts gap=%s split=%s calm=%s, want %s %s %s\n%s\n%s\n%s",
					g.Verdict, s.Verdict, c.Verdict, tt.gap, tt.split, tt.calm, g.Detail, s.Detail, c.Detail)
			}
			if g.Bound != 11*time.Second || s.Bound != 5*time.Second || c.Bound != 0 {
				t.Errorf("bounds %v %v %v", g.Bound, s.Bound, c.Bound)
			}
			if g.Measured != tt.gapMeasured {
				t.Errorf("gap measured %v, want %v", g.Measured, tt.gapMeasured)
			}
			if a.Summary.MaxOverlap != tt.overlap || s.Measured != tt.overlap {
				t.Errorf("overlap measured %v / %v, want %v", a.Summary.MaxOverlap, s.Measured, tt.overlap)
			}
		})
	}
}

func TestAnalyzeSortsWithoutMutating(t *testing.T) {
	tl := new(analysisScript).start(0, 0, "a").start(0, 1, "b").gain(1, 0, "a").holder(1, "a", 0).
		fault(5, 0, "partition", "blackhole", 0).gain(12, 1, "b").holder(11, "", 0).holder(12, "b", 0).
		lose(17, 0, "a").heal(20, 0).chore(13, 1, "b", "scheduler").chore(13.5, 0, "a", "scheduler").
		end(30)
	want := analysis.Analyze(tl, model.Params{})
	shuffled := slices.Clone(tl)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		// Same-instant events keep their relative order in a real recording;
		// these have distinct instants except the starts, whose order does not matter.
		before := slices.Clone(shuffled)
		got := analysis.Analyze(shuffled, model.Params{})
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("shuffled input changed the analysis:\n got %s\nwant %s", analysisJSON(got), analysisJSON(want))
		}
		if !reflect.DeepEqual(shuffled, before) {
			t.Fatal("Analyze reordered its input")
		}
	}
}

func TestAnalysisJSONRoundTrip(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").fault(10, 0, "crash", "", 0).crash(10, 0, "a").
		gain(21, 1, "b").holder(21, "b", 5*time.Millisecond).end(40)
	a := analysis.Analyze(tl, model.Params{})
	var back analysis.Analysis
	if err := json.Unmarshal([]byte(analysisJSON(a)), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, a) {
		t.Errorf("round trip changed the analysis:\n got %s\nwant %s", analysisJSON(back), analysisJSON(a))
	}
	if !strings.Contains(analysisJSON(a), `"failover":11000000000`) {
		t.Errorf("failover not in JSON: %s", analysisJSON(a))
	}
}

func analysisJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// TestAnalysisDrawables: what a report draws comes from the analysis, so no
// renderer re-derives it: the windows in each fault's reach, the leader
// count as steps, and the Redis holder as segments.
func TestAnalysisDrawables(t *testing.T) {
	tl := new(analysisScript).holder(0, "", 0).gain(1, 0, "a").holder(1, "a", 0).
		fault(10, 0, "partition", "blackhole", 0).holder(15, "", 0).gain(16, 1, "b").holder(16, "b", 0).
		lose(18, 0, "a").heal(20, 0).
		fault(40, 1, "crash", "", 1).crash(40, 1, "b").holder(45, "", 0).heal(40, 1).end(60)
	a := analysis.Analyze(tl, specTimings)
	if f := a.Faults[0]; !reflect.DeepEqual(f.Overlaps, []int{0}) || f.MaxOverlap != atSec(2) || len(f.Gaps) != 0 {
		t.Errorf("fault 0 windows: overlaps %v (max %v), gaps %v; want the 2s overlap", f.Overlaps, f.MaxOverlap, f.Gaps)
	}
	if f := a.Faults[1]; !reflect.DeepEqual(f.Gaps, []int{0}) || f.MaxGap != atSec(20) || !a.Gaps[0].Open {
		t.Errorf("fault 1 windows: gaps %v (max %v); want the open gap from 40s", f.Gaps, f.MaxGap)
	}
	wantSteps := []analysis.CountStep{
		{Window: wantWindow(0, 1, false), Leaders: 0}, {Window: wantWindow(1, 16, false), Leaders: 1}, {Window: wantWindow(16, 18, false), Leaders: 2},
		{Window: wantWindow(18, 40, false), Leaders: 1}, {Window: wantWindow(40, 60, true), Leaders: 0},
	}
	if !reflect.DeepEqual(a.LeaderCount, wantSteps) {
		t.Errorf("leader count\n got %+v\nwant %+v", a.LeaderCount, wantSteps)
	}
	wantHolders := []analysis.Holding{
		{Window: wantWindow(0, 1, false), Holder: "", Instance: -1}, {Window: wantWindow(1, 15, false), Holder: "a", Instance: 0},
		{Window: wantWindow(15, 16, false), Holder: "", Instance: -1}, {Window: wantWindow(16, 45, false), Holder: "b", Instance: 1},
		{Window: wantWindow(45, 60, true), Holder: "", Instance: -1},
	}
	if !reflect.DeepEqual(a.Redis.Holders, wantHolders) {
		t.Errorf("holders\n got %+v\nwant %+v", a.Redis.Holders, wantHolders)
	}
}

// A task not completed by the end is lost only when Redis no longer holds
// it; one still held to run (TaskHeld) is unfinished, one in the dead-letter
// stream (TaskHeld, Detail "dead") is dead, not lost.
func TestTaskHeldIsUnfinishedNotLost(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").
		add(model.Event{At: atSec(1), Kind: model.TaskDispatched, Task: "done"}).
		add(model.Event{At: atSec(1), Kind: model.TaskDispatched, Task: "held"}).
		add(model.Event{At: atSec(1), Kind: model.TaskDispatched, Task: "gone"}).
		add(model.Event{At: atSec(2), Kind: model.TaskCompleted, Task: "done"}).
		add(model.Event{At: atSec(1), Kind: model.TaskDispatched, Task: "dead"}).
		add(model.Event{At: atSec(9), Kind: model.TaskHeld, Instance: -1, Task: "held", Detail: "stream"}).
		add(model.Event{At: atSec(9), Kind: model.TaskHeld, Instance: -1, Task: "dead", Detail: "dead"}).
		end(10)
	a := analysis.Analyze(tl, specTimings)
	if !slices.Equal(a.LostTasks, []string{"gone"}) || !slices.Equal(a.UnfinishedTasks, []string{"held"}) ||
		!slices.Equal(a.DeadTasks, []string{"dead"}) {
		t.Errorf("lost %v, unfinished %v, dead %v; want [gone], [held], [dead]", a.LostTasks, a.UnfinishedTasks, a.DeadTasks)
	}
	if a.Summary.TasksLost != 1 || a.Summary.TasksUnfinished != 1 || a.Summary.TasksDead != 1 {
		t.Errorf("summary lost %d unfinished %d dead %d", a.Summary.TasksLost, a.Summary.TasksUnfinished, a.Summary.TasksDead)
	}
}

// A task whose acknowledgement was sent by an instance that crashed before
// the reply, and which Redis no longer holds, was acknowledged (nothing else
// removes an entry): unreported, not lost. One whose acknowledgement was
// sent but which Redis still holds did not apply: unfinished.
func TestAcknowledgedByACrashedInstanceIsNotLost(t *testing.T) {
	tl := new(analysisScript).gain(0, 0, "a").
		add(model.Event{At: atSec(1), Kind: model.TaskDispatched, Task: "acked"}).
		add(model.Event{At: atSec(1), Kind: model.TaskDispatched, Task: "pending"}).
		add(model.Event{At: atSec(1), Kind: model.TaskDispatched, Task: "gone"}).
		add(model.Event{At: atSec(2), Kind: model.TaskAcknowledging, Instance: 0, Task: "acked"}).
		add(model.Event{At: atSec(2), Kind: model.TaskAcknowledging, Instance: 0, Task: "pending"}).
		add(model.Event{At: atSec(2), Kind: model.InstanceCrashed, Instance: 0, ID: "a"}).
		add(model.Event{At: atSec(9), Kind: model.TaskHeld, Instance: -1, Task: "pending", Detail: "stream"}).
		end(10)
	a := analysis.Analyze(tl, specTimings)
	if !slices.Equal(a.LostTasks, []string{"gone"}) || !slices.Equal(a.UnreportedTasks, []string{"acked"}) ||
		!slices.Equal(a.UnfinishedTasks, []string{"pending"}) {
		t.Errorf("lost %v, unreported %v, unfinished %v; want [gone], [acked], [pending]", a.LostTasks, a.UnreportedTasks, a.UnfinishedTasks)
	}
	if a.Summary.TasksLost != 1 || a.Summary.TasksUnreported != 1 {
		t.Errorf("summary lost %d unreported %d; want 1 and 1", a.Summary.TasksLost, a.Summary.TasksUnreported)
	}
}

// A chore's writes landed somewhere within its Redis calls, [At - Took, At]:
// one whose reply came late (a paused process reads it on resume) while the
// key held its id at the start of the call is not stale; one whose whole
// call fell while another held the key is.
func TestStaleChoreWindow(t *testing.T) {
	late := new(analysisScript).gain(0, 0, "a").holder(0, "a", 0).holder(5, "b", 0).
		add(model.Event{At: atSec(7), Kind: model.ChoreRan, Instance: 0, ID: "a", Chore: "scheduler", N: 1, Took: 3 * time.Second}).
		end(10)
	if a := analysis.Analyze(late, specTimings); len(a.StaleChores) != 0 {
		t.Errorf("a chore sent at 4s (key held by a) and answered at 7s is judged stale: %+v", a.StaleChores)
	}
	stale := new(analysisScript).start(0, 1, "b").gain(0, 0, "a").holder(0, "a", 0).holder(5, "b", 0).
		add(model.Event{At: atSec(7), Kind: model.ChoreRan, Instance: 0, ID: "a", Chore: "scheduler", N: 1, Took: time.Second}).
		end(10)
	if a := analysis.Analyze(stale, specTimings); len(a.StaleChores) != 1 {
		t.Errorf("a chore run from 6s to 7s while b held the key: stale chores %+v, want 1", a.StaleChores)
	}
}
