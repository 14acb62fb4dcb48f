package reports

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update rewrites the golden files from the current output:
//
//	go test ./reports/ -run Golden -update
//
// Review the diff before committing it: it is the change a reader of the
// reports will see.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run `go test ./reports/ -run Golden -update` and review the diff.\n--- got ---\n%s", path, got)
	}
}

func TestGoldenMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := Markdown(&b, fixture(), Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.md", b.Bytes())
}

func TestGoldenJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := JUnit(&b, []*verdict.Result{fixture()}); err != nil {
		t.Fatal(err)
	}
	golden(t, "junit.golden.xml", b.Bytes())
}

func TestGoldenSuite(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSuite(dir, suiteRuns()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ file, golden string }{
		{"summary.md", "suite-summary.golden.md"},
		{FileJUnit, "suite-junit.golden.xml"},
	} {
		got, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, f.golden, got)
	}
}
