package process_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/process"
)

// chaosAgent builds cmd/chaos and returns its `chaos agent` command.
func chaosAgent(t *testing.T) []string { return chaosAgentB(t) }

func chaosAgentB(t testing.TB) []string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "chaos")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/chaos").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return []string{bin, "agent"}
}

func short(faults ...model.Fault) model.Scenario {
	return model.Scenario{Name: "process-test", Instances: 3, Duration: 3 * time.Second, Recovery: 2 * time.Second,
		Params: model.Params{TTL: 400 * time.Millisecond, Wait: 500 * time.Millisecond, JitterMS: 5}, Faults: faults}
}

// TestFaultsOnProcesses: crash (SIGKILL, restarted with a new id), pause
// (SIGSTOP…SIGCONT) and stop (SIGTERM) on real agent processes, the clock
// command on an agent that declares it, and every agent reaped at the end.
func TestFaultsOnProcesses(t *testing.T) {
	logs := t.TempDir()
	b := process.Backend{Agent: chaosAgent(t), LogDir: logs}
	sc := short(
		model.Fault{At: 600 * time.Millisecond, For: 500 * time.Millisecond, Kind: model.FaultCrash, Target: model.Target{Role: "leader"}, Restart: true},
		model.Fault{At: 1400 * time.Millisecond, For: 600 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Role: "leader"}},
		model.Fault{At: 2200 * time.Millisecond, For: 300 * time.Millisecond, Kind: model.FaultClock, Rate: 0.5, Target: model.Target{Indexes: []int{1}}},
		model.Fault{At: 2600 * time.Millisecond, Kind: model.FaultStop, Target: model.Target{Role: "leader"}},
	)
	res, err := sim.Run(context.Background(), sc, b, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Backend != "process" || len(res.Errors) > 0 {
		t.Fatalf("backend %q, errors %v", res.Backend, res.Errors)
	}
	count := map[model.Kind]int{}
	ids := map[string]bool{}
	for _, e := range res.Timeline {
		count[e.Kind]++
		if e.Kind == model.InstanceStarted {
			ids[e.ID] = true
		}
		if e.Kind == model.FaultHealed && e.Err != "" {
			t.Errorf("fault %d failed: %s", e.FaultID, e.Err)
		}
	}
	if count[model.InstanceStarted] != 4 || len(ids) != 4 {
		t.Errorf("%d starts with %d ids, want 4 and 4 (the restart is a new process, a new id)", count[model.InstanceStarted], len(ids))
	}
	for _, k := range []model.Kind{model.InstanceCrashed, model.InstancePaused, model.InstanceResumed, model.InstanceStopped, model.LeaderGained} {
		if count[k] == 0 {
			t.Errorf("no %s in the timeline", k)
		}
	}
	if count[model.LeaderGained] < 3 {
		t.Errorf("%d promotions: the crash, pause and stop of leaders should each bring a new one", count[model.LeaderGained])
	}
	if sl := res.Analysis.StampLateness; sl.Count == 0 {
		t.Error("no stamping lateness measured: chaos agent writes t on every line")
	}
	files, _ := filepath.Glob(filepath.Join(logs, "*", "instance-*.log"))
	if len(files) != 4 {
		t.Errorf("%d agent logs kept, want 4: %v", len(files), files)
	}
	assertNoAgents(t)
}

// TestClockRefusedWithoutCapability: a clock fault on an agent that does
// not declare clock fails with the reason; the run goes on.
func TestClockRefusedWithoutCapability(t *testing.T) {
	python := "/usr/bin/python3"
	if exec.Command(python, "-c", "import redis").Run() != nil {
		t.Fatal("no /usr/bin/python3 with redis-py (Debian: apt-get install python3-redis)")
	}
	b := process.Backend{Agent: []string{python, "../../examples/agent-python/agent.py"}}
	sc := short(model.Fault{At: time.Second, For: 500 * time.Millisecond, Kind: model.FaultClock, Rate: 2, Target: model.Target{Indexes: []int{0}}})
	res, err := sim.Run(context.Background(), sc, b, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	refused, promotions := false, 0
	for _, e := range res.Timeline {
		if e.Kind == model.FaultHealed && strings.Contains(e.Err, `does not declare the "clock" capability`) {
			refused = true
		}
		if e.Kind == model.LeaderGained {
			promotions++
		}
	}
	if !refused || promotions == 0 {
		t.Fatalf("clock fault refused: %v; promotions %d; errors %v", refused, promotions, res.Errors)
	}
	assertNoAgents(t)
}

// TestMalformedHello: an agent whose hello is not protocol stops the run
// from starting, with its name and line.
func TestMalformedHello(t *testing.T) {
	b := process.Backend{Agent: []string{"sh", "-c", `echo '{"type":"hello","protocol":1}'; sleep 30`}}
	_, err := sim.Run(context.Background(), short(), b, sim.Options{})
	if err == nil || !strings.Contains(err.Error(), `agent instance 0 ("sh -c`) || !strings.Contains(err.Error(), "stdout line 1: hello lacks id, key") {
		t.Fatalf("error %v, want the agent, the line and what is wrong", err)
	}
	assertNoAgents(t)
}

// assertNoAgents fails if a child of this test process is still alive.
func assertNoAgents(t *testing.T) {
	t.Helper()
	me := os.Getpid()
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(me) && f[0] != "Z" {
			cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(d), "cmdline"))
			if strings.Contains(string(cmd), "agent") || strings.Contains(string(cmd), "sleep") {
				t.Errorf("left running: %s", strings.ReplaceAll(string(cmd), "\x00", " "))
			}
		}
	}
}
