//go:build linux

package proc

import "syscall"

// Attr puts a server in its own process group (a signal to the harness's
// group does not hit it twice) and has the kernel SIGKILL it if the harness
// dies first.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
