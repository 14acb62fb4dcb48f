package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// A suite of files that all name backend: virtual, without --backend, runs
// on the virtual backend and its last lines say so, with the elapsed time
// to the millisecond (it said "on the real backend", to the second, before).
func TestSuiteOnTheScenariosBackendSaysWhich(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"a-latency.yml", "b-blackhole.yaml"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "usersuite", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), append([]byte("backend: virtual\n"), raw...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := chaos(t, "suite", dir, "--out", t.TempDir(), "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, out, errOut)
	}
	// Rounded to the second, two computed runs would show "in 0s".
	if !regexp.MustCompile(`suite: 2 scenarios on the virtual backend in ([0-9]+ms|[0-9]+\.[0-9]+s);`).MatchString(out) {
		t.Fatalf("the suite line does not say the virtual backend, to the millisecond:\n%s", out)
	}
}
