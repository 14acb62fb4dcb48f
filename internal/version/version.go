// Package version says which leaselab a binary was built from, for chaos
// version and the versions a run's result records.
//
// A binary knows its version from the first of: a stamp set at link time
// (-ldflags "-X github.com/leaselab/leaselab/internal/version.build=VERSION",
// what the documented builds and docker/build-images.sh do), the module
// version the go command recorded (a release after `go install
// …/cmd/chaos@vX.Y.Z`, a pseudo-version for a build in a git checkout), or
// the VCS revision alone. A build with none of them — from a source tree
// without .git, or with -buildvcs=false and no stamp — says so (Unknown)
// rather than the go command's "(devel)", which names no version at all.
//
// Release is the one place the project's release version is written; the
// documentation and CI templates pin it, and a test holds every pin to it.
package version

import "runtime/debug"

// Release is the version of leaselab's current release: the tag of its
// release commit (a semantic version, vMAJOR.MINOR.PATCH), the version the
// documentation's `go install github.com/leaselab/leaselab/cmd/chaos@…`
// lines and the CI templates pin, and the tag of the chaos image that
// docker/build-images.sh builds (ReleaseImage). Releasing sets it, updates
// the pins (TestPinsAgree lists every one that disagrees) and tags the
// commit with it.
const Release = "v0.1.0"

// ReleaseImage is the chaos container image docker/build-images.sh builds
// and the Kubernetes templates run: local, like the Redis and Toxiproxy
// images it builds, since leaselab publishes no image to a registry.
const ReleaseImage = "leaselab/chaos:" + Release + "-local"

// ModulePath is leaselab's module path.
const ModulePath = "github.com/leaselab/leaselab"

// StampVar is the linker name of the stamp: a build sets it with
// -ldflags "-X " + StampVar + "=VERSION".
const StampVar = ModulePath + "/internal/version.build"

// Unknown is the version of a binary that recorded none: no stamp, no
// module version, no VCS revision.
const Unknown = "unknown version: built without VCS information"

// UnknownWhy says how a build comes to have no VCS information, for chaos
// version to print after Unknown.
const UnknownWhy = "a source tarball, -buildvcs=false (GOFLAGS may set it; go build -buildvcs=true overrides) or a git worktree"

// build is the version stamped at link time (StampVar); "" when the build
// set none.
var build string

// Info is what a binary records of the leaselab it was built from.
type Info struct {
	// Version is the stamp, else the module version (a release or a
	// pseudo-version), else "": the go command records "(devel)" for a
	// build from a source tree without VCS information, which is no
	// version and is left out.
	Version string
	// Stamped is true when Version was set at link time (StampVar).
	Stamped bool
	// Path is the main module's path; "" without build information.
	Path string
	// Revision is the VCS revision of a build in a checkout, and Modified
	// whether its work tree had changes; "" when the build recorded none
	// (`go install …@version`, `go test`, -buildvcs=false).
	Revision string
	Modified bool
}

// Read is what this binary records of its leaselab.
func Read() Info {
	return read(build, debug.ReadBuildInfo)
}

// read is Read with the stamp and the build information given, for tests.
func read(stamp string, buildInfo func() (*debug.BuildInfo, bool)) Info {
	var in Info
	if bi, ok := buildInfo(); ok {
		in.Path = bi.Main.Path
		if v := bi.Main.Version; v != "(devel)" {
			in.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Revision = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	if stamp != "" {
		in.Version, in.Stamped = stamp, true
	}
	return in
}

// String is the version in one phrase: Version, else the revision
// ("revision REV", ", modified" if so), else Unknown.
func (in Info) String() string {
	switch {
	case in.Version != "":
		return in.Version
	case in.Revision != "":
		s := "revision " + in.Revision
		if in.Modified {
			s += ", modified"
		}
		return s
	}
	return Unknown
}

// Leaselab is this binary's version in one phrase (Info.String), as a
// run's result records it.
func Leaselab() string {
	return Read().String()
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
