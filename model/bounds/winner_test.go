package bounds

import (
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"
)

// TestWinsAtResume: a follower paused mid-acquire that believes at its
// resume is a leader's pause when it read the winning reply it held. A
// belief within a hop and the stamping slack of the heal counts, even one
// stamped before the heal's own stamp; one stamped later counts when the
// Redis lane saw its SET NX land before the heal, up to laneStampSlack; a
// clean win after the resume (the key set again) never does.
func TestWinsAtResume(t *testing.T) {
	const (
		applied = 13500 * time.Millisecond
		healed  = 17400 * time.Millisecond
	)
	pause := model.FaultOutcome{FaultSpan: model.FaultSpan{ID: 2, Kind: string(model.FaultPause), Mode: "pause",
		Target: []int{1}, Applied: applied, Healed: healed}}
	// The follower's SET NX landed at 13 s; the key expired at 15.5 s.
	landed := []analysis.Holding{holding(5*time.Second, 13*time.Second, "i2-a", 2), holding(13*time.Second, 15500*time.Millisecond, "i1-a", 1), holding(15500*time.Millisecond, 20*time.Second, "", -1)}
	// Its clean win after the resume: the key set again at 17.6 s.
	clean := []analysis.Holding{holding(5*time.Second, 13*time.Second, "i2-a", 2), holding(13*time.Second, 15500*time.Millisecond, "i1-a", 1),
		holding(15500*time.Millisecond, 17600*time.Millisecond, "", -1), holding(17600*time.Millisecond, 20*time.Second, "i1-a", 1)}
	for _, c := range []struct {
		name    string
		start   time.Duration
		holders []analysis.Holding
		want    bool
	}{
		{"stamped at the heal, no Redis lane", healed + 2*time.Millisecond, nil, true},
		{"stamped before the heal's own stamp", healed - 50*time.Microsecond, nil, true},
		{"stamped 60 ms late, the key set before the stop", healed + 60*time.Millisecond, landed, true},
		{"stamped 60 ms late, no Redis lane", healed + 60*time.Millisecond, nil, false},
		{"a clean win after the resume", 17601 * time.Millisecond, clean, false},
		{"stamped 2 s late: past any stamping", healed + 2*time.Second, landed, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := analysis.Analysis{Beliefs: []analysis.Belief{followerBelief(c.start)}, Faults: []model.FaultOutcome{pause}}
			a.Redis.Holders = c.holders
			if got := winsAtResume(pause, a); got != c.want {
				t.Errorf("winsAtResume = %v, want %v", got, c.want)
			}
			bf := BoundFaults(a)
			if got := len(bf) == 1 && bf[0].LeaderHit; got != c.want {
				t.Errorf("BoundFaults = %+v: taken as a leader's pause %v, want %v", bf, got, c.want)
			}
		})
	}
}

// TestSlowWinnerStampedLate: a follower under reply latency whose SET NX
// landed while the latency lasted believes at the heal, when the held reply
// is released. A loaded machine may stamp that belief later than the slack;
// the Redis lane still tells it, and a clean win after the heal stays none.
func TestSlowWinnerStampedLate(t *testing.T) {
	const (
		applied = 10 * time.Second
		healed  = 14 * time.Second
	)
	latency := model.FaultOutcome{FaultSpan: model.FaultSpan{ID: 1, Kind: string(model.FaultLatency), Mode: "latency",
		Target: []int{1}, Applied: applied, Healed: healed}}
	for _, c := range []struct {
		name    string
		start   time.Duration
		holders []analysis.Holding
		want    bool
	}{
		{"stamped at the heal", healed + time.Millisecond, nil, true},
		{"stamped 60 ms late, landed during the latency", healed + 60*time.Millisecond,
			[]analysis.Holding{holding(0, 12*time.Second, "", -1), holding(12*time.Second, 20*time.Second, "i1-a", 1)}, true},
		{"stamped 60 ms late, no Redis lane", healed + 60*time.Millisecond, nil, false},
		{"a clean win after the heal", healed + 60*time.Millisecond,
			[]analysis.Holding{holding(0, healed+59*time.Millisecond, "", -1), holding(healed+59*time.Millisecond, 20*time.Second, "i1-a", 1)}, false},
		{"landed before the latency", healed + 60*time.Millisecond,
			[]analysis.Holding{holding(0, 9*time.Second, "", -1), holding(9*time.Second, 20*time.Second, "i1-a", 1)}, false},
		{"stamped 2 s late", healed + 2*time.Second,
			[]analysis.Holding{holding(0, 12*time.Second, "", -1), holding(12*time.Second, 20*time.Second, "i1-a", 1)}, false},
		{"stamped 2 s late, the harness 3 s late then", healed + 2*time.Second,
			[]analysis.Holding{holding(0, 12*time.Second, "", -1), holding(12*time.Second, 20*time.Second, "i1-a", 1)}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := analysis.Analysis{End: 30 * time.Second, Faults: []model.FaultOutcome{latency},
				Beliefs: []analysis.Belief{followerBelief(c.start)}}
			a.Redis.Holders = c.holders
			if strings.Contains(c.name, "the harness 3 s late") {
				a.Stalls = []analysis.Stall{{Instance: -1, At: healed + 2*time.Second, Late: 3 * time.Second}}
			}
			won, got := slowWinner(latency, a)
			if got != c.want || (got && won != c.start) {
				t.Errorf("slowWinner = %v, %v; want %v at %v", won, got, c.want, c.start)
			}
		})
	}
}

// TestSlowWinnerPartitionByTime: a follower cut off by a partition wins only
// with a reply already on its way, believed within a hop of the cut; the
// Redis lane does not widen that (the landing is microseconds before the
// cut, closer than the lane's stamps), so a belief 60 ms later is no winner
// of the partition even with the key set before it.
func TestSlowWinnerPartitionByTime(t *testing.T) {
	const applied = 10 * time.Second
	cut := model.FaultOutcome{FaultSpan: model.FaultSpan{ID: 1, Kind: string(model.FaultPartition), Mode: model.ModePartitionBlackhole,
		Target: []int{1}, Applied: applied, Healed: 14 * time.Second}}
	for _, c := range []struct {
		start, landed time.Duration
		want          bool
	}{
		{applied + 500*time.Microsecond, applied - 10*time.Microsecond, true},
		{applied + 60*time.Millisecond, applied - 10*time.Microsecond, false},
		// A landing the lane puts inside the partition (a replies-dropped
		// one lets the SET NX through) is no reply on its way either.
		{applied + 60*time.Millisecond, applied + 5*time.Millisecond, false},
	} {
		a := analysis.Analysis{End: 30 * time.Second, Faults: []model.FaultOutcome{cut},
			Beliefs: []analysis.Belief{followerBelief(c.start)}}
		a.Redis.Holders = []analysis.Holding{holding(c.landed, 20*time.Second, "i1-a", 1)}
		if _, got := slowWinner(cut, a); got != c.want {
			t.Errorf("belief at %v, landed at %v: slowWinner %v, want %v", c.start, c.landed, got, c.want)
		}
	}
}

// holding is a stretch of the Redis lane in which the key held id (of
// instance inst; "" and -1 for no key).
func holding(start, end time.Duration, id string, inst int) analysis.Holding {
	return analysis.Holding{Window: model.Window{Start: start, End: end, Duration: end - start}, Holder: id, Instance: inst}
}

// followerBelief is instance 1's belief (incarnation "i1-a") from start,
// for a second.
func followerBelief(start time.Duration) analysis.Belief {
	return analysis.Belief{Member: model.Member{Instance: 1, ID: "i1-a"}, Window: analysis.NewWindow(start, start+time.Second, false)}
}
