package scenarios

import (
	"embed"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/leaselab/leaselab/model"
)

// builtinFS holds the built-in suite. The files are ordinary scenario files
// in scenarios/builtin/, readable and copyable as they are.
//
//go:embed builtin/*.yaml
var builtinFS embed.FS

// Entry is one built-in scenario.
type Entry struct {
	// Name is the scenario's name (its file name without .yaml).
	Name string
	// Description says which claim of the spec or which hazard it probes.
	Description string
	// File is its path in the repository, e.g. "scenarios/builtin/pause.yaml".
	File string
	// Raw is the file's bytes, to show or to copy as a starting point.
	Raw []byte
	// Scenario is the parsed scenario.
	Scenario model.Scenario
}

// loadBuiltin parses the embedded files once. A built-in that does not
// parse is a bug in this package, caught by its tests, so it panics (like
// template.Must) rather than burdening every caller with an error.
var loadBuiltin = sync.OnceValue(func() []Entry {
	files, err := builtinFS.ReadDir("builtin")
	if err != nil {
		panic(fmt.Sprintf("scenarios: reading the built-in suite: %v", err))
	}
	var out []Entry
	for _, f := range files {
		name := path.Join("builtin", f.Name())
		raw, err := builtinFS.ReadFile(name)
		if err != nil {
			panic(fmt.Sprintf("scenarios: reading %s: %v", name, err))
		}
		sc, err := Parse("scenarios/"+name, raw)
		if err != nil {
			panic(fmt.Sprintf("scenarios: built-in scenario does not parse:\n%v", err))
		}
		out = append(out, Entry{Name: sc.Name, Description: sc.Description, File: "scenarios/" + name, Raw: raw, Scenario: sc})
	}
	// By name, not file name: "a-b.yaml" sorts after "a-b-c.yaml".
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
})

// Builtin returns the built-in suite, sorted by name. The entries are
// copies: changing one changes nothing for the next caller.
func Builtin() []Entry {
	src := loadBuiltin()
	out := make([]Entry, len(src))
	for i, e := range src {
		out[i] = e.clone()
	}
	return out
}

// Lookup returns the built-in scenario with the given name.
func Lookup(name string) (Entry, bool) {
	for _, e := range loadBuiltin() {
		if e.Name == name {
			return e.clone(), true
		}
	}
	return Entry{}, false
}

// Open returns the scenario a command line names: a file if arg is a path to
// one, otherwise the built-in of that name. Neither: a path-like arg (one
// with a slash, or ending .yaml or .yml) is a file not found; a name is an
// unknown built-in, with the closest one if it looks like a typo of it.
func Open(arg string) (model.Scenario, error) {
	if _, err := os.Stat(arg); err == nil {
		return Load(arg)
	}
	if e, ok := Lookup(arg); ok {
		return e.Scenario, nil
	}
	if strings.ContainsRune(arg, '/') || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return model.Scenario{}, fmt.Errorf("%s: scenario file not found", arg)
	}
	names := make([]string, 0, len(loadBuiltin()))
	for _, e := range loadBuiltin() {
		names = append(names, e.Name)
	}
	if s := Suggest(arg, names); s != "" {
		return model.Scenario{}, fmt.Errorf("%q is neither a scenario file nor a built-in scenario; did you mean %q? ('chaos list' names all %d)", arg, s, len(names))
	}
	return model.Scenario{}, fmt.Errorf("%q is neither a scenario file nor a built-in scenario ('chaos list' names the %d built-ins)", arg, len(names))
}

// clone copies the entry's slices, so callers cannot change the suite.
func (e Entry) clone() Entry {
	e.Raw = slices.Clone(e.Raw)
	sc := &e.Scenario
	sc.Faults = slices.Clone(sc.Faults)
	for i := range sc.Faults {
		sc.Faults[i].Target.Indexes = slices.Clone(sc.Faults[i].Target.Indexes)
	}
	sc.Expect = slices.Clone(sc.Expect)
	return e
}

// Summary is the description's first sentence, its spaces collapsed, for
// one-line listings (chaos list).
func (e Entry) Summary() string {
	s := strings.Join(strings.Fields(e.Description), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
