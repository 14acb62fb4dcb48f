//go:build unix && !linux

package redisserver

import "syscall"

// procAttr puts the server in its own process group. There is no
// parent-death signal outside Linux: a harness killed with SIGKILL leaves
// the server running (Close and a normal exit still stop it).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
