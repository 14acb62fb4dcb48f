package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// userPathCommands are the commands that read a file the user names, with
// the path put where each takes it.
func userPathCommands(p, out string) [][]string {
	return [][]string{
		{"run", p, "--backend", "virtual", "--out", out},
		{"suite", p, "--backend", "virtual", "--out", out},
		{"validate", p},
		{"bounds", p},
		{"explore", p, "--out", out},
		{"sweep", p, "--out", out},
		{"sweep", "--scenario", p, "--grid", "ttl=2s,3s", "--out", out},
		{"sweep", "merge", p, "--out", out},
		{"explore", "merge", p, "--out", out},
		{"report", p, "--out", out},
		{"init", filepath.Join(out, "suite"), "--from-advice", p},
		{"observe", "--from", p, "--out", out},
	}
}

// runBounded runs the CLI, failing the test (instead of hanging it) when
// the command has not returned within a deadline far beyond what a
// refusal takes.
func runBounded(t *testing.T, args []string) (int, string) {
	t.Helper()
	type ended struct {
		code   int
		stderr string
	}
	done := make(chan ended, 1)
	go func() {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, &out, &errOut)
		done <- ended{code, errOut.String()}
	}()
	select {
	case e := <-done:
		return e.code, e.stderr
	case <-time.After(10 * time.Second):
		t.Fatalf("%v: still running after 10s", args)
		return 0, ""
	}
}

// A FIFO without a writer, a device, a socket or a directory given where a
// file is read is an input error (exit 2) naming the path and what it is,
// at once: nothing blocks on it or reads it.
func TestUserPathsThatAreNotFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	fifoDir := filepath.Join(dir, "suite")
	os.Mkdir(fifoDir, 0o755)
	if err := syscall.Mkfifo(filepath.Join(fifoDir, "a.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, kind string }{
		{"fifo", fifo, "a FIFO"},
		{"device", "/dev/zero", "a character device"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, args := range userPathCommands(c.path, t.TempDir()) {
				code, stderr := runBounded(t, args)
				if code != exitUsage || !strings.Contains(stderr, c.path+": "+c.kind) || !strings.Contains(stderr, "not a regular file") {
					t.Errorf("%v: exit %d, want 2 with %q ... not a regular file:\n%s", args, code, c.path+": "+c.kind, stderr)
				}
			}
		})
	}
	t.Run("fifo in a suite directory", func(t *testing.T) {
		code, stderr := runBounded(t, []string{"suite", fifoDir, "--backend", "virtual", "--out", t.TempDir()})
		if code != exitUsage || !strings.Contains(stderr, filepath.Join(fifoDir, "a.yaml")+": a FIFO") {
			t.Errorf("exit %d, want 2 naming the FIFO:\n%s", code, stderr)
		}
	})
}

// A scenario or sweep file larger than scenarios.MaxFileSize is refused
// with the limit named, without being parsed.
func TestScenarioFileSizeLimit(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.yaml")
	data, err := os.ReadFile("testdata/quick.yaml")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, "# "+strings.Repeat("x", 2<<20)+"\n"...)
	if err := os.WriteFile(big, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", big, "--backend", "virtual", "--out", t.TempDir()},
		{"validate", big},
		{"sweep", big, "--out", t.TempDir()},
	} {
		code, stderr := runBounded(t, args)
		if code != exitUsage || !strings.Contains(stderr, big+": larger than 1 MiB") {
			t.Errorf("%v: exit %d, want 2 naming the 1 MiB limit:\n%s", args, code, stderr)
		}
	}
}

// An error naming a file whose name holds control characters (an ANSI
// colour, a bell) reaches the terminal with the colour stripped and the
// bell escaped, never raw.
func TestErrorsPrintNoRawControl(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad\x1b[31mred\x1b[0m\x07.yaml")
	if err := os.WriteFile(bad, []byte("durration: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", bad}, {"run", bad, "--backend", "virtual", "--out", t.TempDir()}} {
		code, stderr := runBounded(t, args)
		if code != exitUsage || !strings.Contains(stderr, `badred\x07.yaml:1: unknown key "durration"`) {
			t.Errorf("%v: exit %d, want 2 naming the file printably:\n%q", args[0], code, stderr)
		}
		if strings.ContainsAny(stderr, "\x1b\x07") {
			t.Errorf("%v: raw control characters on the terminal:\n%q", args[0], stderr)
		}
	}
}
