package model

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportGraph keeps the architecture a DAG with the pure parts pure:
// model, scenarios and reports must not depend, even transitively, on a
// backend (sim), on Docker (testcontainers, moby) or on Toxiproxy, and model
// imports nothing outside the standard library but leaselab's timing rules.
func TestImportGraph(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH to list the imports with")
	}
	banned := []string{"github.com/leaselab/leaselab/sim", "testcontainers", "github.com/moby/", "github.com/docker/",
		"github.com/Shopify/toxiproxy", "github.com/redis/go-redis"}
	for _, pkg := range []string{"./", "../scenarios", "../reports"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range banned {
				if strings.Contains(dep, b) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
			if pkg == "./" && strings.Contains(dep, ".") && !strings.HasPrefix(dep, "github.com/leaselab/leaselab/election/timing") &&
				!strings.HasPrefix(dep, "github.com/leaselab/leaselab/model") && !strings.HasPrefix(dep, "vendor/") {
				t.Errorf("model imports %s, outside the standard library", dep)
			}
		}
	}
}
