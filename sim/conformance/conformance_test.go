package conformance_test

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/process"
	"github.com/leaselab/leaselab/sim/real"
	"github.com/leaselab/leaselab/sim/virtual"
)

// fast timings, as the backends' own tests use: TTL 500 ms, Wait 600 ms.
var fast = model.Params{TTL: 500 * time.Millisecond, Wait: 600 * time.Millisecond, JitterMS: 5}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func at(i ...int) model.Target { return model.Target{Indexes: i} }

// cases are the fault overlaps every backend must drive alike. Targets are
// indexes, or roles that match nobody, so that which instance wins an
// election (a race on the real backends) does not change them.
var cases = []struct {
	name   string
	faults []model.Fault
	want   []string
	// verdict: a skipped fault makes the run unknown.
	verdict model.Verdict
	// starts delays instances' starts (model.Scenario.Starts); started
	// is then how many times each index must have started.
	starts  []time.Duration
	started []int
	// duration is the fault phase; 0: 2 s.
	duration time.Duration
}{
	{
		name: "faults on a down instance",
		faults: []model.Fault{
			{At: ms(500), Kind: model.FaultCrash, Target: at(1)},
			{At: ms(800), For: ms(300), Kind: model.FaultPause, Target: at(1)},
			{At: ms(1000), For: ms(300), Kind: model.FaultClock, Rate: 2, Target: at(1)},
			{At: ms(1200), For: ms(300), Kind: model.FaultPartition, Mode: model.PartitionRefuse, Target: at(1)},
			{At: ms(1600), Kind: model.FaultCrash, Target: at(1)},
		},
		want: []string{
			"fault-applied 0 crash [1]",
			"fault-skipped 1 pause [] not-running",
			"fault-skipped 2 clock [] not-running",
			"fault-applied 3 partition [1]", "fault-healed 3 partition [1]",
			"fault-applied 4 crash [1]", // nothing left to kill: a crash acts on what is there
			"fault-healed 0 crash [1]", "fault-healed 4 crash [1]",
		},
		verdict: model.Unknown,
	},
	{
		name: "faults on a restarting instance",
		faults: []model.Fault{
			{At: ms(500), For: ms(500), Kind: model.FaultCrash, Restart: true, Target: at(1)},
			{At: ms(600), For: ms(400), Kind: model.FaultCrash, Restart: true, Target: at(1)},
			{At: ms(1000), For: ms(300), Kind: model.FaultPartition, Mode: model.PartitionReset, Target: at(1)},
			{At: ms(1050), For: ms(300), Kind: model.FaultLatency, Latency: ms(50), Direction: model.DirectionBoth, Target: at(1)},
		},
		want: []string{
			"fault-applied 0 crash [1]", "fault-applied 1 crash [1]",
			"fault-healed 0 crash [1]", "fault-healed 1 crash [1] already-up",
			"fault-applied 2 partition [1]", "fault-applied 3 latency [1]",
			"fault-healed 2 partition [1]", "fault-healed 3 latency [1]",
		},
		verdict: model.Pass,
	},
	{
		name: "pause, then crash, of one instance",
		faults: []model.Fault{
			{At: ms(500), For: ms(1000), Kind: model.FaultPause, Target: at(0)},
			{At: ms(800), Kind: model.FaultCrash, Target: at(0)},
		},
		want: []string{
			"fault-applied 0 pause [0]", "instance-paused 0", "fault-applied 1 crash [0]",
			"fault-healed 0 pause [0] not-running", "fault-healed 1 crash [0]",
		},
		verdict: model.Pass,
	},
	{
		name: "faults on a cut-off instance",
		faults: []model.Fault{
			{At: ms(500), For: ms(1000), Kind: model.FaultPartition, Mode: model.PartitionBlackhole, Target: at(0)},
			{At: ms(700), For: ms(500), Kind: model.FaultLatency, Latency: ms(100), Jitter: ms(20), Direction: model.DirectionReplies, Target: at(0)},
			{At: ms(800), For: ms(200), Kind: model.FaultClock, Rate: 0.5, Target: at(0)},
			{At: ms(1100), For: ms(200), Kind: model.FaultPause, Target: at(0)},
		},
		want: []string{
			"fault-applied 0 partition [0]", "fault-applied 1 latency [0]", "fault-applied 2 clock [0]",
			"fault-healed 2 clock [0]", "fault-applied 3 pause [0]", "instance-paused 0",
			"fault-healed 1 latency [0]", "instance-resumed 0", "fault-healed 3 pause [0]", "fault-healed 0 partition [0]",
		},
		verdict: model.Pass,
	},
	{
		name: "role targets when nobody leads",
		faults: []model.Fault{
			{At: ms(500), For: ms(600), Kind: model.FaultCrash, Restart: true, Target: model.Target{Role: model.RoleAll}},
			{At: ms(700), For: ms(300), Kind: model.FaultPartition, Mode: model.PartitionBlackhole, Target: model.Target{Role: model.RoleLeader}},
			{At: ms(800), For: ms(300), Kind: model.FaultLatency, Latency: ms(50), Direction: model.DirectionBoth, Target: model.Target{Role: model.RoleFollower}},
			{At: ms(900), For: ms(100), Kind: model.FaultPause, Target: model.Target{Role: model.RoleRandom}},
		},
		want: []string{
			"fault-applied 0 crash [0 1 2]",
			"fault-skipped 1 partition [] no-match", "fault-skipped 2 latency [] no-match", "fault-skipped 3 pause [] no-match",
			"fault-healed 0 crash [0 1 2]",
		},
		verdict: model.Unknown,
	},
	{
		name: "clocks bent, then one crashes",
		faults: []model.Fault{
			{At: ms(500), Kind: model.FaultClock, Rate: 2, Target: model.Target{Role: model.RoleAll}},
			{At: ms(1000), Kind: model.FaultCrash, Target: at(1)},
		},
		want: []string{
			"fault-applied 0 clock [0 1 2]", "fault-applied 1 crash [1]",
			"fault-healed 0 clock [0 1 2] not-running", "fault-healed 1 crash [1]",
		},
		verdict: model.Pass,
	},
	{
		// The second pause comes late enough for an agent's start-up
		// (30-570 ms idle; 700 ms was too short beside other tests at
		// load 20) to be done. (A suspend would do as well, but the
		// process backend has none.)
		name:     "a pause healed after a restart, then a second pause",
		duration: ms(4000),
		faults: []model.Fault{
			{At: ms(300), For: ms(3300), Kind: model.FaultPause, Target: at(0)},
			{At: ms(400), For: ms(100), Kind: model.FaultCrash, Restart: true, Target: at(0)},
			{At: ms(2600), For: ms(1200), Kind: model.FaultPause, Target: at(0)},
		},
		want: []string{
			"fault-applied 0 pause [0]", "instance-paused 0",
			"fault-applied 1 crash [0]", "fault-healed 1 crash [0]",
			"fault-applied 2 pause [0]", "instance-paused 0",
			// The first pause's incarnation is gone: its heal leaves the
			// second pause, of the new one, be.
			"fault-healed 0 pause [0] not-running",
			"instance-resumed 0", "fault-healed 2 pause [0]",
		},
		verdict: model.Pass,
	},
	{
		// Two partitions of one mode overlap on instance 0: each is its own
		// fault, added and healed on its own (a validated scenario: the
		// role target escapes Validate's overlap check).
		name: "overlapping blackhole partitions",
		faults: []model.Fault{
			{At: ms(500), For: ms(1500), Kind: model.FaultPartition, Mode: model.PartitionBlackhole, Target: at(0)},
			// Inside fault 0 on the leader it may cause nothing new: allowed.
			{At: ms(800), For: ms(200), Kind: model.FaultPartition, Mode: model.PartitionBlackhole, Target: model.Target{Role: model.RoleAll}, AllowSkipped: true},
		},
		want: []string{
			"fault-applied 0 partition [0]", "fault-applied 1 partition [0 1 2]",
			"fault-healed 1 partition [0 1 2]", "fault-healed 0 partition [0]",
		},
		verdict: model.Pass,
	},
	{
		// The second clock fault waits for the agent's start-up too.
		name:     "a clock healed after a restart, then bent again",
		duration: ms(4000),
		faults: []model.Fault{
			{At: ms(300), For: ms(3300), Kind: model.FaultClock, Rate: 2, Target: model.Target{Role: model.RoleAll}},
			{At: ms(400), For: ms(100), Kind: model.FaultCrash, Restart: true, Target: at(0)},
			{At: ms(2600), For: ms(1200), Kind: model.FaultClock, Rate: 0.5, Target: at(0)},
		},
		want: []string{
			"fault-applied 0 clock [0 1 2]", "fault-applied 1 crash [0]", "fault-healed 1 crash [0]",
			"fault-applied 2 clock [0]",
			// Instance 0's clock is fault 2's now: fault 0's heal does not
			// set it back to real time.
			"fault-healed 0 clock [0 1 2] not-running", "fault-healed 2 clock [0]",
		},
		verdict: model.Pass,
	},
	{
		// Index 2 starts at 1 s: a fault on its process finds nothing to
		// act on; one on its link acts on the proxy, which is there from
		// the start, and may last across the start.
		name:   "faults on a not-yet-started instance",
		starts: []time.Duration{0, 0, ms(1000)},
		faults: []model.Fault{
			{At: ms(300), For: ms(200), Kind: model.FaultPause, Target: at(2)},
			{At: ms(400), For: ms(200), Kind: model.FaultClock, Rate: 2, Target: at(2)},
			{At: ms(500), For: ms(300), Kind: model.FaultPartition, Mode: model.PartitionRefuse, Target: at(2)},
			{At: ms(600), For: ms(900), Kind: model.FaultLatency, Latency: ms(50), Direction: model.DirectionBoth, Target: at(2)},
		},
		want: []string{
			"fault-skipped 0 pause [] not-running", "fault-skipped 1 clock [] not-running",
			"fault-applied 2 partition [2]", "fault-applied 3 latency [2]",
			"fault-healed 2 partition [2]", "fault-healed 3 latency [2]",
		},
		verdict: model.Unknown,
		started: []int{1, 1, 1},
	},
	{
		// The restart starts index 2 before its own start is due, which
		// then finds it up and starts nothing: one incarnation, not two.
		name:   "a crash with restart of a not-yet-started instance",
		starts: []time.Duration{0, 0, ms(1000)},
		faults: []model.Fault{
			{At: ms(300), For: ms(300), Kind: model.FaultCrash, Restart: true, Target: at(2)},
		},
		want:    []string{"fault-applied 0 crash [2]", "fault-healed 0 crash [2]"},
		verdict: model.Pass,
		started: []int{1, 1, 1},
	},
}

// trace is the run's fault events, each as "kind id fault targets class"
// (the class of a skip's or heal's reason, not its wording), and its
// instances' pauses and resumes, each as "kind instance".
func trace(tl model.Timeline) []string {
	var out []string
	for _, e := range tl {
		if e.Kind == model.InstancePaused || e.Kind == model.InstanceResumed {
			out = append(out, fmt.Sprintf("%s %d", e.Kind, e.Instance))
			continue
		}
		if e.Kind != model.FaultApplied && e.Kind != model.FaultSkipped && e.Kind != model.FaultHealed {
			continue
		}
		s := fmt.Sprintf("%s %d %s %v", e.Kind, e.FaultID, e.Fault, e.Target)
		switch {
		case e.Err != "":
			s += " error"
		case e.Kind == model.FaultApplied:
			if strings.Contains(e.Detail, "; skipped") {
				s += " partly-skipped"
			}
		case strings.Contains(e.Detail, "not running"):
			s += " not-running"
		case strings.Contains(e.Detail, "matched no live instance"):
			s += " no-match"
		case strings.Contains(e.Detail, "already up again"):
			s += " already-up"
		case e.Detail != "":
			s += " other: " + e.Detail
		}
		out = append(out, s)
	}
	return out
}

// starts lists the instances' starts and stops, for a failure's message:
// a process fault skipped as not running is most often an agent whose
// start-up was slow.
func starts(tl model.Timeline) string {
	var out []string
	for _, e := range tl {
		switch e.Kind {
		case model.InstanceStarted, model.InstanceCrashed, model.InstanceStopped:
			out = append(out, fmt.Sprintf("%s %d at %v", e.Kind, e.Instance, e.At))
		}
	}
	return strings.Join(out, ", ")
}

// skippedWhileStarting reports whether a fault was skipped as not running
// on an instance that started after the skip: one whose start was under
// way (a slow agent), or not yet due.
func skippedWhileStarting(tl model.Timeline) bool {
	for _, e := range tl {
		m := notRunning.FindStringSubmatch(e.Detail)
		if e.Kind != model.FaultSkipped || m == nil {
			continue
		}
		for _, x := range tl {
			if x.Kind == model.InstanceStarted && x.At > e.At && slices.Contains(strings.Fields(m[1]), fmt.Sprint(x.Instance)) {
				return true
			}
		}
	}
	return false
}

// notRunning is how the driver names the instances a fault found not
// running ("instance [0 2] not running").
var notRunning = regexp.MustCompile(`instance \[([0-9 ]+)\] not running`)

// TestConformance runs every case on every backend.
func TestConformance(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "chaos")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/chaos").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	backends := []sim.Backend{virtual.Backend{}, real.Backend{}, process.Backend{Agent: []string{bin, "agent"}}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, b := range backends {
				dur := tc.duration
				if dur == 0 {
					dur = ms(2000)
				}
				sc := model.Scenario{Name: "conformance", Instances: 3, Seed: 1, Params: fast,
					Duration: dur, Recovery: ms(1000), Faults: tc.faults, Starts: tc.starts}
				// Validate refuses the faults on a down or restarting
				// instance on fixed indexes; roles can make them at run time.
				var res *verdict.Result
				for attempt := 1; ; attempt++ {
					var err error
					res, err = sim.RunUnvalidated(context.Background(), sc, b, sim.Options{})
					if err != nil {
						t.Fatalf("%s: %v", b.Name(), err)
					}
					// Load can stretch an agent's start-up past the fault
					// planned after it: that run says nothing of the rule,
					// so it runs again (3 times at most).
					ok := strings.Join(trace(res.Timeline), "\n") == strings.Join(tc.want, "\n")
					if ok || attempt == 3 || !skippedWhileStarting(res.Timeline) {
						break
					}
					t.Logf("%s: attempt %d: a fault was skipped while its instance was still starting (%s); again", b.Name(), attempt, starts(res.Timeline))
				}
				if len(res.Errors) > 0 {
					t.Errorf("%s: harness errors %v", b.Name(), res.Errors)
				}
				if got := trace(res.Timeline); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					t.Errorf("%s: fault events\n got %q\nwant %q\nstarts: %s", b.Name(), got, tc.want, starts(res.Timeline))
				}
				if tc.started != nil {
					started := make([]int, sc.Instances)
					for _, e := range res.Timeline {
						if e.Kind == model.InstanceStarted && e.Instance >= 0 && e.Instance < sc.Instances {
							started[e.Instance]++
						}
					}
					if !slices.Equal(started, tc.started) {
						t.Errorf("%s: starts per instance %v, want %v", b.Name(), started, tc.started)
					}
				}
				if res.Verdict != tc.verdict {
					t.Errorf("%s: verdict %s (%v), want %s", b.Name(), res.Verdict, res.Reasons, tc.verdict)
				}
			}
		})
	}
}
