package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/leaselab/leaselab/internal/agenttest"
)

// TestConforms: the agent says a valid hello for its lease, takes the free
// lease, and on SIGTERM steps down, releases, says stopped and exits 0.
func TestConforms(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "redsync")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building: %v\n%s", err, out)
	}
	agenttest.Conform(t, []string{bin})
}
