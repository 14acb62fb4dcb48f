//go:build unix

package redisserver

import (
	"errors"
	"os"
	"syscall"
)

// killGroup SIGKILLs the server's process group.
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }

// freeze and thaw stop and continue the process (SIGSTOP, SIGCONT).
func freeze(p *os.Process) error { return syscall.Kill(p.Pid, syscall.SIGSTOP) }
func thaw(p *os.Process) error   { return syscall.Kill(p.Pid, syscall.SIGCONT) }

// processAlive reports whether a process with this id exists (signal 0;
// EPERM means it exists but belongs to another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ownedByMe reports whether this user owns the file, so that a stale
// directory of another user is never touched.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
