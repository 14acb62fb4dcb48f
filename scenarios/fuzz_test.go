package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse feeds Parse arbitrary bytes. It must never panic; a failure must
// be an *Error whose every line has a file:line; a success must survive a
// Marshal/Parse round trip unchanged.
//
//	go test -run '^$' -fuzz FuzzParse -fuzztime 60s ./scenarios/
func FuzzParse(f *testing.F) {
	for _, e := range Builtin() {
		f.Add(e.Raw)
	}
	f.Add(readmeExample(f))
	bad, _ := filepath.Glob("testdata/bad/*.yaml")
	for _, path := range bad {
		if data, err := os.ReadFile(path); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse("fuzz.yaml", data)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) || len(perr.Problems) == 0 {
				t.Fatalf("error %T with no problems: %v", err, err)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if !problemLine.MatchString(line) {
					t.Fatalf("line without file:line: %q", line)
				}
			}
			return
		}
		out, err := Marshal(sc)
		if err != nil {
			t.Fatalf("Marshal of a parsed scenario: %v", err)
		}
		back, err := Parse("fuzz.yaml", out)
		if err != nil {
			t.Fatalf("marshalled scenario does not parse:\n%v\n%s", err, out)
		}
		if !reflect.DeepEqual(withoutLines(back), withoutLines(sc)) {
			t.Fatalf("round trip changed the scenario\nbefore: %+v\nafter:  %+v", sc, back)
		}
	})
}
