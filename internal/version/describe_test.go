package version

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Describe: one line per thing, in order; a redis-server that is not there
// is said on its line, not an error; what the test binary has no build
// information for is unknown.
func TestDescribe(t *testing.T) {
	var b bytes.Buffer
	missing := filepath.Join(t.TempDir(), "redis-server")
	if err := Describe(context.Background(), &b, missing); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var names []string
	for _, l := range lines {
		names = append(names, strings.Fields(l)[0])
	}
	if strings.Join(names, " ") != "leaselab go redis-server toxiproxy go-redis" {
		t.Fatalf("lines %v:\n%s", names, b.String())
	}
	if !strings.Contains(lines[1], runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("go line %q", lines[1])
	}
	if !strings.Contains(lines[2], "none: ") {
		t.Errorf("a missing redis-server: %q", lines[2])
	}
	if Dependency(ToxiproxyModule) != "" && !strings.Contains(lines[3], Dependency(ToxiproxyModule)+" (in-process)") {
		t.Errorf("toxiproxy line %q", lines[3])
	}
	if orUnknown("") != "unknown (no build information)" || orUnknown("v1") != "v1" {
		t.Error("orUnknown")
	}
}
