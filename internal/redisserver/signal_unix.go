//go:build unix

package redisserver

import (
	"os"
	"syscall"
)

// killGroup SIGKILLs the server's process group.
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }

// freeze and thaw stop and continue the process (SIGSTOP, SIGCONT).
func freeze(p *os.Process) error { return syscall.Kill(p.Pid, syscall.SIGSTOP) }
func thaw(p *os.Process) error   { return syscall.Kill(p.Pid, syscall.SIGCONT) }
