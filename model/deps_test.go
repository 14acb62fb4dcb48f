package model

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportGraph keeps the architecture a DAG with the pure parts pure:
//   - model, scenarios and reports (with reports/live) depend, even
//     transitively, on no backend (anything under sim), on no Docker
//     (testcontainers, moby), Toxiproxy or go-redis, and model (with its
//     stages) imports nothing outside the standard library but leaselab's
//     timing rules;
//   - model's stages point one way: model (the vocabulary) imports none of
//     them, analysis neither bounds nor verdict, bounds not verdict;
//   - sim, the simulator, imports no backend: the caller hands one in;
//   - no backend (real, virtual, process with its ownagent) imports
//     another, and the real-time engine the spawners stand on
//     (sim/realtime), with what an in-process instance runs on
//     (sim/faulty), imports none: a new spawner is one package beside
//     them;
//   - sim/faults, the fault driver every backend uses, imports no backend
//     (nothing else under sim) nor what a backend drives (Toxiproxy,
//     go-redis, Docker): a backend hands it a faults.World;
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
	// The backends, each a package with those below it ("/...": not a
	// sibling whose name it begins, as sim/realtime begins sim/real).
	backends := []string{mod + "sim/real/...", mod + "sim/virtual/...", mod + "sim/process/...", mod + "sim/backends/..."}
	but := func(own string) []string {
		return slices.DeleteFunc(slices.Clone(backends), func(b string) bool { return b == mod+own+"/..." })
	}
	// The production packages gain no metrics dependency either: the
	// collectors live in leasemetrics.
	production := append(slices.Clone(harness), "github.com/prometheus/")
	rules := []struct {
		pkg    string
		banned []string
	}{
		{"./...", pure},
		{"./", []string{mod + "model/"}},
		{"./analysis", []string{mod + "model/bounds", mod + "model/verdict"}},
		{"./bounds", []string{mod + "model/verdict"}},
		{"../scenarios", pure},
		{"../reports/...", pure},
		{"../sim", []string{mod + "sim/", "github.com/Shopify/toxiproxy", "github.com/redis/go-redis", "testcontainers"}},
		{"../sim/faults", append(slices.Clone(backends), mod+"sim/realtime", mod+"sim/faulty", mod+"sim/env",
			"github.com/Shopify/toxiproxy", "github.com/redis/go-redis", "testcontainers", "github.com/moby/", "github.com/docker/")},
		{"../sim/realtime", backends},
		{"../sim/faulty", append(slices.Clone(backends), mod+"sim/realtime")},
		{"../sim/real/...", but("sim/real")},
		{"../sim/virtual/...", append(but("sim/virtual"), mod+"sim/realtime")},
		{"../sim/process/...", but("sim/process")},
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
				if banned(dep, b) || !strings.HasPrefix(b, mod) && strings.Contains(dep, b) {
					t.Errorf("%s depends on %s", r.pkg, dep)
				}
			}
			if r.pkg == "./..." && strings.Contains(dep, ".") && !strings.HasPrefix(dep, mod+"election/timing") &&
				!strings.HasPrefix(dep, mod+"model") && !strings.HasPrefix(dep, "vendor/") {
				t.Errorf("model imports %s, outside the standard library", dep)
			}
		}
	}
}

// banned reports whether dep is what b bans: with a "/..." suffix, that
// package or one below it; otherwise every package whose path begins b.
func banned(dep, b string) bool {
	if root, ok := strings.CutSuffix(b, "/..."); ok {
		return dep == root || strings.HasPrefix(dep, root+"/")
	}
	return strings.HasPrefix(dep, b)
}

// TestStageSize keeps each of model's stages small enough to read whole:
// a package over the limit is a stage that wants splitting again.
func TestStageSize(t *testing.T) {
	const limit = 4500
	for _, dir := range []string{".", "analysis", "bounds", "verdict"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines += bytes.Count(b, []byte("\n"))
		}
		if lines == 0 || lines > limit {
			t.Errorf("model/%s has %d non-test lines, want 1 to %d", dir, lines, limit)
		}
	}
}
