package virtual_test

import (
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/virtual"
)

// OnCall reports every call's moments in time order: a healthy renewal is
// begin, send, arrive one hop later, reply one hop after that, end.
func TestOnCallMoments(t *testing.T) {
	sc := model.Scenario{Name: "calls", Instances: 2, Duration: 8 * time.Second, Recovery: time.Second}
	var evs []virtual.CallEvent
	res := run(t, sc, virtual.Options{OnCall: func(e virtual.CallEvent) { evs = append(evs, e) }})
	for i := 1; i < len(evs); i++ {
		if evs[i].At < evs[i-1].At {
			t.Fatalf("moment %d at %v before %v", i, evs[i].At, evs[i-1].At)
		}
	}
	// The leader's second renewal (the first is EVALSHA, NOSCRIPT, EVAL).
	var renew []virtual.CallEvent
	begins := 0
	for _, e := range evs {
		if e.Op != election.OpRenew || e.Instance != 0 {
			continue
		}
		if e.Step == virtual.CallBegin {
			begins++
		}
		if begins == 2 {
			renew = append(renew, e)
		}
	}
	steps := []virtual.CallStep{virtual.CallBegin, virtual.CallSend, virtual.CallArrive, virtual.CallReply, virtual.CallEnd}
	if len(renew) != len(steps) {
		t.Fatalf("second renewal: %v", renew)
	}
	hop := 50 * time.Microsecond
	for k, e := range renew {
		if e.Step != steps[k] {
			t.Fatalf("moment %d is %v, want %v", k, e.Step, steps[k])
		}
	}
	if renew[2].At-renew[1].At != hop || renew[3].At-renew[2].At != hop || renew[4].At != renew[3].At || renew[1].At != renew[0].At {
		t.Fatalf("moments %v", renew)
	}
	if renew[0].At < 5*time.Second || renew[0].At > 5100*time.Millisecond {
		t.Fatalf("second renewal began at %v, want two intervals of TTL/2 + jitter in", renew[0].At)
	}
	// Recording changes nothing.
	again := run(t, sc, virtual.Options{})
	if len(again.Timeline) != len(res.Timeline) || again.Analysis.Summary != res.Analysis.Summary {
		t.Fatal("a run with OnCall differs from one without")
	}
}

// Scenario.Starts delays an instance's start, and so its acquire attempts.
func TestStartsDelayInstances(t *testing.T) {
	sc := model.Scenario{Name: "starts", Instances: 3, Duration: 10 * time.Second, Recovery: time.Second,
		Starts: []time.Duration{0, 2 * time.Second, 3500 * time.Millisecond}}
	res := run(t, sc, virtual.Options{})
	var started []time.Duration
	for _, e := range res.Timeline {
		if e.Kind == model.InstanceStarted {
			started = append(started, e.At)
		}
	}
	o := 5 * time.Millisecond // Options.StartAt, then StartStep apart
	want := []time.Duration{o, o + 2*time.Second + 200*time.Microsecond, o + 3500*time.Millisecond + 400*time.Microsecond}
	if len(started) != 3 || started[0] != want[0] || started[1] != want[1] || started[2] != want[2] {
		t.Fatalf("started at %v, want %v", started, want)
	}
	scaled := sc
	scaled.TimeScale = 0.5
	res = run(t, scaled, virtual.Options{})
	for _, e := range res.Timeline {
		if e.Kind == model.InstanceStarted && e.Instance == 1 && e.At != o+time.Second+200*time.Microsecond {
			t.Fatalf("scaled start of instance 1 at %v", e.At)
		}
	}
}

// A latency fault with jitter that begins while its instance is down
// jitters the restarted instance's requests, as on the real backends (the
// jitter is the link's, not the incarnation's): its requests' hops from
// send to arrival are spread over Latency ± Jitter, not all Latency −
// Jitter. Before, the jitter was set only for a live instance, and the
// restarted one's requests all took the base alone.
func TestLatencyJitterBegunWhileDown(t *testing.T) {
	const delay, spread = 300 * time.Millisecond, 200 * time.Millisecond
	sc := model.Scenario{Name: "jitter-while-down", Instances: 2, Seed: 1, Duration: 10 * time.Second, Recovery: time.Second,
		Faults: []model.Fault{
			{At: time.Second, For: time.Second, Kind: model.FaultCrash, Restart: true, Target: model.Target{Indexes: []int{1}}},
			{At: 1500 * time.Millisecond, For: 8 * time.Second, Kind: model.FaultLatency, Latency: delay, Jitter: spread,
				Direction: model.DirectionRequests, Target: model.Target{Indexes: []int{1}}},
		}}
	// Instance 1's requests' hops, send to arrival (in order: a link
	// delivers in order).
	var hops, open []time.Duration
	run(t, sc, virtual.Options{OnCall: func(e virtual.CallEvent) {
		if e.Instance != 1 || e.At < 2*time.Second || e.At > 9*time.Second {
			return
		}
		switch e.Step {
		case virtual.CallSend:
			open = append(open, e.At)
		case virtual.CallArrive:
			if len(open) > 0 {
				hops = append(hops, e.At-open[0])
				open = open[1:]
			}
		}
	}})
	lo, hi := time.Duration(1<<62), time.Duration(0)
	for _, h := range hops {
		lo, hi = min(lo, h), max(hi, h)
	}
	t.Logf("%d requests of the restarted instance: send to arrival %v to %v", len(hops), lo, hi)
	if len(hops) < 3 || hi-lo < spread/2 {
		t.Errorf("%d requests, send to arrival %v to %v: want spread over %v ± %v", len(hops), lo, hi, delay, spread)
	}
}
