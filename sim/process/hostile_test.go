package process_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leaselab/leaselab/internal/proc"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/process"
)

// hostile sets up a test of a hostile agent: every process the test's
// agents start carries a marker in its environment (LEASELAB_TEST_MARK),
// and the temporary directories of the run (Redis's) go to a directory of
// the test's own. After the test it fails if a process carrying the
// marker is still there (and kills it, so that a failure leaves nothing
// either) or if the run left a directory behind.
func hostile(t *testing.T) map[string]string {
	t.Helper()
	mark := fmt.Sprintf("%s-%d-%d", t.Name(), os.Getpid(), time.Now().UnixNano())
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Cleanup(func() {
		for _, pid := range marked(mark) {
			cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
			t.Errorf("left running: pid %d: %s", pid, bytes.ReplaceAll(cmd, []byte{0}, []byte(" ")))
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	})
	return map[string]string{"LEASELAB_TEST_MARK": mark}
}

// marked lists the processes whose environment carries the marker (not
// zombies: they have none).
func marked(mark string) []int {
	want := []byte("LEASELAB_TEST_MARK=" + mark + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		pids = append(pids, pid)
	}
	return pids
}

// detach is sh that starts a child in a session of its own, ignoring
// SIGTERM, out of the agent's process group: with the agent's stdout and
// stderr (held: the harness's reads of them never end while it lives), or
// with its stdio on /dev/null (only gone if the harness finds it).
const (
	detachHolding = `setsid sh -c 'trap "" TERM; exec sleep 300' & `
	detachQuiet   = `setsid sh -c 'trap "" TERM; exec sleep 300' </dev/null >/dev/null 2>&1 & `
)

// TestDetachedChildrenAreEnded: an agent whose child leaves its process
// group and session (setsid), ignores SIGTERM and holds the agent's stdout
// and stderr: a crash, a stop and the run's end each end the child with
// the agent, the run returns at once, and nothing is left. Before, the run
// hung for ever (the reader of the crashed agent's stdout never saw its
// end); with the child's stdio on /dev/null it passed and left the
// children running.
func TestDetachedChildrenAreEnded(t *testing.T) {
	for _, c := range []struct{ name, detach, noCgroup string }{
		{"holding stdio", detachHolding, ""}, {"quiet", detachQuiet, ""},
		// Where a cgroup is writable (else the same again).
		{"holding stdio, subreaper", detachHolding, "1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(proc.NoCgroupVar, c.noCgroup)
			sc := short(
				model.Fault{At: 600 * time.Millisecond, Kind: model.FaultCrash, Target: model.Target{Indexes: []int{0}}},
				model.Fault{At: 900 * time.Millisecond, Kind: model.FaultStop, Target: model.Target{Indexes: []int{1}}},
			)
			b := process.Backend{Agent: shAgent(c.detach + `exec sleep 300`), Env: hostile(t)}
			res, err := runWithin(t, 20*time.Second, sc, b)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) > 0 {
				t.Errorf("errors %q", res.Errors)
			}
			assertNoZombies(t)
		})
	}
}

// TestDetachedChildOfTheProbe: the agent the capability probe starts is
// ended with its detached child. Before, the child was left running. The
// probe refuses the run: its clock fault needs the clock capability, which
// the sh agent does not declare (runner mode no longer serves: an
// elector-only agent now runs a runner scenario's elector part).
func TestDetachedChildOfTheProbe(t *testing.T) {
	sc := short(model.Fault{At: 600 * time.Millisecond, For: 300 * time.Millisecond, Kind: model.FaultClock, Rate: 0.5,
		Target: model.Target{Indexes: []int{1}}})
	b := process.Backend{Agent: shAgent(detachHolding + `exec sleep 300`), Env: hostile(t)}
	_, err := runWithin(t, 20*time.Second, sc, b)
	if !sim.IsRefusal(err) {
		t.Fatalf("error %v: want the refusal (the sh agent declares no clock)", err)
	}
	assertNoZombies(t)
}

// cancelWithin runs sc, cancels it at the first event of kind cancel (or,
// if cancel is empty, after 300 ms) and fails if the run has not returned
// within 2 s of the cancel.
func cancelWithin(t *testing.T, sc model.Scenario, b process.Backend, cancel model.Kind) error {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	cancelled := make(chan time.Time, 1)
	once := sync.OnceFunc(func() {
		cancelled <- time.Now()
		stop()
	})
	if cancel == "" {
		timer := time.AfterFunc(300*time.Millisecond, once)
		defer timer.Stop()
	}
	_, err := runWithinCtx(ctx, t, 30*time.Second, sc, b, sim.Options{Observe: func(e model.Event) {
		if e.Kind == cancel {
			once()
		}
	}})
	select {
	case at := <-cancelled:
		if took := time.Since(at); took > 2*time.Second {
			t.Errorf("the run returned %v after the cancel, want within 2s", took)
		}
	default:
		t.Fatalf("never cancelled; the run returned %v", err)
	}
	return err
}

// TestCancelEndsHostileRunsAtOnce: Ctrl-C (ctx cancelled) ends the run
// within 2 s, nothing left: while an agent that ignores SIGTERM is being
// stopped (before, the run waited TTL + 5 s for it to exit), also by a stop
// with restart (before, the cancel's heal waited for it and then launched
// a new agent); while a mute
// agent's hello is awaited, in the run and in the capability probe
// (before, the probe waited the hello timeout, 15 s); with a detached
// child holding the agents' stdout.
func TestCancelEndsHostileRunsAtOnce(t *testing.T) {
	stop := short(model.Fault{At: 500 * time.Millisecond, Kind: model.FaultStop, Target: model.Target{Indexes: []int{0}}})
	stopRestart := short(model.Fault{At: 500 * time.Millisecond, For: 2 * time.Second, Kind: model.FaultStop, Restart: true, Target: model.Target{Indexes: []int{0}}})
	runner := short()
	runner.Mode = model.ModeRunner
	for _, c := range []struct {
		name   string
		sc     model.Scenario
		agent  []string
		cancel model.Kind
	}{
		{"stopping one that ignores SIGTERM", stop, shAgent(`trap "" TERM; while :; do sleep 1; done`), model.FaultApplied},
		// A second incarnation leaves a file behind, which hostile's
		// cleanup reports: nothing is restarted after the cancel.
		{"stopping one that ignores SIGTERM, to restart it", stopRestart, []string{"sh", "-c", `[ "$LEASELAB_INCARNATION" = 1 ] || : > "$TMPDIR/restarted"; ` + shHello + `; trap "" TERM; while :; do sleep 1; done`}, model.FaultApplied},
		{"mute", short(), []string{"sh", "-c", `if [ "$LEASELAB_INSTANCE" = 1 ]; then exec sleep 300; fi; ` + shHello + `; exec sleep 300`}, model.InstanceStarted},
		{"mute in the probe", runner, []string{"sleep", "300"}, ""},
		{"detached child", stop, shAgent(detachHolding + `trap "" TERM; while :; do sleep 1; done`), model.FaultApplied},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := process.Backend{Agent: c.agent, Env: hostile(t)}
			if err := cancelWithin(t, c.sc, b, c.cancel); err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
				t.Errorf("error %v: want ctx's", err)
			}
			assertNoZombies(t)
		})
	}
}

// TestFloodingAgentsAreEnded: agents writing valid lines as fast as they
// can (yes) are each ended at the cap, the run's errors naming each and its
// rate, with no error for the line the harness's own kill cut, and the run
// takes its usual time; an agent flooding its stderr keeps a capped log
// that says what it cut. Before, three such agents grew the harness to
// 1.76 GB and the run from 6.2 s to 22.6 s, and their logs to 900 MB.
func TestFloodingAgentsAreEnded(t *testing.T) {
	logs := t.TempDir()
	flood := `{"type":"error","err":"flood"}`
	b := process.Backend{
		Agent: shAgent(`if [ "$LEASELAB_INSTANCE" = 0 ]; then head -c 30000000 /dev/zero | tr '\0' x >&2; exec sleep 300; fi; exec yes '` + flood + `'`),
		Env:   hostile(t), LogDir: logs, MaxLogBytes: 1 << 20,
	}
	res, err := runWithin(t, 20*time.Second, short(), b)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []string{"1", "2"} {
		// At the cap; or, on a machine too busy to read 5,000 lines a
		// second, as soon as its output backs up for a second.
		if len(errorsNaming(res, "instance "+i, "lines", "ended by the harness (docs/agents.md, Output caps)")) != 1 {
			t.Errorf("errors %q: want instance %s ended at the cap, naming its rate", res.Errors, i)
		}
	}
	if len(res.Errors) != 2 {
		t.Errorf("errors %q: want the two caps only (no error for a line the kill cut)", res.Errors)
	}
	lines, killed := 0, 0
	for _, e := range res.Timeline {
		if e.Kind == model.ElectorError {
			lines++
		}
		if e.Kind == model.InstanceCrashed && strings.HasPrefix(e.Detail, "killed by the harness: wrote") {
			killed++
		}
	}
	if lines > 2*(process.DefaultMaxLinesPerSecond+1) || killed != 2 {
		t.Errorf("%d lines recorded, %d crashes by the harness's kill: want at most the cap's from each of 2, both killed", lines, killed)
	}
	files, _ := filepath.Glob(filepath.Join(logs, "*", "instance-0.1.log"))
	if len(files) != 1 {
		t.Fatalf("instance 0's log: %v", files)
	}
	log, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(log) > 1<<20+200 || !bytes.Contains(log, []byte("bytes of this log cut here; it keeps the first 524288 and the last 524288 bytes")) {
		t.Errorf("instance 0's log: %d bytes, want ≤ 1 MiB and the cut said (%q…)", len(log), log[:min(len(log), 100)])
	}
}

// TestOrderRefused: a demotion before any promotion is a protocol error
// naming the line, and the kill it brings is recorded as the harness's, not
// as the agent exiting by itself; the completion of a task no agent
// dispatched is one too, while a task one instance dispatched and another
// completed, in either order of reading, is not. Before, both were
// accepted silently (the undispatched completion counted as a task done
// twice), and a malformed line's kill was recorded "exited by itself".
func TestOrderRefused(t *testing.T) {
	line := func(s string) string { return `echo '` + s + `'; ` }
	b := process.Backend{Agent: shAgent(`case $LEASELAB_INSTANCE in
0) ` + line(`{"type":"demoted","reason":"lost"}`) + `;;
1) sleep 0.3; ` + line(`{"type":"task-dispatched","task":"t-2"}`) + line(`{"type":"task-completed","task":"t-1"}`) + `;;
2) ` + line(`{"type":"task-completed","task":"t-2"}`) + `;;
esac; exec sleep 300`), Env: hostile(t)}
	res, err := runWithin(t, 20*time.Second, short(), b)
	if err != nil {
		t.Fatal(err)
	}
	if len(errorsNaming(res, "instance 0", "stdout line 2: demoted before promoted")) != 1 {
		t.Errorf("errors %q: want instance 0's line 2", res.Errors)
	}
	if len(errorsNaming(res, "instance 1", `stdout line 3: task-completed of task "t-1", which no agent dispatched`)) != 1 {
		t.Errorf("errors %q: want instance 1's line 3", res.Errors)
	}
	if len(res.Errors) != 2 {
		t.Errorf("errors %q: want those two only", res.Errors)
	}
	for _, e := range res.Timeline {
		if e.Kind == model.InstanceCrashed && e.Instance == 0 && !strings.HasPrefix(e.Detail, "killed by the harness: a line the protocol refuses") {
			t.Errorf("instance 0's end: %q, want the harness's kill", e.Detail)
		}
	}
}

// TestDispatchesOfAKilledAgentStand: an agent the harness kills for a
// line the protocol refuses had already dispatched a task (its next line):
// the task is in Redis, and another agent that completes it did nothing
// wrong. The harness reads what the killed agent wrote before its end
// (outputGrace at most) for its dispatches. Before, it stopped reading at
// the refused line, and the other agent's completion was a protocol error
// naming it. The agent writes both lines in one write, so both are in the
// pipe before the kill: as two echoes, a loaded machine could kill the
// shell between them (CI did).
func TestDispatchesOfAKilledAgentStand(t *testing.T) {
	line := func(s string) string { return `echo '` + s + `'; ` }
	b := process.Backend{Agent: shAgent(`case $LEASELAB_INSTANCE in
0) ` + line(`{"type":"demoted","reason":"lost"}
{"type":"task-dispatched","task":"t-1"}`) + `;;
1) sleep 0.3; ` + line(`{"type":"task-completed","task":"t-1"}`) + `;;
esac; exec sleep 300`), Env: hostile(t)}
	res, err := runWithin(t, 20*time.Second, short(), b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || len(errorsNaming(res, "instance 0", "stdout line 2: demoted before promoted")) != 1 {
		t.Errorf("errors %q: want instance 0's line 2, only", res.Errors)
	}
}

// TestOutpacingAgentIsEnded: an agent that writes faster than the harness
// reads is ended once its output has backed up for a second, even under
// the caps (here lifted): the rate the harness reads at is its own, and
// the agent's lines would be stamped later and later.
func TestOutpacingAgentIsEnded(t *testing.T) {
	b := process.Backend{
		Agent: shAgent(`if [ "$LEASELAB_INSTANCE" = 0 ]; then exec yes '{"type":"error","err":"flood"}'; fi; exec sleep 300`),
		Env:   hostile(t), MaxLinesPerSecond: 1 << 30, MaxBytesPerSecond: 1 << 40,
	}
	res, err := runWithin(t, 20*time.Second, short(), b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 1 || len(errorsNaming(res, "instance 0", "wrote faster than the harness reads for 1.", "found more waiting", "ended by the harness")) != 1 {
		t.Errorf("errors %q: want instance 0's, only", res.Errors)
	}
}
