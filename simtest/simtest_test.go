package simtest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/simtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRunInContainers is the helper as a user's test calls it: a steady
// state in containers has one leader and no window.
func TestRunInContainers(t *testing.T) {
	t.Parallel()
	res := simtest.RunInContainers(t, model.Scenario{Instances: 3,
		Params:   model.Params{TTL: 500 * time.Millisecond, Wait: 600 * time.Millisecond, JitterMS: 5},
		Duration: 2 * time.Second, Recovery: 500 * time.Millisecond})
	s := res.Analysis.Summary
	if s.LeaderGains != 1 || s.Gaps != 0 || s.Overlaps != 0 {
		t.Errorf("steady state: gains %d, gaps %d, overlaps %d; want 1, 0, 0", s.LeaderGains, s.Gaps, s.Overlaps)
	}
	if !res.Complete {
		t.Errorf("incomplete: %s", res.Incomplete)
	}
}

// TestWithoutDocker runs TestRunInContainers again in a child process that
// cannot reach Docker (a mount namespace where /run, with the socket, is an
// empty tmpfs): it is skipped with the reason, and fails when Docker is
// required.
func TestWithoutDocker(t *testing.T) {
	if os.Getenv("SIMTEST_CHILD") != "" {
		t.Skip("in the child")
	}
	if err := exec.Command("unshare", "-m", "true").Run(); err != nil {
		t.Skipf("hiding the Docker socket needs unshare -m (root): %v", err)
	}
	t.Parallel()
	for _, tc := range []struct {
		require  string
		wantExit bool
		want     string
	}{
		{"", true, "--- SKIP: TestRunInContainers"},
		{"1", false, "--- FAIL: TestRunInContainers"},
	} {
		cmd := exec.Command("unshare", "-m", "sh", "-c", `mount -t tmpfs none /run && exec "$0" "$@"`,
			os.Args[0], "-test.run=^TestRunInContainers$", "-test.v")
		cmd.Env = append(os.Environ(), "SIMTEST_CHILD=1", "DOCKER_HOST=unix:///run/docker.sock", simtest.RequireDockerEnv+"="+tc.require)
		out, err := cmd.CombinedOutput()
		if (err == nil) != tc.wantExit || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "docker is not reachable") {
			t.Errorf("%s=%q: exit error %v, output:\n%s\nwant %q and the reason", simtest.RequireDockerEnv, tc.require, err, out, tc.want)
		}
	}
}
