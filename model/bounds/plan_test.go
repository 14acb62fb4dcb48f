package bounds

import (
	"github.com/leaselab/leaselab/model"

	"testing"
	"time"
)

// The size of the faults a scenario schedules: the slowest clock rate, a
// pause to the end of the phase as long as it lasts, the replies-dropped
// partition, a failover's lag plus the default switch.
func TestScheduledFaultSize(t *testing.T) {
	s := time.Second
	sc := model.Scenario{Redis: model.RedisReplicated, Duration: 20 * s, Faults: []model.Fault{
		{At: 1 * s, For: s, Kind: model.FaultClock, Rate: 0.8},
		{At: 3 * s, For: s, Kind: model.FaultClock, Rate: 0.5},
		{At: 5 * s, For: 2 * s, Kind: model.FaultPartition, Mode: model.PartitionBlackholeReplies},
		{At: 9 * s, Kind: model.FaultRedisFailover, Lag: 300 * time.Millisecond},
		{At: 15 * s, Kind: model.FaultPause},
	}}.WithDefaults()
	got := ScheduledFaultSize(sc)
	if got.ClockRate != 0.5 || got.Pause != 5*s || got.ReplyPartition != 2*s || got.Partition != 2*s ||
		got.Failover != 300*time.Millisecond+model.DefaultFailoverSwitch || got.FailoverLag != 300*time.Millisecond || got.FailoverSwitch != model.DefaultFailoverSwitch {
		t.Errorf("scheduled size %+v", got)
	}
}

// A scenario's prediction before it runs is each of its faults' modes,
// once, sized as scheduled, at the scenario's time scale: a pause of 8 s
// predicts what PredictMode does for that pause, not a pause of 0.
func TestPredictScheduled(t *testing.T) {
	s := time.Second
	sc := model.Scenario{Duration: 20 * s, Faults: []model.Fault{
		{At: 1 * s, For: 8 * s, Kind: model.FaultPause},
		{At: 12 * s, For: 2 * s, Kind: model.FaultPause},
		{At: 15 * s, Kind: model.FaultCrash},
	}}
	got := PredictScheduled(sc)
	e := sc.WithDefaults()
	want, _ := PredictMode(e.Params, model.ModePause, ScheduledFaultSize(e))
	if len(got) != 2 || got[0] != want || got[1].Mode != model.ModeOf(model.FaultCrash, "") {
		t.Fatalf("predictions %+v, want the pause's %+v then the crash's", got, want)
	}
	if zero, _ := PredictMode(e.Params, model.ModePause, model.FaultSize{}); got[0].MaxOverlap == zero.MaxOverlap {
		t.Errorf("the pause's overlap %v is an unsized pause's", got[0].MaxOverlap)
	}
	sc.TimeScale = 0.5
	if half := PredictScheduled(sc); half[0].MaxGap >= got[0].MaxGap || half[0].MaxGap == 0 {
		t.Errorf("at time scale 0.5: gap %v, at 1: %v", half[0].MaxGap, got[0].MaxGap)
	}
}

// A replies-dropped partition placed at the first leader's first renewal
// (where chaos init puts it) loses that renewal's NOSCRIPT: the run judges
// it by the cold bound (7.565 s with the defaults), and so must the
// prediction before it runs. It showed the warm 5.06 s, and chaos init
// --max-overlap 6s warned about 2 scenarios of the 3 that failed.
func TestPredictScheduledColdFirstRenewal(t *testing.T) {
	s := time.Second
	for _, at := range []time.Duration{1279 * time.Millisecond, 2505 * time.Millisecond} {
		sc := model.Scenario{Instances: 3, Duration: 30 * s, Faults: []model.Fault{
			{At: at, For: 26 * s, Kind: model.FaultPartition, Mode: model.PartitionBlackholeReplies, Target: model.Target{Role: model.RoleLeader}},
		}}
		got := PredictScheduled(sc)
		e := sc.WithDefaults()
		cold, _ := PredictMode(e.Params, model.ModePartitionReplies, model.FaultSize{Partition: 26 * s, ReplyPartition: 26 * s, ColdRenewal: true})
		if len(got) != 1 || got[0].MaxOverlap != cold.MaxOverlap {
			t.Errorf("at %v: predicted overlap %v (%s), want the cold renewal's %v", at, got[0].MaxOverlap, got[0].OverlapFormula, cold.MaxOverlap)
		}
	}
}
