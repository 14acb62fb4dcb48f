// Package version says which leaselab a binary was built from, for the
// versions a run's result records.
package version

import "runtime/debug"

// Leaselab is the VCS revision the binary was built from, else its module
// version, else "devel".
func Leaselab() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
		if bi.Main.Version != "" {
			return bi.Main.Version
		}
	}
	return "devel"
}

// Module is leaselab's module path and version as the binary was built: a
// release or pseudo-version after `go install …/cmd/chaos@version`, "(devel)"
// for a build from a checkout, "" when the binary has no build information.
func Module() (path, version string) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Path, bi.Main.Version
	}
	return "", ""
}

// Revision is the VCS revision a build from a checkout was made at, and
// whether the work tree had changes; "" when the build did not record one
// (`go install …@version`, `go test`, -buildvcs=false).
func Revision() (revision string, modified bool) {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	return revision, modified
}

// Dependency is the version of the module at path the binary was built with
// (after replacements), or "" when it is not part of the build.
func Dependency(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}
