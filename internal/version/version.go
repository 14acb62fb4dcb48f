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
