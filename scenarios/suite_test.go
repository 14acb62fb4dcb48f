package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// OpenSuite: the built-ins by default; a directory's files sorted, then
// files and names in the order given; every bad argument reported at once;
// two scenarios of one name refused.
func TestOpenSuite(t *testing.T) {
	if scs, err := OpenSuite(nil); err != nil || len(scs) != len(Builtin()) {
		t.Fatalf("no arguments: %d scenarios, %v; want the %d built-ins", len(scs), err, len(Builtin()))
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("suite/b.yaml", "duration: 2s\n")
	write("suite/a.yml", "duration: 2s\n")
	scs, err := OpenSuite([]string{filepath.Join(dir, "suite"), "leader-crash"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range scs {
		names = append(names, sc.Name)
	}
	if strings.Join(names, " ") != "a b leader-crash" {
		t.Errorf("order %v; want a b leader-crash", names)
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	bad := write("bad.yaml", "duration: banana\n")
	_, err = OpenSuite([]string{empty, bad, "no-such-scenario"})
	var se SuiteErrors
	if !errors.As(err, &se) || len(se) != 3 || !strings.Contains(se[0].Error(), "no scenario files") || !strings.Contains(se[1].Error(), "bad.yaml:1:") {
		t.Errorf("bad arguments: %v; want three problems, the file's at its line", err)
	}
	if _, err := OpenSuite([]string{"leader-crash", "leader-crash"}); err == nil || !strings.Contains(err.Error(), `two scenarios are named "leader-crash"`) {
		t.Errorf("one name twice: %v", err)
	}
}
