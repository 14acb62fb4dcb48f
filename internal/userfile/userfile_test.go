package userfile_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/leaselab/leaselab/internal/userfile"
)

// A FIFO without a writer, a device, a socket and a directory are refused
// by name before anything is read: none of them blocks or is read.
func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	link := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, kind string }{
		{"/dev/zero", "a character device"},
		{"/dev/null", "a character device"},
		{link, "a character device"},
		{fifo, "a FIFO"},
		{sock, "a socket"},
		{dir, "a directory"},
	} {
		for name, read := range map[string]func(string) error{
			"Open": func(p string) error {
				f, err := userfile.Open(p)
				if err == nil {
					f.Close()
				}
				return err
			},
			"Read": func(p string) error { _, err := userfile.Read(p, 1<<20, "a scenario file"); return err },
		} {
			err := read(c.path)
			var nr *userfile.NotRegularError
			if !errors.As(err, &nr) {
				t.Errorf("%s(%s): %v, want a NotRegularError", name, c.path, err)
				continue
			}
			if msg := err.Error(); !strings.HasPrefix(msg, c.path+": ") || !strings.Contains(msg, c.kind) || !strings.Contains(msg, "not a regular file") {
				t.Errorf("%s(%s): %q, want the path, %q and \"not a regular file\"", name, c.path, msg, c.kind)
			}
		}
	}
}

// Read reads a regular file up to its limit, and refuses a larger one with
// an error naming the limit, reading no more than the limit and a byte.
func TestReadCapsTheSize(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at.yaml")
	over := filepath.Join(dir, "over.yaml")
	os.WriteFile(at, bytes.Repeat([]byte("a"), 1024), 0o644)
	os.WriteFile(over, bytes.Repeat([]byte("a"), 1025), 0o644)
	got, err := userfile.Read(at, 1024, "a scenario file")
	if err != nil || len(got) != 1024 {
		t.Fatalf("a file at the limit: %d bytes, %v", len(got), err)
	}
	_, err = userfile.Read(over, 1024, "a scenario file")
	var tl *userfile.TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 1024 {
		t.Fatalf("a file over the limit: %v, want a TooLargeError of 1024", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, over+": ") || !strings.Contains(msg, "1 KiB") || !strings.Contains(msg, "a scenario file") {
		t.Errorf("message %q: want the path, the limit (1 KiB) and what the file is", msg)
	}
	if _, err := userfile.Read(filepath.Join(dir, "missing.yaml"), 1024, "a scenario file"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want ErrNotExist", err)
	}
}

// Limit 0 means no limit (a recording, a result.json); the file must still
// be regular.
func TestReadWithoutLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "result.json")
	os.WriteFile(p, bytes.Repeat([]byte("a"), 3<<20), 0o644)
	got, err := userfile.Read(p, 0, "a result")
	if err != nil || len(got) != 3<<20 {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
}
