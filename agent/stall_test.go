package agent

import (
	"bufio"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// stallChild is the agent process TestProbeReportsAStoppedProcess stops:
// a hello, then nothing but the probe until its stdin ends.
func TestStallChild(t *testing.T) {
	if os.Getenv("LEASELAB_STALL_CHILD") != "1" {
		t.Skip("the child of TestProbeReportsAStoppedProcess")
	}
	a := New(Options{})
	if err := a.Hello("child", "k"); err != nil {
		t.Fatal(err)
	}
	<-a.Gone()
}

// An agent's probe reports how long its process was kept from running:
// stopped with SIGSTOP for 400 ms, it says so in a stall event of at
// least 350 ms once continued. Without NoStallProbe it needs no code of
// the service's.
func TestProbeReportsAStoppedProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestStallChild$")
	cmd.Env = append(os.Environ(), "LEASELAB_STALL_CHILD=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatalf("no hello: %v", lines.Err())
	}
	if _, err := ParseHello(lines.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond) // the stop being measured, not a wait for an event
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline := time.AfterFunc(10*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	for lines.Scan() {
		e, err := ParseEvent(lines.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", lines.Bytes(), err)
		}
		if e.Type == Stall && time.Duration(e.LatenessNS) >= 350*time.Millisecond {
			if e.T == 0 {
				t.Errorf("stall %+v has no T", e)
			}
			return
		}
	}
	t.Fatal("no stall of 350ms or more after a 400ms SIGSTOP")
}

// A stall event needs a lateness, and one no longer than an hour.
func TestParseStall(t *testing.T) {
	for line, ok := range map[string]bool{
		`{"type":"stall","lateness_ns":3000000}`:       true,
		`{"type":"stall"}`:                             false,
		`{"type":"stall","lateness_ns":-5}`:            false,
		`{"type":"stall","lateness_ns":3600000000001}`: false,
	} {
		if _, err := ParseEvent([]byte(line)); (err == nil) != ok {
			t.Errorf("%s: error %v, want ok %v", line, err, ok)
		}
	}
}
