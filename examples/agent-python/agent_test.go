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

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/agenttest"
	"github.com/leaselab/leaselab/internal/proc"
	"github.com/leaselab/leaselab/internal/redisserver"
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

// leaseAgent is agent.py running alone against a real Redis, its renewals
// watched with MONITOR and its protocol lines read as the harness reads
// them.
type leaseAgent struct {
	t      *testing.T
	srv    *redisserver.Server
	ttl    time.Duration
	cmds   <-chan timedLine
	events chan timedEvent
	log    string // its stderr's file
}

type timedEvent struct {
	at time.Time
	e  agent.Event
}

// startAgent starts agent.py with lease TTL ttl, read timeout rt and the
// scenario JSON scenario (LEASELAB_SCENARIO; "" for none).
func startAgent(t *testing.T, ttl, rt time.Duration, scenario string) *leaseAgent {
	t.Helper()
	srv := redistest.Start(t)
	a := &leaseAgent{t: t, srv: srv, ttl: ttl, cmds: monitor(t, srv.Addr), events: make(chan timedEvent, 64),
		log: filepath.Join(t.TempDir(), "agent.log")}
	group := "agent-python-" + t.Name()
	cmd := exec.Command(Python(t), "agent.py")
	cmd.SysProcAttr = proc.Attr()
	cmd.Env = append(os.Environ(),
		"LEASELAB_PROTOCOL=1", "LEASELAB_INSTANCE=0", "LEASELAB_INCARNATION=1",
		"LEASELAB_REDIS_ADDR="+srv.Addr, "LEASELAB_GROUP="+group, "LEASELAB_KEY="+election.LeaderKey(group),
		fmt.Sprintf("LEASELAB_TTL_MS=%d", ttl.Milliseconds()), "LEASELAB_WAIT_MS=200", "LEASELAB_JITTER_MS=0",
		fmt.Sprintf("LEASELAB_READ_TIMEOUT_MS=%d", rt.Milliseconds()), "LEASELAB_MODE=elector",
		"LEASELAB_SCENARIO="+scenario)
	logFile, err := os.Create(a.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logFile.Close() })
	cmd.Stderr = logFile
	stdin, err := cmd.StdinPipe() // its end would make the agent exit
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
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
	dec := agent.NewDecoder("agent.py", stdout)
	if _, err := dec.Hello(); err != nil {
		t.Fatalf("hello: %v", err)
	}
	go func() {
		defer close(a.events)
		for {
			e, err := dec.Next()
			if err != nil {
				return
			}
			a.events <- timedEvent{time.Now(), e}
		}
	}()
	return a
}

func (a *leaseAgent) agentLog() string { b, _ := os.ReadFile(a.log); return string(b) }

// nextRenewal waits for the agent's next renewal script to run.
func (a *leaseAgent) nextRenewal(what string) time.Time {
	a.t.Helper()
	deadline := time.After(2 * a.ttl)
	for {
		select {
		case l, ok := <-a.cmds:
			if !ok {
				a.t.Fatalf("MONITOR ended waiting for %s", what)
			}
			if c := strings.ToLower(l.text); strings.Contains(c, `"evalsha"`) || strings.Contains(c, `"eval"`) {
				return l.at
			}
		case <-deadline:
			a.t.Fatalf("no %s within %v; agent log:\n%s", what, 2*a.ttl, a.agentLog())
		}
	}
}

// warmRenewal waits for the second renewal and returns when it ran: the
// first finds the script cache cold (EVALSHA, NOSCRIPT, SCRIPT LOAD,
// EVALSHA), the second is one EVALSHA.
func (a *leaseAgent) warmRenewal() time.Time {
	a.t.Helper()
	first := a.nextRenewal("the first renewal")
	last := a.nextRenewal("the second renewal")
	for last.Sub(first) < a.ttl/4 {
		last = a.nextRenewal("the second renewal")
	}
	return last
}

// next waits for the agent's next event of type typ.
func (a *leaseAgent) next(typ agent.EventType) timedEvent {
	a.t.Helper()
	deadline := time.After(2 * a.ttl)
	for {
		select {
		case e, ok := <-a.events:
			if !ok {
				a.t.Fatalf("the agent's stdout ended waiting for %s; its log:\n%s", typ, a.agentLog())
			}
			if e.e.Type == typ {
				return e
			}
		case <-deadline:
			a.t.Fatalf("no %s within %v; agent log:\n%s", typ, 2*a.ttl, a.agentLog())
		}
	}
}

// freeze SIGSTOPs Redis at the time at for hold: connections stay open and
// are accepted, nothing is answered.
func (a *leaseAgent) freeze(at time.Time, hold time.Duration) (resumed time.Time) {
	a.t.Helper()
	time.Sleep(time.Until(at))
	if err := a.srv.Pause(); err != nil {
		a.t.Fatal(err)
	}
	time.Sleep(hold)
	if err := a.srv.Resume(); err != nil {
		a.t.Fatal(err)
	}
	return time.Now()
}

// TestRenewsHalfTTLAfterTheReply: the next renewal comes TTL/2 after the
// last one's reply, not after its send, as the spec's timer is armed when
// the result comes back: a renewal held up by a frozen Redis delays the
// next by as long. Before, agent.py read the clock before the call
// (`time.monotonic() + self.step()`), so a renewal slower than TTL/2 was
// followed by the next at once, and under slow-redis's latency its key
// never lapsed (the built-in's stale-leadership finding failed).
func TestRenewsHalfTTLAfterTheReply(t *testing.T) {
	const ttl = 2 * time.Second
	a := startAgent(t, ttl, 5*time.Second, "")
	last := a.warmRenewal()
	// Freeze Redis from TTL/4 after a renewal until past the next one's
	// send (due TTL/2 after it), and well before the key's expiry (TTL
	// after it): that renewal is answered at the resume, 600 ms after its
	// send.
	resumed := a.freeze(last.Add(ttl/4), 1100*time.Millisecond)
	held := a.nextRenewal("the renewal held up by the pause")
	next := a.nextRenewal("the renewal after it")
	t.Logf("held-up renewal run %v after the resume, the next %v after that", held.Sub(resumed), next.Sub(held))
	// TTL/2 after the reply; timed from the send it came 600 ms sooner.
	if d := next.Sub(held); d < ttl/2-150*time.Millisecond {
		t.Errorf("the next renewal came %v after the held-up one was answered, want TTL/2 = %v: the delay is counted from the call's send, not its reply", d, ttl/2)
	}
}

// TestTimedOutCallRetriedOnce: a renewal that gets no reply fails after
// two read timeouts (and a backoff), as go-redis's does with the
// scenario's client (max_retries 3, its default): the call the harness's
// predictions assume. With max_retries -1 (none) it fails after one.
// Before, agent.py never retried, and its leader gave up after one read
// timeout: partition-one-way's gap (bound TTL + Wait − 2 × ReadTimeout)
// and partition-blackhole's overlap were not go-redis's.
func TestTimedOutCallRetriedOnce(t *testing.T) {
	const ttl, rt = 2 * time.Second, 400 * time.Millisecond
	for _, c := range []struct {
		retries  int
		attempts int
	}{{3, 2}, {-1, 1}} {
		t.Run(fmt.Sprintf("max_retries=%d", c.retries), func(t *testing.T) {
			a := startAgent(t, ttl, rt, fmt.Sprintf(`{"params":{"client":{"max_retries":%d}}}`, c.retries))
			a.next(agent.Promoted)
			last := a.warmRenewal()
			// Frozen over the next renewal's send (TTL/2 after the
			// last) and past every attempt's read timeout.
			frozen := make(chan struct{})
			go func() {
				defer close(frozen)
				time.Sleep(time.Until(last.Add(ttl / 4)))
				if err := a.srv.Pause(); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(ttl/4 + 3*rt)
				if err := a.srv.Resume(); err != nil {
					t.Error(err)
				}
			}()
			defer func() { <-frozen }()
			demoted := a.next(agent.Demoted)
			// The renewal was sent TTL/2 after the last; the demotion
			// follows its attempts' timeouts.
			took := demoted.at.Sub(last) - ttl/2
			t.Logf("demoted %v after the renewal's send (%d × read timeout %v)", took, c.attempts, rt)
			want := time.Duration(c.attempts) * rt
			if took < want-50*time.Millisecond || took > want+rt/2 {
				t.Errorf("the renewal failed %v after its send, want %d × the read timeout %v = %v: %d attempts", took, c.attempts, rt, want, c.attempts)
			}
		})
	}
}
