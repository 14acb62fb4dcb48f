package analysis

import (
	"github.com/leaselab/leaselab/model"

	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// benchTimeline is a synthetic recording of n events over `instances`
// instances: leadership terms of 2-20s handed over with up to 0.5s of overlap
// or gap, leader crashes and restarts, the Redis lane following, a partition
// every ~10s, chores about once a second, and tasks making up most of the
// events, as in a runner soak. It is sorted, as the recorder's output is.
func benchTimeline(n, instances int) model.Timeline {
	r := rand.New(rand.NewPCG(7, 11))
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+r.IntN(hi-lo)) * time.Millisecond }
	gen := make([]int, instances)
	id := func(i int) string { return fmt.Sprintf("i%d-g%d", i, gen[i]) }
	tl := make(model.Timeline, 0, n+instances+2)
	for i := range instances {
		tl = append(tl, model.Event{Kind: model.InstanceStarted, Instance: i, ID: id(i)})
	}
	var at, termEnds time.Duration
	leader, task, fault := -1, 0, 0
	for len(tl) < n {
		at += ms(1, 20)
		if at >= termEnds {
			next := r.IntN(instances)
			if leader >= 0 && next != leader {
				tl = append(tl, model.Event{At: at, Kind: model.LeaderLost, Instance: leader, ID: id(leader)})
			}
			gained := max(0, at+ms(-500, 500))
			tl = append(tl, model.Event{At: gained, Kind: model.LeaderGained, Instance: next, ID: id(next)},
				model.Event{At: gained + ms(0, 10), Kind: model.RedisHolder, Instance: -1, Holder: id(next), Lateness: ms(1, 10)})
			leader, termEnds = next, at+ms(2000, 20000)
		}
		i := r.IntN(instances)
		switch k := r.IntN(1000); {
		case k < 3: // crash and restart, sometimes of the leader
			tl = append(tl, model.Event{At: at, Kind: model.InstanceCrashed, Instance: i, ID: id(i)})
			gen[i]++
			tl = append(tl, model.Event{At: at + time.Second, Kind: model.InstanceStarted, Instance: i, ID: id(i)})
			if i == leader {
				leader = -1
				tl = append(tl, model.Event{At: at + 5*time.Second, Kind: model.RedisHolder, Instance: -1, Lateness: ms(1, 100)})
			}
		case k < 4:
			tl = append(tl, model.Event{At: at, Kind: model.FaultApplied, Instance: -1, FaultID: fault, Fault: "partition", Detail: "blackhole", Target: []int{i}},
				model.Event{At: at + 10*time.Second, Kind: model.FaultHealed, Instance: -1, FaultID: fault})
			fault++
		case k < 14:
			if leader >= 0 {
				tl = append(tl, model.Event{At: at, Kind: model.ChoreRan, Instance: leader, ID: id(leader), Chore: "scheduler"})
			}
			if k < 5 { // a stale ex-leader running it too
				tl = append(tl, model.Event{At: at, Kind: model.ChoreRan, Instance: i, ID: id(i), Chore: "scheduler"})
			}
		case k < 20:
			tl = append(tl, model.Event{At: at, Kind: model.ElectorError, Instance: i, ID: id(i), Err: "i/o timeout"})
		case k < 100:
			tl = append(tl, model.Event{At: at, Kind: model.DelayedDue, Instance: i, Lateness: ms(0, 500)})
		case k < 550:
			tl = append(tl, model.Event{At: at, Kind: model.TaskDispatched, Instance: i, Task: fmt.Sprint(task)})
			task++
		default:
			tl = append(tl, model.Event{At: at, Kind: model.TaskCompleted, Instance: i, Task: fmt.Sprint(max(0, task-r.IntN(50)))})
		}
	}
	tl = append(tl, model.Event{At: at + time.Minute, Kind: model.RunEnded, Instance: -1, Detail: "complete"})
	slices.SortStableFunc(tl, func(a, b model.Event) int { return cmp.Compare(a.At, b.At) })
	return tl
}

// BenchmarkAnalyze measures analysis throughput on a 100k-event, 50-instance
// timeline; events/s says how long the report of a long soak run takes.
// "recorded" is in time order, as the recorder writes it; "shuffled" pays for
// the sort a hand-built or merged timeline needs.
func BenchmarkAnalyze(b *testing.B) {
	recorded := benchTimeline(100_000, 50)
	shuffled := slices.Clone(recorded)
	rand.New(rand.NewPCG(3, 5)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, bc := range []struct {
		name string
		tl   model.Timeline
	}{{"recorded", recorded}, {"shuffled", shuffled}} {
		b.Run(bc.name, func(b *testing.B) {
			var a Analysis
			for b.Loop() {
				a = Analyze(bc.tl, model.Params{})
			}
			b.ReportMetric(float64(len(bc.tl))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			s := a.Summary
			if s.Handovers == 0 || s.Overlaps == 0 || s.Gaps == 0 || s.Failover.Count == 0 || s.DuplicateChores == 0 || s.StaleWindows == 0 {
				b.Fatalf("synthetic timeline exercised too little: %+v", s)
			}
		})
	}
}
