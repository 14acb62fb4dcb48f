package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leaselab/leaselab/internal/agenttest"
	"github.com/leaselab/leaselab/model"
)

// TestAgentConforms: chaos agent, as the elector and as the runner, in
// spec and safe mode, keeps the agent protocol's life cycle.
func TestAgentConforms(t *testing.T) {
	bin := buildChaos(t)
	for _, c := range []struct {
		name string
		sc   model.Scenario
	}{
		{"elector", model.Scenario{Params: model.Params{TTL: 1e9, Wait: 2e8}}},
		{"elector-safe", model.Scenario{Params: model.Params{TTL: 1e9, Wait: 2e8, Safe: true}}},
		{"runner", model.Scenario{Mode: model.ModeRunner, Params: model.Params{TTL: 1e9, Wait: 2e8}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := c.sc.WithDefaults().Scaled()
			b, err := json.Marshal(sc)
			if err != nil {
				t.Fatal(err)
			}
			agenttest.Conform(t, []string{bin, "agent"}, "LEASELAB_SCENARIO="+string(b))
		})
	}
}

// TestProcessBackendLeavesNoAgents: agents die with the CLI, whether it is
// interrupted (SIGINT: it kills them and exits 130) or killed itself
// (SIGKILL: the kernel's parent-death signal kills them; Linux).
func TestProcessBackendLeavesNoAgents(t *testing.T) {
	bin := buildChaos(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			if sig == syscall.SIGKILL && runtime.GOOS != "linux" {
				t.Skip("only Linux has a parent-death signal: elsewhere an agent outlives a SIGKILLed harness until its stdin ends")
			}
			cmd := exec.Command(bin, "run", "testdata/long.yaml", "--backend", "process", "--out", t.TempDir())
			var stdout syncBuffer
			cmd.Stdout, cmd.Stderr = &stdout, &stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(stdout.String(), "fault-applied") {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("the run did not start:\n%s", stdout.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			agents := agentChildren(t, cmd.Process.Pid)
			if len(agents) != 3 {
				_ = cmd.Process.Kill()
				t.Fatalf("%d agent processes found while running, want 3", len(agents))
			}
			_ = cmd.Process.Signal(sig)
			_ = cmd.Wait()
			deadline = time.Now().Add(10 * time.Second)
			for _, pid := range agents {
				for alive(pid) {
					if time.Now().After(deadline) {
						t.Fatalf("agent %d still running 10 s after the CLI got %v", pid, sig)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}

// agentChildren lists the pids of pid's children that run `chaos agent`.
func agentChildren(t *testing.T, pid int) []int {
	t.Helper()
	out, _ := exec.Command("pgrep", "-a", "-P", strconv.Itoa(pid)).Output()
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[len(f)-1] == "agent" {
			if p, err := strconv.Atoi(f[0]); err == nil {
				pids = append(pids, p)
			}
		}
	}
	return pids
}

// alive reports whether pid runs (a zombie waiting for its new parent to
// reap it does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}
