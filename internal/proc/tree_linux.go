//go:build linux

package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Tree is one started process and every process it starts, also those
// that leave its process group or session (setsid) or outlive it. Linux
// gives two ways to find them all:
//
//   - a cgroup v2 of its own, where one is writable (root, or a delegated
//     subtree): the process is cloned into it, and cgroup.kill ends them
//     all at once. A process inside runs as the harness's user, who may
//     write the parent cgroup's cgroup.procs (that is how the tree's
//     cgroup was made): where the hierarchy is mounted with nsdelegate
//     (systemd's default) and the kernel permits, the root gets a cgroup
//     namespace of its own (CLONE_NEWCGROUP), whose root is the tree's
//     cgroup, and no process inside can move out of it; elsewhere one that
//     moves out is still found by the tag, as below;
//   - elsewhere, the harness becomes a child subreaper (orphaned
//     descendants re-parent to it, not to init) and every process of the
//     tree carries a tag in its environment; Kill finds them in /proc by
//     the tag and by parentage, kills them and reaps the orphans. A
//     descendant that clears its environment is found while its parent
//     lives; one that clears it and is orphaned is not.
//
// A subreaper is process-wide: Kill reaps only orphans it saw alive in the
// tree (by pid and start time), never the process Start started (its
// exec.Cmd's Wait does) nor any other child, so no exit status os/exec
// waits for is taken.
type Tree struct {
	tag    string // LEASELAB_TREE=tag in the environment
	cgroup string // the tree's cgroup directory; "" in tag mode
	root   int    // the started process's pid

	mu   sync.Mutex
	seen map[int]uint64 // members seen alive: pid → start time
}

var (
	trees       atomic.Uint64
	cgroupOnce  sync.Once
	cgroupBase  string // where trees' cgroups are made; "" if none can be
	cgroupNS    bool   // a tree's root may get a cgroup namespace of its own
	reaperOnce  sync.Once
	errNoCgroup = errors.New("no writable cgroup v2")
)

// cgroupsOff forces tag mode (tests of it); cgroupNSOff leaves a tree's
// root in the harness's cgroup namespace (tests of the tag in cgroup mode).
var cgroupsOff, cgroupNSOff atomic.Bool

// NewTree returns a tree for one process, not started.
func NewTree() *Tree {
	return &Tree{tag: fmt.Sprintf("%d.%d", os.Getpid(), trees.Add(1)), seen: map[int]uint64{}}
}

// Mode says how the tree finds its processes: "cgroup" or "subreaper".
func (t *Tree) Mode() string {
	if t.cgroup != "" {
		return "cgroup"
	}
	return "subreaper"
}

// Start starts cmd as the tree's root: in its own process group, killed
// if the harness dies (Pdeathsig), tagged, and in the tree's cgroup where
// there can be one.
func (t *Tree) Start(cmd *exec.Cmd) error {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, TreeVar+"="+t.tag)
	attr := Attr()
	cmd.SysProcAttr = attr
	if dir, fd, err := t.makeCgroup(); err == nil {
		defer func() { _ = syscall.Close(fd) }()
		attr.UseCgroupFD, attr.CgroupFD = true, fd
		if cgroupNS && !cgroupNSOff.Load() {
			attr.Cloneflags |= syscall.CLONE_NEWCGROUP
		}
		t.cgroup = dir
	}
	// Also with a cgroup: orphans re-parent here, not to an init that may
	// never reap them (a container's), and Kill reaps them.
	reaperOnce.Do(func() { _ = setSubreaper() })
	if err := cmd.Start(); err != nil {
		t.Close()
		return err
	}
	t.root = cmd.Process.Pid
	return nil
}

// setSubreaper makes this process the reaper of its orphaned descendants.
func setSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return e
	}
	return nil
}

// makeCgroup makes the tree's cgroup and opens it for clone.
func (t *Tree) makeCgroup() (string, int, error) {
	cgroupOnce.Do(findCgroup)
	if cgroupBase == "" || cgroupsOff.Load() || os.Getenv(NoCgroupVar) != "" {
		return "", -1, errNoCgroup
	}
	dir := filepath.Join(cgroupBase, "leaselab-"+t.tag)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", -1, err
	}
	fd, err := syscall.Open(dir, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return "", -1, err
	}
	return dir, fd, nil
}

// findCgroup sets cgroupBase to this process's own cgroup v2 directory if
// a process can be cloned into a new cgroup under it (tried once with
// true), else "", and cgroupNS if it can also be given a cgroup namespace
// there.
func findCgroup() {
	cgroupBase, cgroupNS = findCgroupBase()
}

func findCgroupBase() (base string, ns bool) {
	mnt, delegate := cgroup2Mount()
	if mnt == "" {
		return "", false
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false
	}
	var path string
	for _, l := range strings.Split(string(self), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			path = p
		}
	}
	if path == "" {
		return "", false
	}
	base = filepath.Join(mnt, path)
	truePath, err := exec.LookPath("true")
	if err != nil {
		return "", false
	}
	dir := filepath.Join(base, fmt.Sprintf("leaselab-%d.probe", os.Getpid()))
	if os.Mkdir(dir, 0o755) != nil {
		return "", false
	}
	defer func() { _ = os.Remove(dir) }()
	fd, err := syscall.Open(dir, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", false
	}
	defer func() { _ = syscall.Close(fd) }()
	cmd := exec.Command(truePath)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	if cmd.Run() != nil {
		return "", false
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		return "", false // before Linux 5.14: no way to kill a cgroup at once
	}
	removeStale(base)
	// A cgroup namespace confines a process's moves only where the
	// hierarchy delegates by namespace (nsdelegate: measured, without it
	// a process in one still moved itself to the parent cgroup), and
	// needs CAP_SYS_ADMIN (in the user namespace) and a kernel and
	// seccomp policy that allow it.
	if !delegate {
		return base, false
	}
	cmd = exec.Command(truePath)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd, Cloneflags: syscall.CLONE_NEWCGROUP}
	return base, cmd.Run() == nil
}

// removeStale ends what a harness killed before its trees' end left in
// their cgroups (a detached child outlives Pdeathsig) and removes them.
func removeStale(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, "leaselab-*.*"))
	for _, d := range dirs {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), "leaselab-"), ".")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || Alive(pid) {
			continue
		}
		_ = os.WriteFile(filepath.Join(d, "cgroup.kill"), []byte("1"), 0)
		for deadline := time.Now().Add(killWithin); os.Remove(d) != nil && time.Now().Before(deadline); {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted, or "", and
// whether it is mounted with nsdelegate.
func cgroup2Mount() (string, bool) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", false
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options ... - fstype
		// source super-options
		l := sc.Text()
		pre, post, ok := strings.Cut(l, " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if f := strings.Fields(pre); len(f) > 4 {
			super := strings.Fields(post)
			return f[4], len(super) > 2 && slices.Contains(strings.Split(super[2], ","), "nsdelegate")
		}
	}
	return "", false
}

// killWithin bounds Kill: a process that does not die within it (stuck in
// the kernel) is left to the caller's error.
const killWithin = 2 * time.Second

// Kill SIGKILLs every process of the tree, the root too, and reaps the
// orphans among them; it returns once none is left alive (zombies of the
// root's own are its exec.Cmd's to reap), or with an error naming those
// still alive after 2 s.
func (t *Tree) Kill() error {
	deadline := time.Now().Add(killWithin)
	for {
		alive, orphaning := t.members()
		if len(alive) == 0 && orphaning == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v of the tree still alive %v after SIGKILL", alive, killWithin)
		}
		if t.cgroup != "" {
			_ = os.WriteFile(filepath.Join(t.cgroup, "cgroup.kill"), []byte("1"), 0)
		}
		for _, pid := range alive {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// Dying takes the kernel a moment; a poll is all /proc offers.
		time.Sleep(2 * time.Millisecond)
	}
}

// Close removes the tree's cgroup (after Kill, and after the root was
// reaped: a zombie keeps it busy).
func (t *Tree) Close() {
	if t.cgroup == "" {
		return
	}
	// The kernel empties a killed cgroup a moment after its last
	// process is reaped.
	for deadline := time.Now().Add(killWithin); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if err := os.Remove(t.cgroup); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
	}
}

// members returns the tree's live processes, after reaping the zombies
// among them that re-parented to this process, and how many zombies of
// the tree are still to re-parent here (their parent died with them).
func (t *Tree) members() (alive []int, orphaning int) {
	ps := scan()
	me := os.Getpid()
	in := map[int]bool{}
	if t.cgroup != "" {
		for _, pid := range cgroupProcs(t.cgroup) {
			in[pid] = true
		}
	}
	// The tag, in cgroup mode too: a process that moved itself out of the
	// tree's cgroup (no cgroup namespace here) still carries it.
	want := []byte(TreeVar + "=" + t.tag + "\x00")
	for pid, p := range ps {
		if p.state != 'Z' && !in[pid] && hasEnv(pid, want) {
			in[pid] = true
		}
	}
	// The root's process group: a pid is not reused while it names a
	// group, so its members are the tree's (also one exiting, already out
	// of the cgroup).
	for pid, p := range ps {
		if t.root != 0 && p.pgrp == t.root && p.state != 'Z' {
			in[pid] = true
		}
	}
	// Members seen before stay members: one exiting (out of the cgroup,
	// not a zombie yet), one whose environment was cleared and whose
	// parent died (no longer a descendant).
	t.mu.Lock()
	for pid, start := range t.seen {
		if p, ok := ps[pid]; ok && p.start == start && p.state != 'Z' {
			in[pid] = true
		}
	}
	t.mu.Unlock()
	// Descendants of members: a child that cleared its environment.
	for grew := true; grew; {
		grew = false
		for pid, p := range ps {
			if !in[pid] && in[p.ppid] {
				in[pid], grew = true, true
			}
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid := range in {
		p, ok := ps[pid]
		if !ok {
			continue
		}
		if p.state != 'Z' {
			t.seen[pid] = p.start
			alive = append(alive, pid)
		}
	}
	// Orphans that died: zombies of this process's, in the root's process
	// group (a pid is not reused while it names a group) or seen alive in
	// the tree with the same start time (not a reused pid); never the root.
	for pid, p := range ps {
		if p.state != 'Z' || t.root == 0 || p.pgrp != t.root || pid == t.root {
			continue
		}
		if p.ppid == me {
			reap(pid)
		} else if parent, ok := ps[p.ppid]; !ok || parent.state == 'Z' {
			orphaning++ // its parent died with it: it re-parents here
		}
	}
	for pid, start := range t.seen {
		p, ok := ps[pid]
		if !ok || p.start != start || pid == t.root {
			delete(t.seen, pid)
			continue
		}
		if p.state != 'Z' {
			continue
		}
		if p.ppid == me {
			if reap(pid) {
				delete(t.seen, pid)
			}
			continue
		}
		if parent, ok := ps[p.ppid]; !ok || parent.state == 'Z' || t.seen[p.ppid] != 0 {
			// Its parent is gone or going (the tree's): it re-parents
			// here in a moment. (A live parent outside reaps it.)
			orphaning++
		}
	}
	return alive, orphaning
}

// reap reaps a zombie child, without waiting.
func reap(pid int) bool {
	var ws syscall.WaitStatus
	got, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
	return got == pid
}

type procStat struct {
	ppid  int
	pgrp  int
	state byte
	start uint64 // start time in clock ticks after boot
}

// scan reads every process's parent, state and start time from /proc.
func scan() map[int]procStat {
	ents, _ := os.ReadDir("/proc")
	ps := make(map[int]procStat, len(ents))
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session tty tpgid flags minflt
		// cminflt majflt cmajflt utime stime cutime cstime priority nice
		// threads itrealvalue starttime ...
		end := bytes.LastIndexByte(b, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 20 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		start, _ := strconv.ParseUint(f[19], 10, 64)
		ps[pid] = procStat{ppid: ppid, pgrp: pgrp, state: f[0][0], start: start}
	}
	return ps
}

func hasEnv(pid int, want []byte) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	return err == nil && (bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)))
}

func cgroupProcs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}
