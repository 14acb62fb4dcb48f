package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/leaselab/leaselab/internal/agenttest"
)

func TestConforms(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "agent-go")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("building: %v\n%s", err, out)
	}
	agenttest.Conform(t, []string{bin})
}
