// Package proc holds the process tricks the test servers (a throwaway
// redis-server, a local Redis Cluster) need, behind build tags: their own
// process group, death with the harness where the OS offers it, and
// freezing a process as a hung server. Elsewhere they degrade to what the OS
// can do, and say so.
package proc

import "errors"

// ErrNoSignals is what Freeze and Thaw return where a process cannot be
// stopped and continued (not unix).
var ErrNoSignals = errors.New("proc: pausing a process needs SIGSTOP (unix only)")
