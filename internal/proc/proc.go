// Package proc holds the process tricks the test servers (a throwaway
// redis-server, a local Redis Cluster) and the agents need, behind build
// tags: their own process group, death with the harness where the OS
// offers it, freezing a process as a hung server, and a Tree that finds
// and ends every process an agent started (Linux: a cgroup or a child
// subreaper). Elsewhere they degrade to what the OS can do, and say so.
package proc

import "errors"

// ErrNoSignals is what Freeze and Thaw return where a process cannot be
// stopped and continued (not unix).
var ErrNoSignals = errors.New("proc: pausing a process needs SIGSTOP (unix only)")

// TreeVar is the environment variable that tags every process of a Tree
// (on Linux without a cgroup, how Kill finds them).
const TreeVar = "LEASELAB_TREE"

// NoCgroupVar, set non-empty in the harness's environment, makes every
// Tree use the subreaper even where a cgroup is writable.
const NoCgroupVar = "LEASELAB_NO_CGROUP"
