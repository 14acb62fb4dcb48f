//go:build linux

package rediscluster

import "syscall"

// procAttr puts a node in its own process group and has the kernel SIGKILL
// it if the harness dies first.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
