// Package agenttest checks that a program is a well-behaved leaselab agent:
// started as the process backend starts it, against a real Redis, it says a
// valid hello for the lease it was given, takes the free lease, and on
// SIGTERM steps down, releases, says stopped and exits 0.
package agenttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/proc"
	"github.com/leaselab/leaselab/internal/redistest"
)

// Conform runs command (argv) as a lone agent and checks the protocol's
// life cycle, failing t with what went wrong and the agent's log.
func Conform(t *testing.T, command []string, env ...string) {
	t.Helper()
	rdb := redistest.Client(t)
	group := "agenttest-" + strings.ReplaceAll(t.Name(), "/", "-")
	key := election.LeaderKey(group)
	cmd := exec.Command(command[0], command[1:]...)
	cmd.SysProcAttr = proc.Attr()
	cmd.Env = append(os.Environ(),
		"LEASELAB_PROTOCOL=1", "LEASELAB_INSTANCE=0",
		"LEASELAB_REDIS_ADDR="+rdb.Options().Addr,
		"LEASELAB_GROUP="+group, "LEASELAB_KEY="+key,
		"LEASELAB_TTL_MS=1000", "LEASELAB_WAIT_MS=200", "LEASELAB_JITTER_MS=5",
		"LEASELAB_MODE=elector")
	cmd.Env = append(cmd.Env, env...)
	var log strings.Builder
	cmd.Stderr = &log
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", command, err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		proc.KillGroup(cmd.Process)
		_ = stdin.Close()
	})
	fail := func(format string, args ...any) {
		t.Helper()
		proc.KillGroup(cmd.Process)
		t.Fatalf("%s\nagent log:\n%s", fmt.Sprintf(format, args...), log.String())
	}

	// The protocol's lines, read as the harness reads them.
	dec := agent.NewDecoder(fmt.Sprintf("%q", strings.Join(command, " ")), stdout)
	type line struct {
		e   agent.Event
		err error
	}
	lines := make(chan line, 16)
	hello, err := dec.Hello()
	if err != nil {
		fail("hello: %v", err)
	}
	go func() {
		for {
			e, err := dec.Next()
			lines <- line{e, err}
			if err != nil {
				close(lines)
				exited <- cmd.Wait()
				return
			}
		}
	}()
	if hello.Key != key {
		fail("hello names key %q; the agent was given %q", hello.Key, key)
	}
	// next returns the next line about leadership or the agent's life:
	// a runner's chore and task events may come between.
	next := func(what string) agent.Event {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok || l.err != nil {
					fail("waiting for %s: %v", what, l.err)
				}
				switch l.e.Type {
				case agent.Promoted, agent.Demoted, agent.Stopped:
					return l.e
				}
			case <-deadline:
				fail("no %s within 10 s", what)
			}
		}
	}
	if e := next("the promotion"); e.Type != agent.Promoted || e.T == 0 {
		fail("first event %+v, want promoted with its wall time t", e)
	}
	ctx := context.Background()
	if v, err := rdb.Get(ctx, key).Result(); err != nil || v != hello.ID {
		fail("lease holds %q (%v), want the hello's id %q", v, err, hello.ID)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if e := next("the demotion"); e.Type != agent.Demoted || e.Reason != agent.ReasonStop {
		fail("after SIGTERM: %+v, want demoted with reason stop", e)
	}
	if e := next("stopped"); e.Type != agent.Stopped {
		fail("after the demotion: %+v, want stopped", e)
	}
	select {
	case err := <-exited:
		if err != nil {
			fail("exit: %v, want 0", err)
		}
	case <-time.After(10 * time.Second):
		fail("still running 10 s after saying stopped")
	}
	if n, err := rdb.Exists(ctx, key).Result(); err != nil || n != 0 {
		fail("the lease is still held after the stop (exists %d, %v)", n, err)
	}
}
