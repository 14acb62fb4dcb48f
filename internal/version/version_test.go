package version

import (
	"runtime/debug"
	"testing"
)

// read and describeLeaselab: what each kind of build says of itself, from
// the build information the go command records for it.
func TestRead(t *testing.T) {
	const rev = "8f659da0c2f1e6c5f1f0b1a2b3c4d5e6f7a8b9c0"
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}
	for _, c := range []struct {
		name     string
		stamp    string
		info     *debug.BuildInfo // nil: the binary has no build information
		version  string
		describe string
	}{
		{"no build information", "", nil, Unknown, Unknown},
		{"a source tree without VCS information", "",
			&debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}},
			Unknown, Unknown + " (" + ModulePath + ")"},
		{"go install @version", "",
			&debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v0.1.0"}},
			"v0.1.0", "v0.1.0 (" + ModulePath + ")"},
		{"a checkout, VCS stamped", "",
			&debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v0.0.0-20251202114000-8f659da0c2f1+dirty"}, Settings: vcs},
			"v0.0.0-20251202114000-8f659da0c2f1+dirty", "v0.0.0-20251202114000-8f659da0c2f1+dirty (" + ModulePath + ", revision " + rev + ", modified)"},
		{"a revision but no module version", "",
			&debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}, Settings: vcs},
			"revision " + rev + ", modified", "revision " + rev + ", modified (" + ModulePath + ")"},
		{"stamped, no VCS", "v0.1.0",
			&debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "(devel)"}},
			"v0.1.0", "v0.1.0 (" + ModulePath + ", set at build)"},
		{"stamped in a checkout", "v0.1.0-3-g8f659da",
			&debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v0.1.1-0.20251202114000-8f659da0c2f1"}, Settings: vcs[:2]},
			"v0.1.0-3-g8f659da", "v0.1.0-3-g8f659da (" + ModulePath + ", set at build, revision " + rev + ")"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := read(c.stamp, func() (*debug.BuildInfo, bool) { return c.info, c.info != nil })
			if got := in.String(); got != c.version {
				t.Errorf("version %q, want %q", got, c.version)
			}
			if got := describeLeaselab(in); got != c.describe {
				t.Errorf("chaos version's line %q, want %q", got, c.describe)
			}
		})
	}
}
