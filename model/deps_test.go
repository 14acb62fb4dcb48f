package model

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportGraph keeps the architecture a DAG with the pure parts pure:
//   - model, scenarios and reports (with reports/live) depend, even
//     transitively, on no backend (anything under sim), on no Docker
//     (testcontainers, moby), Toxiproxy or go-redis, and model imports
//     nothing outside the standard library but leaselab's timing rules;
//   - sim, the simulator, imports no backend: the caller hands one in;
//   - the production packages, election and runner, depend on nothing of the
//     harness, nor on Prometheus; publish and leasemetrics, which their users
//     import, on nothing of the harness.
func TestImportGraph(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH to list the imports with")
	}
	const mod = "github.com/leaselab/leaselab/"
	pure := []string{mod + "sim", "testcontainers", "github.com/moby/", "github.com/docker/",
		"github.com/Shopify/toxiproxy", "github.com/redis/go-redis"}
	harness := []string{mod + "sim", mod + "model", mod + "scenarios", mod + "reports", mod + "sweep", mod + "simtest", mod + "cmd/",
		"github.com/Shopify/toxiproxy", "testcontainers"}
	// The production packages gain no metrics dependency either: the
	// collectors live in leasemetrics.
	production := append(slices.Clone(harness), "github.com/prometheus/")
	rules := []struct {
		pkg    string
		banned []string
	}{
		{"./", pure},
		{"../scenarios", pure},
		{"../reports/...", pure},
		{"../sim", []string{mod + "sim/", "github.com/Shopify/toxiproxy", "github.com/redis/go-redis", "testcontainers"}},
		{"../election/...", production},
		{"../runner/...", production},
		{"../publish", harness},
		{"../leasemetrics", harness},
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", r.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", r.pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range r.banned {
				if strings.HasPrefix(dep, b) || !strings.HasPrefix(b, mod) && strings.Contains(dep, b) {
					t.Errorf("%s depends on %s", r.pkg, dep)
				}
			}
			if r.pkg == "./" && strings.Contains(dep, ".") && !strings.HasPrefix(dep, mod+"election/timing") &&
				!strings.HasPrefix(dep, mod+"model") && !strings.HasPrefix(dep, "vendor/") {
				t.Errorf("model imports %s, outside the standard library", dep)
			}
		}
	}
}
