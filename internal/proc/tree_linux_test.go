//go:build linux

package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// zombies lists this process's zombie children.
func zombies() []int {
	var pids []int
	for pid, p := range scan() {
		if p.state == 'Z' && p.ppid == os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestTreeKillsWhatLeft: in both modes, Kill ends a process's children
// that left its group and session (setsid) and ignore SIGTERM, one holding
// its stdout, one orphaned (its parent exited) and one with its environment
// cleared; the root's exit status stays its exec.Cmd's (killed), and so does
// an unrelated child's beside it (exit status 3): the subreaper steals none.
func TestTreeKillsWhatLeft(t *testing.T) {
	for _, mode := range []string{"cgroup", "subreaper"} {
		t.Run(mode, func(t *testing.T) {
			cgroupOnce.Do(findCgroup)
			if mode == "cgroup" && cgroupBase == "" {
				t.Skip("no writable cgroup v2 here")
			}
			cgroupsOff.Store(mode == "subreaper")
			defer cgroupsOff.Store(false)
			mark := "LEASELAB_TEST_MARK=" + t.Name() + strconv.Itoa(os.Getpid())
			script := `setsid sh -c 'trap "" TERM; exec sleep 300' &
(setsid sh -c 'trap "" TERM; exec sleep 300' </dev/null >/dev/null 2>&1 &) 
setsid env -i sh -c 'trap "" TERM; exec sleep 301' </dev/null >/dev/null 2>&1 &
echo ready; exec sleep 300`
			other := exec.Command("sh", "-c", "read x; exit 3")
			otherIn, _ := other.StdinPipe()
			if err := other.Start(); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", script)
			cmd.Env = append(os.Environ(), mark)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			tr := NewTree()
			if err := tr.Start(cmd); err != nil {
				t.Fatal(err)
			}
			if tr.Mode() != mode {
				t.Fatalf("mode %s, want %s", tr.Mode(), mode)
			}
			line := make([]byte, 6)
			if _, err := out.Read(line); err != nil || string(line) != "ready\n" {
				t.Fatalf("read %q, %v", line, err)
			}
			// Three sleep 300 (the root exec'd, two children) with the
			// mark, one sleep 301 without (env -i), the root's child.
			victims := map[int]uint64{}
			for deadline := time.Now().Add(5 * time.Second); len(victims) < 4; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("%d sleeps, want 4 (the root exec'd, three children)", len(victims))
				}
				clear(victims)
				for pid, p := range scan() {
					cl, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
					if c := string(cl); p.state != 'Z' && (c == "sleep\x00300\x00" && hasEnv(pid, []byte(mark+"\x00")) || c == "sleep\x00301\x00" && p.ppid == cmd.Process.Pid) {
						victims[pid] = p.start
					}
				}
			}
			if err := tr.Kill(); err != nil {
				t.Fatal(err)
			}
			var ee *exec.ExitError
			if err := cmd.Wait(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Errorf("the root's Wait: %v, want killed", err)
			}
			tr.Close()
			_ = otherIn.Close()
			if err := other.Wait(); err == nil || err.Error() != "exit status 3" {
				t.Errorf("the unrelated child's Wait: %v, want exit status 3", err)
			}
			ps := scan()
			for pid, start := range victims {
				if p, ok := ps[pid]; ok && p.start == start && p.state != 'Z' {
					t.Errorf("left running: %d", pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			if z := zombies(); len(z) > 0 {
				for _, pid := range z {
					c, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
					t.Errorf("never reaped: %s", c)
				}
			}
			if mode == "cgroup" {
				if _, err := os.Stat(tr.cgroup); !os.IsNotExist(err) {
					t.Errorf("cgroup %s left: %v", tr.cgroup, err)
				}
			}
		})
	}
}

// TestNoCgroupLeft: the probe's cgroup is gone, and so is each tree's.
func TestNoCgroupLeft(t *testing.T) {
	cgroupOnce.Do(findCgroup)
	if cgroupBase == "" {
		t.Skip("no writable cgroup v2 here")
	}
	left, _ := filepath.Glob(filepath.Join(cgroupBase, "leaselab-"+strconv.Itoa(os.Getpid())+".*"))
	if len(left) > 0 {
		t.Errorf("left: %v", left)
	}
}

// TestStaleCgroupsRemoved: a tree's cgroup that a harness killed with
// SIGKILL left, with a detached child still in it, is emptied and removed
// by the next harness; another live harness's is not touched.
func TestStaleCgroupsRemoved(t *testing.T) {
	cgroupOnce.Do(findCgroup)
	if cgroupBase == "" {
		t.Skip("no writable cgroup v2 here")
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(cgroupBase, "leaselab-"+strconv.Itoa(gone.Process.Pid)+".1")
	live := filepath.Join(cgroupBase, "leaselab-1.1") // pid 1 is alive
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { _ = os.Remove(live) }()
	fd, err := syscall.Open(stale, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	left := exec.Command("sleep", "300")
	left.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	err = left.Start()
	_ = syscall.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	removeStale(cgroupBase)
	if err := left.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the child left in the stale cgroup: %v, want killed", err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale cgroup: %v, want removed", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live harness's cgroup: %v, want kept", err)
	}
}

// TestTreeKillsWhatLeavesItsCgroup: in cgroup mode a process of the tree
// runs as the harness's user, who may write the parent cgroup's
// cgroup.procs. A detached grandchild that moves itself there and whose
// parent exits is neither in the cgroup, nor in the root's group, nor a
// descendant of a member; Kill still ends it: in a cgroup namespace of the
// tree's own the move is refused (it stays inside), and without one the
// tree's tag in its environment finds it. Before, it ran on past Kill.
func TestTreeKillsWhatLeavesItsCgroup(t *testing.T) {
	cgroupOnce.Do(findCgroup)
	if cgroupBase == "" {
		t.Skip("no writable cgroup v2 here")
	}
	for _, c := range []struct {
		name   string
		ns     bool
		escape bool // the move out succeeds
	}{{"namespace", true, false}, {"tag", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			if c.ns && !cgroupNS {
				t.Skip("no cgroup namespace that confines moves here (the cgroup2 mount lacks nsdelegate, or the kernel refuses one)")
			}
			cgroupNSOff.Store(!c.ns)
			defer cgroupNSOff.Store(false)
			mark := "LEASELAB_TEST_MARK=" + t.Name() + strconv.Itoa(os.Getpid())
			script := `(setsid sh -c 'echo $$ > ` + cgroupBase + `/cgroup.procs; exec sleep 302' </dev/null >/dev/null 2>&1 &)
exec sleep 300`
			cmd := exec.Command("sh", "-c", script)
			cmd.Env = append(os.Environ(), mark)
			tr := NewTree()
			if err := tr.Start(cmd); err != nil {
				t.Fatal(err)
			}
			if tr.Mode() != "cgroup" {
				t.Fatalf("mode %s", tr.Mode())
			}
			// The grandchild, once it has tried the move (exec'd sleep).
			pid := 0
			for deadline := time.Now().Add(5 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("no sleep 302")
				}
				for p, st := range scan() {
					cl, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
					if st.state != 'Z' && string(cl) == "sleep\x00302\x00" && hasEnv(p, []byte(mark+"\x00")) {
						pid = p
					}
				}
			}
			if inside := slices.Contains(cgroupProcs(tr.cgroup), pid); inside == c.escape {
				t.Errorf("sleep 302 in the tree's cgroup: %v, want %v", inside, !c.escape)
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			if err := tr.Kill(); err != nil {
				t.Fatal(err)
			}
			tr.Close()
			if p, ok := scan()[pid]; ok && p.state != 'Z' {
				t.Errorf("pid %d (sleep 302, the tree's tag in its environment) outlived Kill", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
	}
}
