package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/leaselab/leaselab/model"
)

// SuiteErrors are the problems OpenSuite found, one per file or argument.
type SuiteErrors []error

func (e SuiteErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

// OpenSuite opens the scenarios of a suite (what chaos suite runs): every
// built-in when args is empty, else, in the order given, the scenario files
// (*.yaml, *.yml, sorted) of each directory, each file and each built-in by
// name (Open). Every invalid file and every directory without scenario
// files is reported, as SuiteErrors, before anything runs. Two scenarios of
// one name would share a report directory: that is an error too.
func OpenSuite(args []string) ([]model.Scenario, error) {
	var scs []model.Scenario
	if len(args) == 0 {
		for _, e := range Builtin() {
			scs = append(scs, e.Scenario)
		}
		return scs, nil
	}
	var errs SuiteErrors
	for _, a := range args {
		paths := []string{a}
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			paths = nil
			for _, pat := range []string{"*.yaml", "*.yml"} {
				m, _ := filepath.Glob(filepath.Join(a, pat))
				paths = append(paths, m...)
			}
			sort.Strings(paths)
			if len(paths) == 0 {
				errs = append(errs, fmt.Errorf("%s: no scenario files (*.yaml, *.yml) in this directory", a))
			}
		}
		for _, p := range paths {
			sc, err := Open(p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			scs = append(scs, sc)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	seen := map[string]bool{}
	for _, sc := range scs {
		if seen[sc.Name] {
			return nil, fmt.Errorf("two scenarios are named %q: their reports would share a directory; rename one (its file name or name:)", sc.Name)
		}
		seen[sc.Name] = true
	}
	return scs, nil
}
