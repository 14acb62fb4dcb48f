package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/leaselab/leaselab/internal/redisserver"
	"github.com/leaselab/leaselab/internal/version"
)

// versionLine is the value of one "name  value" line of chaos version.
func versionLine(t *testing.T, out, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +(.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %s line in:\n%s", name, out)
	}
	return m[1]
}

// goList is a module's version as go.mod resolves it.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-m"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list -m %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// TestModuleInstallable: go install of cmd/chaos at the pinned release
// (version.Release) builds the module outside any workspace, which the go command refuses for a
// go.mod with replace or exclude directives.
func TestModuleInstallable(t *testing.T) {
	out, err := exec.Command("go", "mod", "edit", "-json", "../../go.mod").Output()
	if err != nil {
		t.Fatal(err)
	}
	var mod struct {
		Module  struct{ Path string }
		Replace []any
		Exclude []any
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Module.Path != "github.com/leaselab/leaselab" {
		t.Errorf("module %q: the README's go install line names github.com/leaselab/leaselab", mod.Module.Path)
	}
	if len(mod.Replace) > 0 || len(mod.Exclude) > 0 {
		t.Errorf("go.mod has replace %v / exclude %v directives: go install …@version refuses the module", mod.Replace, mod.Exclude)
	}
}

// TestVersionInstalled installs chaos as docs/cli.md says to (its stamped
// go install, from the root of the repository, into an empty GOBIN) and
// checks that chaos version names the version git describe gives (the
// stamp; outside a git checkout it is empty, and the version unknown), the
// module, the toolchain, the redis-server a run spawns and the Toxiproxy and
// go-redis compiled in, each against an independent source.
func TestVersionInstalled(t *testing.T) {
	page, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := regexp.MustCompile(`(?m)^go install -ldflags .*\./cmd/chaos$`).FindString(string(page))
	if documented == "" || !strings.Contains(documented, `"-X `+version.StampVar+"=$(git describe --tags --always --dirty)\"") {
		t.Fatalf("docs/cli.md shows no build that stamps the version (go install -ldflags \"-X %s=$(git describe …)\" ./cmd/chaos): %q", version.StampVar, documented)
	}
	gobin := t.TempDir()
	install := exec.Command("sh", "-c", documented)
	install.Dir = "../.."
	install.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", documented, err, out)
	}
	out, err := exec.Command(filepath.Join(gobin, "chaos"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("chaos version: %v\n%s", err, out)
	}
	got := string(out)
	describe := exec.Command("git", "describe", "--tags", "--always", "--dirty")
	describe.Dir = "../.."
	stamp := version.Unknown // outside a git checkout the stamp is empty
	if out, err := describe.Output(); err == nil {
		stamp = strings.TrimSpace(string(out))
	}
	if l := versionLine(t, got, "leaselab"); !strings.HasPrefix(l, stamp+" (") || !strings.Contains(l, goList(t)) {
		t.Errorf("leaselab %q, want %s (git describe) of the module %s", l, stamp, goList(t))
	}
	if l := versionLine(t, got, "go"); !strings.HasPrefix(l, runtime.Version()+" ") {
		t.Errorf("go %q, want %s (the toolchain that built it)", l, runtime.Version())
	}
	for name, path := range map[string]string{"toxiproxy": version.ToxiproxyModule, "go-redis": version.GoRedisModule} {
		want := goList(t, "-f", "{{.Version}}", path)
		if l := versionLine(t, got, name); !strings.HasPrefix(l, want) {
			t.Errorf("%s %q, want go.mod's %s", name, l, want)
		}
	}
	srv, err := redisserver.Start(context.Background(), redisserver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	// The spawned server's INFO redis_version, not its --version.
	if l := versionLine(t, got, "redis-server"); !strings.HasPrefix(l, srv.Version+" (") {
		t.Errorf("redis-server %q, want %s, what a spawned server reports", l, srv.Version)
	}
}

func TestVersionWithoutRedis(t *testing.T) {
	code, out, errOut := chaos(t, "version", "--redis-server", filepath.Join(t.TempDir(), "redis-server"))
	if code != exitOK {
		t.Fatalf("exit %d, want 0 (a missing redis-server is reported, not an error)\n%s", code, errOut)
	}
	if l := versionLine(t, out, "redis-server"); !strings.Contains(l, "none: no redis-server at ") {
		t.Errorf("redis-server %q, want it reported missing with the path", l)
	}
	if code, _, _ := chaos(t, "version", "extra"); code != exitUsage {
		t.Errorf("version with an argument: exit %d, want 2", code)
	}
}

// TestVersionStamp builds chaos as a source tree without VCS information
// is built (-buildvcs=false), with and without a stamp, at once: chaos
// version says the stamp, or that the version is unknown and why, never the
// go command's "(devel)". TestVersionInstalled runs the documented build.
func TestVersionStamp(t *testing.T) {
	const stamp = "v0.0.0-stamp-test"
	builds := []struct {
		name    string
		ldflags string
		want    string
	}{
		{"plain", "", version.Unknown + " (" + version.ModulePath + "): " + version.UnknownWhy},
		{"stamped", "-X " + version.StampVar + "=" + stamp, stamp + " (" + version.ModulePath + ", set at build)"},
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	outs := make([][]byte, len(builds))
	errs := make([]error, len(builds))
	for i, b := range builds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = exec.Command("go", "build", "-buildvcs=false", "-ldflags", b.ldflags, "-o", filepath.Join(dir, b.name), ".").CombinedOutput()
		}()
	}
	wg.Wait()
	for i, b := range builds {
		if errs[i] != nil {
			t.Fatalf("go build -buildvcs=false -ldflags %q ./cmd/chaos: %v\n%s", b.ldflags, errs[i], outs[i])
		}
		out, err := exec.Command(filepath.Join(dir, b.name), "version", "--redis-server", filepath.Join(dir, "none")).CombinedOutput()
		if err != nil {
			t.Fatalf("%s chaos version: %v\n%s", b.name, err, out)
		}
		if got := versionLine(t, string(out), "leaselab"); got != b.want {
			t.Errorf("%s build: leaselab %q, want %q", b.name, got, b.want)
		}
	}
}
