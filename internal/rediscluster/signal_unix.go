//go:build unix

package rediscluster

import (
	"errors"
	"os"
	"syscall"
)

func killGroup(p *os.Process)    { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
func freeze(p *os.Process) error { return syscall.Kill(p.Pid, syscall.SIGSTOP) }
func thaw(p *os.Process) error   { return syscall.Kill(p.Pid, syscall.SIGCONT) }

// alive reports whether a process with this pid exists (a zombie counts).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
