//go:build unix && !linux

package rediscluster

import "syscall"

// procAttr puts a node in its own process group. There is no parent-death
// signal outside Linux: a harness killed with SIGKILL leaves nodes running.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
