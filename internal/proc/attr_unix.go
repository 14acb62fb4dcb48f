//go:build unix && !linux

package proc

import "syscall"

// Attr puts a server in its own process group. There is no parent-death
// signal outside Linux: a harness killed with SIGKILL leaves the server
// running (Close and a normal exit still stop it).
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
