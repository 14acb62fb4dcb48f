package scenarios

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.err from the parser's output")

// problemLine is the shape of every line of a parse error.
var problemLine = regexp.MustCompile(`^[^:]+:[1-9][0-9]*: \S`)

// TestBadCorpus parses each testdata/bad/*.yaml and compares the error with
// its sibling .err file, exactly. Run with -update to rewrite the .err files
// after a deliberate change of wording, then read the diff.
func TestBadCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad corpus: %v", err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(name, data)
			if err == nil {
				t.Fatalf("%s parsed; want an error", name)
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error is %T, want *Error: %v", err, err)
			}
			got := err.Error()
			for _, line := range strings.Split(got, "\n") {
				if !problemLine.MatchString(line) {
					t.Errorf("line without file:line: %q", line)
				}
			}
			errFile := strings.TrimSuffix(path, ".yaml") + ".err"
			if *update {
				if err := os.WriteFile(errFile, []byte(got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(errFile)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != strings.TrimRight(string(want), "\n") {
				t.Errorf("error differs from %s\ngot:\n%s\nwant:\n%s", errFile, got, want)
			}
		})
	}
}

// TestBadFileName checks that a name taken from the file name is checked
// like one written in the file.
func TestBadFileName(t *testing.T) {
	_, err := Parse("my scenario.yaml", []byte("duration: 10s\n"))
	want := `my scenario.yaml:1: name: the file name gives the name "my scenario", which is not one; set name: to letters, digits, '.', '_' and '-'`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
