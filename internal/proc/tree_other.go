//go:build !linux

package proc

import (
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
)

// Tree is one started process and its process group: outside Linux there
// is neither a cgroup nor a child subreaper, so a descendant that leaves
// the group (setsid) is not found.
type Tree struct {
	tag string
	cmd *exec.Cmd
}

var trees atomic.Uint64

// NewTree returns a tree for one process, not started.
func NewTree() *Tree { return &Tree{tag: fmt.Sprintf("%d.%d", os.Getpid(), trees.Add(1))} }

// Mode says how the tree finds its processes: "process group".
func (t *Tree) Mode() string { return "process group" }

// Start starts cmd in its own process group, tagged.
func (t *Tree) Start(cmd *exec.Cmd) error {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, TreeVar+"="+t.tag)
	cmd.SysProcAttr = Attr()
	t.cmd = cmd
	return cmd.Start()
}

// Kill SIGKILLs the process group.
func (t *Tree) Kill() error {
	if t.cmd != nil && t.cmd.Process != nil {
		KillGroup(t.cmd.Process)
	}
	return nil
}

// Close does nothing here.
func (t *Tree) Close() {}
