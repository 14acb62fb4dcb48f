// Package simtest runs leaselab scenarios from a Go test, against Redis and
// Toxiproxy in containers (testcontainers-go), in a few lines:
//
//	func TestFailover(t *testing.T) {
//		res := simtest.RunInContainers(t, model.Scenario{
//			Instances: 3,
//			Duration:  20 * time.Second,
//			Faults:    []model.Fault{{At: 5 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: model.RoleLeader}}},
//		})
//		if s := res.Analysis.Summary; s.Overlaps != 0 {
//			t.Errorf("%d overlaps after a crash", s.Overlaps)
//		}
//	}
//
// When Docker is not reachable, or the images cannot be had, the test is
// skipped with the reason, unless LEASELAB_REQUIRE_DOCKER=1, which makes it
// a failure (CI sets it where Docker answers). The containers are removed
// when the run ends, whether it passed, failed or was interrupted; on a
// machine without registry access set TESTCONTAINERS_RYUK_DISABLED=true and
// build the images with docker/build-images.sh (see README.md, "Running with Docker").
package simtest

import (
	"github.com/leaselab/leaselab/model/verdict"

	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/env"
	"github.com/leaselab/leaselab/sim/real"
)

// RequireDockerEnv names the variable that turns "Docker is not available"
// from a skip into a failure.
const RequireDockerEnv = "LEASELAB_REQUIRE_DOCKER"

// RunInContainers runs sc in a fresh container environment (Redis and
// Toxiproxy with env.Containers defaults) and returns its result. It fails t
// if the run could not start or the harness had errors; the scenario's own
// verdicts are for the caller to judge (Result.Verdict, Analysis). A
// scenario without a name is named after the test.
func RunInContainers(t testing.TB, sc model.Scenario) *verdict.Result {
	t.Helper()
	return Run(t, sc, Containers(t))
}

// Containers returns a container provider whose logs go to t and whose
// containers carry a label unique to t, after making sure it can start
// (env.Containers.Check): if Docker does not answer or the images cannot be
// had, t is skipped (or failed, with LEASELAB_REQUIRE_DOCKER=1).
func Containers(t testing.TB) env.Containers {
	t.Helper()
	p := env.Containers{Label: Label(t), Logf: t.Logf}
	if err := p.Check(t.Context()); err != nil {
		unavailable(t, err)
	}
	return p
}

// Label is the env.LabelEnv value that Containers gives t's containers.
func Label(t testing.TB) string {
	r := strings.NewReplacer("/", "-", " ", "_", "#", "-")
	return "simtest-" + r.Replace(t.Name())
}

// Run runs sc with provider p, treating an unavailable Docker or image like
// Containers does, and fails t if the run could not start or the harness
// had errors.
func Run(t testing.TB, sc model.Scenario, p env.Provider) *verdict.Result {
	t.Helper()
	if sc.Name == "" {
		sc.Name = model.NameFrom(strings.ReplaceAll(t.Name(), "/", "-"))
	}
	res, err := real.Run(t.Context(), sc, real.Options{Provider: p})
	if errors.Is(err, env.ErrDockerUnavailable) || errors.Is(err, env.ErrImageUnavailable) {
		unavailable(t, err)
	}
	if err != nil {
		t.Fatalf("running %s: %v", sc.Name, err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("running %s: harness errors: %v", sc.Name, res.Errors)
	}
	s := res.Analysis.Summary
	t.Logf("%s (setup %v, run %v): leader gains %d, gaps %d (max %v), overlaps %d (max %v), stale %d (max %v)",
		sc.Name, res.Setup.Round(time.Millisecond), res.Elapsed.Round(time.Millisecond), s.LeaderGains, s.Gaps, s.MaxGap, s.Overlaps, s.MaxOverlap, s.StaleWindows, s.MaxStale)
	return res
}

// unavailable skips t, or fails it when Docker is required.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(RequireDockerEnv) == "1" {
		t.Fatalf("%s=1 but the container environment is unavailable: %v", RequireDockerEnv, err)
	}
	t.Skipf("skipping: the container environment is unavailable (%v); set %s=1 to make this a failure", err, RequireDockerEnv)
}
