//go:build unix

package proc

import (
	"errors"
	"os"
	"syscall"
)

// KillGroup SIGKILLs the process's group.
func KillGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }

// Freeze and Thaw stop and continue the process (SIGSTOP, SIGCONT).
func Freeze(p *os.Process) error { return syscall.Kill(p.Pid, syscall.SIGSTOP) }

// Thaw undoes Freeze.
func Thaw(p *os.Process) error { return syscall.Kill(p.Pid, syscall.SIGCONT) }

// Alive reports whether a process with this pid exists (signal 0; EPERM
// means it exists but belongs to another user; a zombie counts).
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// OwnedByMe reports whether this user owns the file, so that another
// user's leftovers are never touched.
func OwnedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
