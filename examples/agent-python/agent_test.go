// Package agentpython tests the Python agent (agent.py) against the
// protocol; it holds no Go code of its own.
package agentpython

import (
	"os/exec"
	"testing"

	"github.com/leaselab/leaselab/internal/agenttest"
)

// Python is the interpreter with redis-py: Debian's python3-redis installs
// it for the system python3.
func Python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import redis").Run() == nil {
			return path
		}
	}
	t.Fatal("no python3 with redis-py (Debian: apt-get install python3-redis)")
	return ""
}

func TestConforms(t *testing.T) {
	agenttest.Conform(t, []string{Python(t), "agent.py"})
}
