package process_test

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/publish"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/process"
	"github.com/leaselab/leaselab/sim/virtual"
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
	// The result names them for the reports to link, by instance and
	// incarnation: the crashed leader's restart comes after its first life.
	if res.Agent == nil || len(res.Agent.Logs) != 4 || !slices.IsSortedFunc(res.Agent.Logs, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) }) {
		t.Errorf("the result's agent logs %v: want the 4 kept, in order", res.Agent)
	}
	assertNoAgents(t)
}

// python is the Python agent's command, failing the test without redis-py.
func python(t *testing.T) []string {
	t.Helper()
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import redis").Run() != nil {
		t.Fatal("no /usr/bin/python3 with redis-py (Debian: apt-get install python3-redis)")
	}
	return []string{py, "../../examples/agent-python/agent.py"}
}

// TestRefusedWithoutCapability: a scenario that needs a capability the
// agent's hello does not declare — runner mode (runner) judged only on
// tasks and chores, a clock fault (clock) — is refused before anything
// runs, naming the agent, the capability and why; the probe that read the
// hello leaves nothing running.
func TestRefusedWithoutCapability(t *testing.T) {
	runner := short()
	runner.Mode = model.ModeRunner
	runner.Expect = []model.Expectation{{Metric: "lost_tasks", Max: "0"}}
	clock := short(model.Fault{At: time.Second, For: 500 * time.Millisecond, Kind: model.FaultClock, Rate: 2, Target: model.Target{Indexes: []int{0}}})
	safe := short()
	safe.Params.Safe = true
	for _, c := range []struct {
		name string
		sc   model.Scenario
		want string
	}{
		{"runner", runner, `does not declare the "runner" capability in its hello (it declares stop): a runner-mode scenario needs`},
		{"clock", clock, `does not declare the "clock" capability in its hello (it declares stop): a clock fault is the clock command`},
		// Before, the Python agent exited before its hello in safe mode
		// and the run ended incomplete.
		{"safe", safe, `does not declare the "safe" capability in its hello (it declares stop): a safe-mode scenario needs`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := process.Backend{Agent: python(t)}
			res, err := sim.Run(context.Background(), c.sc, b, sim.Options{})
			if !sim.IsRefusal(err) || res != nil {
				t.Fatalf("result %v, error %v: want a refusal, nothing run", res != nil, err)
			}
			if !strings.Contains(err.Error(), `process: agent "/usr/bin/python3 ../../examples/agent-python/agent.py" `+c.want) {
				t.Fatalf("refusal %q, want the agent, the capability and why", err)
			}
			assertNoAgents(t)
		})
	}
}

// TestProbeRunsTheScenariosAgent: the capability probe starts the agent
// the run would start: the scenario's own (agent:), unless the backend's
// wins (AgentWins, as --agent). Before, it probed the backend's agent
// whatever the scenario named: a scenario whose agent lacks the clock
// capability was let through to fail at its hellos, and one whose agent has
// it was refused for the backend's.
func TestProbeRunsTheScenariosAgent(t *testing.T) {
	with := []string{"sh", "-c", `echo "{\"type\":\"hello\",\"protocol\":1,\"id\":\"sh-$$\",\"key\":\"$LEASELAB_KEY\",\"capabilities\":[\"clock\"]}"; exec sleep 30`}
	without := shAgent(`exec sleep 30`)
	sc := short(model.Fault{At: time.Second, For: 500 * time.Millisecond, Kind: model.FaultClock, Rate: 2, Target: model.Target{Indexes: []int{0}}})
	for _, c := range []struct {
		name              string
		backend, scenario []string
		wins, refused     bool
	}{
		{"the scenario's lacks it", with, without, false, true},
		{"the scenario's has it", without, with, false, false},
		{"the backend's wins and lacks it", without, with, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := sc
			sc.Agent = &model.Agent{Command: c.scenario}
			err := process.Backend{Agent: c.backend, AgentWins: c.wins}.RefusesContext(t.Context(), sc.WithDefaults())
			if refused := err != nil && strings.Contains(err.Error(), `does not declare the "clock" capability`); refused != c.refused {
				t.Errorf("refusal %v, want refused %v", err, c.refused)
			}
			assertNoAgents(t)
		})
	}
}

// TestNotRefusedWithCapability: chaos agent declares runner, clock and
// safe: none of these scenarios is refused.
func TestNotRefusedWithCapability(t *testing.T) {
	b := process.Backend{Agent: chaosAgent(t)}
	runner := short()
	runner.Mode = model.ModeRunner
	clock := short(model.Fault{At: time.Second, For: 500 * time.Millisecond, Kind: model.FaultClock, Rate: 2, Target: model.Target{Indexes: []int{0}}})
	safe := short()
	safe.Params.Safe = true
	for _, sc := range []model.Scenario{runner, clock, safe} {
		if err := b.Refuses(sc.WithDefaults()); err != nil {
			t.Errorf("mode %q, %d faults: refused: %v", sc.Mode, len(sc.Faults), err)
		}
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

// child is a child process of this test process, from /proc.
type child struct {
	dir   string // /proc/PID
	state string // "R", "S", "Z", ...
	head  string // "pid (comm)"
}

// children lists this test process's children.
func children() []child {
	me := strconv.Itoa(os.Getpid())
	dirs, _ := filepath.Glob("/proc/[0-9]*/stat")
	var cs []child
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		end := strings.LastIndexByte(s, ')') + 1
		if f := strings.Fields(s[end:]); len(f) > 1 && f[1] == me {
			cs = append(cs, child{dir: filepath.Dir(d), state: f[0], head: s[:end]})
		}
	}
	return cs
}

// assertNoAgents fails if a child of this test process is still alive.
func assertNoAgents(t *testing.T) {
	t.Helper()
	for _, c := range children() {
		if c.state == "Z" {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(c.dir, "cmdline"))
		if strings.Contains(string(cmd), "agent") || strings.Contains(string(cmd), "sleep") {
			t.Errorf("left running: %s", strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
}

// TestPauseBuiltinUnderSIGSTOP: the pause built-in passes on real SIGSTOP
// whenever the agents start. Under SIGSTOP a follower wins during the pause
// only if its retry falls between the key's expiry and SIGCONT, so
// followers started 2.75 s (scenario time) after the leader make no overlap at
// all (the run's clock starts at the first hello, so delaying every agent
// alike shifts nothing): the built-in's former overlap_windows
// {exactly: 1}, true of the frozen-clock pause, failed there; its
// stale_leadership minimum (the paused leader believes past its lease,
// ≥ P − TTL) holds at every start.
// And the paused leader's belief ends at once after SIGCONT: its overdue
// renewal fires on resume.
func TestPauseBuiltinUnderSIGSTOP(t *testing.T) {
	bin := chaosAgent(t)
	e, ok := scenarios.Lookup("pause")
	if !ok {
		t.Fatal("no built-in pause")
	}
	for _, c := range []struct {
		name     string
		starts   []time.Duration
		overlaps int // -1: either
		scale    float64
	}{
		{"at once", nil, -1, 0.2},
		// The leader (instance 0) renews at 0, 2.5, 5 s, so its key
		// expires at 10 s, and SIGCONT comes at 14.25 s; followers
		// started at 2.75 s retry at 8.75 s (the key still held) and
		// 14.75 s (after SIGCONT): none wins during the pause. A late
		// follower start (its process's start-up) only moves the second
		// retry further from SIGCONT; it has 1.25 s before the first meets
		// the expiry (0.62 s real at this scale), and SIGCONT 0.5 s.
		// At scale 0.5, so that these margins are 0.25 s and more of real time.
		{"followers 2.75s late", []time.Duration{0, 2750 * time.Millisecond, 2750 * time.Millisecond}, 0, 0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := e.Scenario
			sc.TimeScale, sc.Starts = c.scale, c.starts
			b := process.Backend{Agent: bin}
			res, err := sim.Run(context.Background(), sc, b, sim.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != model.Pass {
				t.Errorf("verdict %s: %v", res.Verdict, res.Reasons)
			}
			if c.overlaps >= 0 && res.Analysis.Summary.Overlaps != c.overlaps {
				t.Errorf("%d overlap windows, want %d", res.Analysis.Summary.Overlaps, c.overlaps)
			}
			var resumed time.Duration
			paused := -1
			for _, ev := range res.Timeline {
				switch {
				case ev.Kind == model.InstanceResumed:
					resumed, paused = ev.At, ev.Instance
				case ev.Kind == model.LeaderLost && ev.Instance == paused && resumed > 0:
					if d := ev.At - resumed; d > 200*time.Millisecond {
						t.Errorf("the resumed leader demoted %v after SIGCONT: its overdue renewal should fire at once", d)
					}
					paused = -1
				}
			}
			if resumed == 0 || paused != -1 {
				t.Errorf("resumed at %v; the paused leader's demotion after it not found", resumed)
			}
			assertNoAgents(t)
		})
	}
}

// With Publish, every chaos agent publishes its transitions as production
// does (LEASELAB_PUBLISH=1), to the stream of the group named after the
// scenario: each promotion the harness recorded is there, by the same
// elector id. Before, --publish refused the process backend.
func TestAgentsPublish(t *testing.T) {
	addr := redistest.Addr(t) // outlives the run, to read the stream after it
	var group string
	b := process.Backend{Provider: env.Embedded{RedisAddr: addr}, Agent: chaosAgent(t), Publish: true,
		OnPublish: func(g, _ string) { group = g }}
	sc := short(model.Fault{At: 1200 * time.Millisecond, Kind: model.FaultStop, Target: model.Target{Role: "leader"}})
	sc.Name = "process-publish"
	res, err := sim.Run(context.Background(), sc, b, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if group != sc.Name {
		t.Fatalf("published to group %q, want the scenario's name %q", group, sc.Name)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	msgs, err := rdb.XRange(context.Background(), publish.StreamKey(group), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	published := map[string]int{}
	for _, m := range msgs {
		e, err := publish.ParseEntry(m.ID, m.Values)
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == election.Promoted {
			published[e.Instance]++
		}
	}
	promoted := 0
	for _, e := range res.Timeline {
		if e.Kind == model.LeaderGained {
			promoted++
			if published[e.ID] == 0 {
				t.Errorf("%s was promoted (harness at %v) but published no promotion; published %v", e.ID, e.At, published)
			}
		}
	}
	if promoted < 2 {
		t.Errorf("%d promotions; the stop of the leader should bring a second", promoted)
	}
}

// TestRefusesSuspend: a process cannot stop its own monotonic clock, so a
// suspend is refused before anything runs, with the reason.
func TestRefusesSuspend(t *testing.T) {
	e, ok := scenarios.Lookup("suspend")
	if !ok {
		t.Fatal("no suspend built-in")
	}
	err := process.Backend{Agent: []string{"/bin/false"}}.Refuses(e.Scenario)
	if err == nil || !strings.Contains(err.Error(), "suspend") || !strings.Contains(err.Error(), "monotonic clock") {
		t.Fatalf("Refuses(suspend) = %v; want a refusal naming suspend and the monotonic clock", err)
	}
}

// envSeen is an env.Embedded that hands the test each environment it
// sets up, so the test can look at the run's proxies.
type envSeen struct{ seen chan *env.Environment }

func (e envSeen) Environment(ctx context.Context) (*env.Environment, error) {
	en, err := env.Embedded{}.Environment(ctx)
	if err == nil {
		e.seen <- en
	}
	return en, err
}

// TestLatencyJitterOnProcesses: an agent's connection passes no gate of the
// harness's, so a latency fault with jitter is run, not refused, with
// Toxiproxy's own jitter: the target's proxy carries Latency ± Jitter in the
// fault's direction while the fault lasts, and nothing after it.
func TestLatencyJitterOnProcesses(t *testing.T) {
	seen := make(chan *env.Environment, 1)
	b := process.Backend{Agent: chaosAgent(t), Provider: envSeen{seen}}
	sc := short(model.Fault{At: 500 * time.Millisecond, For: 1500 * time.Millisecond, Kind: model.FaultLatency,
		Latency: 120 * time.Millisecond, Jitter: 80 * time.Millisecond, Direction: model.DirectionRequests,
		Target: model.Target{Indexes: []int{1}}})
	if err := b.Refuses(sc.WithDefaults()); err != nil {
		t.Fatalf("Refuses: %v; want latency jitter run on processes", err)
	}
	applied, healed := make(chan struct{}), make(chan struct{})
	type found struct {
		toxics []string
		err    error
	}
	during := make(chan found, 1)
	go func() {
		en := <-seen
		<-applied
		// fault-applied is recorded before the fault's action: poll the
		// proxies until the toxic is there or the fault has healed.
		for {
			var f found
			proxies, err := en.Toxiproxy.Proxies()
			if err != nil {
				during <- found{err: err}
				return
			}
			for name, p := range proxies {
				toxics, err := p.Toxics()
				if err != nil {
					f.err = err
					break
				}
				for _, x := range toxics {
					f.toxics = append(f.toxics, fmt.Sprintf("%s %s %s latency=%v jitter=%v", name, x.Type, x.Stream, x.Attributes["latency"], x.Attributes["jitter"]))
				}
			}
			select {
			case <-healed:
			default:
				if len(f.toxics) == 0 && f.err == nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
			}
			during <- f
			return
		}
	}()
	res, err := sim.Run(context.Background(), sc, b, sim.Options{Observe: func(e model.Event) {
		switch e.Kind {
		case model.FaultApplied:
			close(applied)
		case model.FaultHealed:
			close(healed)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors %v", res.Errors)
	}
	select {
	case <-healed:
	default:
		t.Fatal("the run ended without healing its latency fault")
	}
	f := <-during
	if f.err != nil {
		t.Fatalf("reading the toxics: %v", f.err)
	}
	if len(f.toxics) != 1 || !strings.Contains(f.toxics[0], "latency upstream latency=120 jitter=80") {
		t.Fatalf("toxics during the fault: %q; want one latency upstream latency=120 jitter=80 on instance 1's proxy", f.toxics)
	}
}

// shHello is the sh command that writes an sh agent's hello.
const shHello = `echo "{\"type\":\"hello\",\"protocol\":1,\"id\":\"sh-$LEASELAB_INSTANCE-$$\",\"key\":\"$LEASELAB_KEY\",\"capabilities\":[]}"`

// shAgent is an agent in sh: its hello, then script. LEASELAB_INSTANCE
// and the other variables are in its environment.
func shAgent(script string) []string {
	return []string{"sh", "-c", shHello + "; " + script}
}

// runWithin runs sc and fails the test if the run has not returned within
// limit: a hang shows as that failure, not as the test binary's timeout.
func runWithin(t *testing.T, limit time.Duration, sc model.Scenario, b process.Backend) (*verdict.Result, error) {
	t.Helper()
	return runWithinCtx(context.Background(), t, limit, sc, b, sim.Options{})
}

// runWithinCtx is runWithin with a ctx and options.
func runWithinCtx(ctx context.Context, t *testing.T, limit time.Duration, sc model.Scenario, b sim.Backend, o sim.Options) (*verdict.Result, error) {
	t.Helper()
	type ran struct {
		res *verdict.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := sim.Run(ctx, sc, b, o)
		done <- ran{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-time.After(limit):
		t.Fatalf("%s: the run did not return within %v", b.Name(), limit)
		return nil, nil
	}
}

// assertNoZombies fails if a child of this test process has exited and
// was never reaped.
func assertNoZombies(t *testing.T) {
	t.Helper()
	for _, c := range children() {
		if c.state == "Z" {
			t.Errorf("never reaped: %s", c.head)
		}
	}
}

// TestPrestartedAgentsReapedOnFailure: when one agent fails before its
// hello, the run ends with that error, and the agents already launched for
// it (prestarted, never started) are killed and reaped. Before, nothing
// reaped them and the run waited for ever: a loaded suite hung at its end.
func TestPrestartedAgentsReapedOnFailure(t *testing.T) {
	b := process.Backend{Agent: []string{"sh", "-c", `if [ "$LEASELAB_INSTANCE" = 2 ]; then echo 'no hello' >&2; exit 3; fi; ` + shAgent("exec sleep 30")[2]}}
	res, err := runWithin(t, 20*time.Second, short(), b)
	if err == nil || !strings.Contains(err.Error(), "instance 2") {
		t.Fatalf("result %v, error %v: want instance 2's missing hello", res != nil, err)
	}
	assertNoAgents(t)
	assertNoZombies(t)
}

// TestDelayedStartLaunchesLate: an instance whose start Scenario.Starts
// delays is launched at its start, not with the others: its process must
// not run (and elect) before. The agent writes a line at once after its
// hello; prestarted with the others, the harness read it only at the
// delayed start, 1.5 s late.
func TestDelayedStartLaunchesLate(t *testing.T) {
	sc := short()
	sc.Starts = []time.Duration{0, 0, 1500 * time.Millisecond}
	b := process.Backend{Agent: shAgent(`echo "{\"type\":\"error\",\"err\":\"first line\",\"t\":$(date +%s%N)}"; exec sleep 30`)}
	res, err := runWithin(t, 20*time.Second, sc, b)
	if err != nil {
		t.Fatal(err)
	}
	var started time.Duration
	for _, e := range res.Timeline {
		switch {
		case e.Kind == model.InstanceStarted && e.Instance == 2:
			started = e.At
		case e.Kind == model.ElectorError && e.Instance == 2:
			if started < 1500*time.Millisecond {
				t.Errorf("instance 2 started at %v, want its delayed start 1.5s", started)
			}
			if e.Lateness > time.Second {
				t.Errorf("instance 2's first line was stamped %v late: its process ran before its start", e.Lateness)
			}
			return
		}
	}
	t.Fatal("instance 2's first line is not in the timeline")
}

// The run's clock starts when the first agent said hello, where its
// election began, as an in-process instance's begins when it is started:
// agents 0.6 s slow to start (sh sleeps first) still win their first
// election at the clock's start, not 0.6 s into the schedule, and the
// first promotion is stamped as it is written.
func TestScheduleCountsFromTheFirstHello(t *testing.T) {
	bin := chaosAgent(t)
	agentCmd := append([]string{"sh", "-c", `sleep 0.6; exec "$0" "$@"`}, bin...)
	sc := short(model.Fault{At: 300 * time.Millisecond, Kind: model.FaultCrash, Target: model.Target{Role: "leader"}})
	res, err := sim.Run(context.Background(), sc, process.Backend{Agent: agentCmd}, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var first *model.Event
	for i, e := range res.Timeline {
		if e.Kind == model.LeaderGained {
			first = &res.Timeline[i]
			break
		}
	}
	if first == nil {
		t.Fatal("no promotion")
	}
	if first.At > 300*time.Millisecond || first.Lateness > 100*time.Millisecond {
		t.Errorf("first promotion at %v, stamped %v late; want at the clock's start (within 300 ms), stamped on time", first.At, first.Lateness)
	}
	assertNoAgents(t)
}

// TestStampLatenessIsUncertainty: a line the harness reads late by L (the
// agent's t says when it was written) puts its event at most L after the
// fact, never before: the event carries L as its Late, and the window it
// opens may be that much longer, so a limit within it is neither held nor
// broken (verdict.Evaluate).
func TestStampLatenessIsUncertainty(t *testing.T) {
	// Instance 0 stamps its promotion, then writes the line 300 ms later.
	b := process.Backend{Agent: shAgent(`if [ "$LEASELAB_INSTANCE" = 0 ]; then t=$(date +%s%N); sleep 0.3; echo "{\"type\":\"promoted\",\"term\":1,\"t\":$t}"; fi; exec sleep 30`)}
	res, err := runWithin(t, 20*time.Second, short(), b)
	if err != nil {
		t.Fatal(err)
	}
	var gained *model.Event
	for i, e := range res.Timeline {
		if e.Kind == model.LeaderGained {
			gained = &res.Timeline[i]
		}
	}
	if gained == nil || gained.Lateness < 300*time.Millisecond || gained.Late != gained.Lateness || gained.Uncertainty != 0 {
		t.Fatalf("promotion %+v: want lateness ≥ 300ms, as much Late, no symmetric uncertainty", gained)
	}
	if bs := res.Analysis.Beliefs; len(bs) != 1 || bs[0].Longer != gained.Late || bs[0].Uncertainty != 0 {
		t.Fatalf("beliefs %+v: want instance 0's, up to its promotion's %v longer", bs, gained.Late)
	}
}

// TestRefusedStampIsAHarnessError: an agent whose t is not the wall clock
// in nanoseconds (here 5) is refused at that line, the run's errors naming
// the agent, the line and the t, and not read as decades of lateness.
func TestRefusedStampIsAHarnessError(t *testing.T) {
	b := process.Backend{Agent: shAgent(`if [ "$LEASELAB_INSTANCE" = 0 ]; then echo "{\"type\":\"promoted\",\"term\":1,\"t\":5}"; fi; exec sleep 30`)}
	res, err := runWithin(t, 20*time.Second, short(), b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) == 0 || !strings.Contains(res.Errors[0], "stdout line 2: t 5 is not this machine's wall clock") {
		t.Fatalf("errors %q: want the refused line named", res.Errors)
	}
	for _, e := range res.Timeline {
		if e.Kind == model.LeaderGained {
			t.Fatalf("the refused promotion was recorded: %+v", e)
		}
	}
}

// gate is a FIFO an agent's script reads a line from (`read line <
// "$GATE"`) before it goes on; open opens it for the test to write that
// line, whenever it is ready (O_RDWR: neither side's open blocks).
func gate(t *testing.T) (path string, open *os.File) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return path, f
}

// TestDelayedStartDoesNotDelayTheFaults: a delayed start launches its agent
// and the schedule goes on; the hello is read as it comes. Instance 2,
// started at 1.5 s, says its hello only once the fault due at 1.6 s was
// applied (it waits on a FIFO the test writes at fault-applied): the fault
// is on time and the instance still starts, after it. Before, the schedule
// waited for the hello at the start, and every later fault was late by the
// agent's start-up (here, it waited for ever: the hello timeout).
func TestDelayedStartDoesNotDelayTheFaults(t *testing.T) {
	path, g := gate(t)
	sc := short(model.Fault{At: 1600 * time.Millisecond, For: 300 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Indexes: []int{0}}})
	sc.Starts = []time.Duration{0, 0, 1500 * time.Millisecond}
	b := process.Backend{
		Agent: []string{"sh", "-c", `if [ "$LEASELAB_INSTANCE" = 2 ]; then read line < "$GATE"; fi; ` + shHello + `; exec sleep 30`},
		Env:   map[string]string{"GATE": path},
	}
	res, err := runWithinCtx(context.Background(), t, 30*time.Second, sc, b, sim.Options{Observe: func(e model.Event) {
		if e.Kind == model.FaultApplied {
			_, _ = g.WriteString("go\n")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors %q", res.Errors)
	}
	var applied, started time.Duration = -1, -1
	for _, e := range res.Timeline {
		switch {
		case e.Kind == model.FaultApplied && e.FaultID == 0:
			applied = e.At
		case e.Kind == model.InstanceStarted && e.Instance == 2:
			started = e.At
		}
	}
	if applied < 0 || started < 0 || started < applied {
		t.Fatalf("fault applied at %v, instance 2 started at %v: want the fault, then the start its hello waited for", applied, started)
	}
	// Only the timer's wake-up on a loaded machine is left of the fault's
	// lateness; before, it was the start-up of the delayed agent.
	if late := res.FaultLateness(); late > time.Second {
		t.Errorf("the fault was applied %v late", late)
	}
	assertNoAgents(t)
	assertNoZombies(t)
}

// TestCancelDuringStartUp: a run cancelled (Ctrl-C) while an agent has not
// said its hello returns at once with ctx's error, every agent killed and
// reaped: during the start-up (instance 1 never says hello; cancelled at
// another's start) and during a delayed start (instance 2's, cancelled at
// the fault after it). Before, the run waited for the hello timeout, 15 s.
func TestCancelDuringStartUp(t *testing.T) {
	for _, c := range []struct {
		name   string
		silent string // the instance that never says hello
		starts []time.Duration
		cancel model.Kind // cancelled at the first of these
	}{
		{"start-up", "1", nil, model.InstanceStarted},
		{"delayed start", "2", []time.Duration{0, 0, 300 * time.Millisecond}, model.FaultApplied},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := short(model.Fault{At: 500 * time.Millisecond, For: 300 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Indexes: []int{0}}})
			sc.Starts = c.starts
			b := process.Backend{Agent: []string{"sh", "-c", `if [ "$LEASELAB_INSTANCE" = ` + c.silent + ` ]; then exec sleep 30; fi; ` + shHello + `; exec sleep 30`}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cancelled := make(chan time.Time, 1)
			once := sync.OnceFunc(func() {
				cancelled <- time.Now()
				cancel()
			})
			res, err := runWithinCtx(ctx, t, 30*time.Second, sc, b, sim.Options{Observe: func(e model.Event) {
				if e.Kind == c.cancel {
					once()
				}
			}})
			var at time.Time
			select {
			case at = <-cancelled:
			default:
				t.Fatalf("never cancelled: no %s; the run returned %v", c.cancel, err)
			}
			// The hello timeout is 15 s: what is left is killing and
			// reaping the agents and the environment's teardown.
			if took := time.Since(at); took > 5*time.Second {
				t.Errorf("the run returned %v after the cancel", took)
			}
			if !errors.Is(err, context.Canceled) || res == nil || res.Complete {
				t.Fatalf("result %v, error %v: want the partial run, incomplete, with ctx's error", res != nil, err)
			}
			// A delayed start the run's end killed before its hello is a
			// harness error naming it (before, nothing said it never ran).
			if c.starts != nil && len(errorsNaming(res, "instance 2", "no hello by the run's end (launched")) != 1 {
				t.Errorf("errors %q: want instance 2's missing hello at the run's end", res.Errors)
			}
			assertNoAgents(t)
			assertNoZombies(t)
		})
	}
}

// TestClockOnAPausedAgent: a clock fault on an instance a pause holds (a
// paused VM whose clock runs fast), a valid scenario. The clock command is
// written to the SIGSTOPped agent, which reads it at its resume: the
// schedule does not wait for its answer, and the pause's heal comes on
// time, as on the virtual backend. Before, the schedule waited 5 s for the
// stopped agent's answer: a harness error, and the 1 s pause lasted ~6 s.
func TestClockOnAPausedAgent(t *testing.T) {
	sc := short(
		model.Fault{At: 500 * time.Millisecond, For: time.Second, Kind: model.FaultPause, Target: model.Target{Indexes: []int{0}}},
		model.Fault{At: 700 * time.Millisecond, For: 300 * time.Millisecond, Kind: model.FaultClock, Rate: 2, Target: model.Target{Indexes: []int{0}}},
	)
	for _, b := range []sim.Backend{virtual.Backend{}, process.Backend{Agent: chaosAgent(t), Env: hostile(t)}} {
		res, err := runWithinCtx(t.Context(), t, 30*time.Second, sc, b, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Errors) > 0 {
			t.Errorf("%s: harness errors %q", b.Name(), res.Errors)
		}
		var paused, resumed time.Duration
		for _, e := range res.Timeline {
			switch e.Kind {
			case model.InstancePaused:
				paused = e.At
			case model.InstanceResumed:
				resumed = e.At
			}
		}
		if d := resumed - paused; d > 2*time.Second {
			t.Errorf("%s: the 1 s pause lasted %v (paused at %v, resumed at %v)", b.Name(), d, paused, resumed)
		}
	}
}
