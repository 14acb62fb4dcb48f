// Package agentpython tests the Python agent (agent.py) against the
// protocol; it holds no Go code of its own.
package agentpython

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/agenttest"
	"github.com/leaselab/leaselab/internal/proc"
	"github.com/leaselab/leaselab/internal/redistest"
)

// Python is the interpreter with redis-py: Debian's python3-redis installs
// it for the system python3.
func Python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import redis").Run() == nil {
			return path
		}
	}
	t.Fatal("no python3 with redis-py (Debian: apt-get install python3-redis)")
	return ""
}

func TestConforms(t *testing.T) {
	agenttest.Conform(t, []string{Python(t), "agent.py"})
}

// monitor streams the commands Redis at addr runs (MONITOR), each with the
// time this process read it.
func monitor(t *testing.T, addr string) <-chan timedLine {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	lines := make(chan timedLine, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(conn)
		for sc.Scan() {
			lines <- timedLine{time.Now(), sc.Text()}
		}
	}()
	return lines
}

type timedLine struct {
	at   time.Time
	text string
}

// TestRenewsHalfTTLAfterTheReply: the next renewal comes TTL/2 after the
// last one's reply, not after its send, as the spec's timer is armed when
// the result comes back: a renewal held up by a frozen Redis delays the
// next by as long. Before, agent.py read the clock before the call
// (`time.monotonic() + self.step()`), so a renewal slower than TTL/2 was
// followed by the next at once, and under slow-redis's latency its key
// never lapsed (the built-in's stale-leadership finding failed).
func TestRenewsHalfTTLAfterTheReply(t *testing.T) {
	const ttl, hold = 2 * time.Second, 1100 * time.Millisecond
	srv := redistest.Start(t)
	cmds := monitor(t, srv.Addr)
	group := "agent-python-renew"
	cmd := exec.Command(Python(t), "agent.py")
	cmd.SysProcAttr = proc.Attr()
	cmd.Env = append(os.Environ(),
		"LEASELAB_PROTOCOL=1", "LEASELAB_INSTANCE=0", "LEASELAB_INCARNATION=1",
		"LEASELAB_REDIS_ADDR="+srv.Addr, "LEASELAB_GROUP="+group, "LEASELAB_KEY="+election.LeaderKey(group),
		fmt.Sprintf("LEASELAB_TTL_MS=%d", ttl.Milliseconds()), "LEASELAB_WAIT_MS=200", "LEASELAB_JITTER_MS=0",
		"LEASELAB_READ_TIMEOUT_MS=5000", "LEASELAB_MODE=elector")
	logFile, err := os.Create(filepath.Join(t.TempDir(), "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd.Stderr = logFile
	agentLog := func() string { b, _ := os.ReadFile(logFile.Name()); return string(b) }
	stdin, err := cmd.StdinPipe() // its end would make the agent exit
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		proc.KillGroup(cmd.Process)
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	// nextRenewal waits for the agent's next renewal script to run.
	nextRenewal := func(what string) time.Time {
		t.Helper()
		deadline := time.After(2 * ttl)
		for {
			select {
			case l, ok := <-cmds:
				if !ok {
					t.Fatalf("MONITOR ended waiting for %s", what)
				}
				if c := strings.ToLower(l.text); strings.Contains(c, `"evalsha"`) || strings.Contains(c, `"eval"`) {
					return l.at
				}
			case <-deadline:
				t.Fatalf("no %s within %v; agent log:\n%s", what, 2*ttl, agentLog())
			}
		}
	}
	// The first renewal finds the script cache cold (EVALSHA, NOSCRIPT,
	// SCRIPT LOAD, EVALSHA): start from the second, one EVALSHA.
	first := nextRenewal("the first renewal")
	last := nextRenewal("the second renewal")
	for last.Sub(first) < ttl/4 {
		last = nextRenewal("the second renewal")
	}
	// Freeze Redis from TTL/4 after a renewal until past the next one's
	// send (due TTL/2 after it), and well before the key's expiry (TTL
	// after it): that renewal is answered at the resume, hold − TTL/4 =
	// 600 ms after its send.
	time.Sleep(time.Until(last.Add(ttl / 4)))
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(hold)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	held := nextRenewal("the renewal held up by the pause")
	next := nextRenewal("the renewal after it")
	t.Logf("held-up renewal run %v after the resume, the next %v after that", held.Sub(resumed), next.Sub(held))
	// TTL/2 after the reply; timed from the send it came 600 ms sooner.
	if d := next.Sub(held); d < ttl/2-150*time.Millisecond {
		t.Errorf("the next renewal came %v after the held-up one was answered, want TTL/2 = %v: the delay is counted from the call's send, not its reply", d, ttl/2)
	}
}
