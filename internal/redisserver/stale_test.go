//go:build unix

package redisserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A temporary directory left by a harness that was killed (SIGKILL, a
// panic) is removed by the next Start; a live harness's, another name's
// and the running server's are kept. The server requires its password.
func TestStartRemovesStaleDirsAndTakesAPassword(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	stale := filepath.Join(tmp, fmt.Sprintf("%s%d-123", tempPrefix, dead.Process.Pid))
	live := filepath.Join(tmp, fmt.Sprintf("%s%d-456", tempPrefix, os.Getppid()))
	other := filepath.Join(tmp, tempPrefix+"old-style")
	for _, d := range []string{stale, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Start(context.Background(), Options{Password: "pw"})
	if err != nil {
		t.Skipf("no redis-server: %v", err)
	}
	defer s.Stop()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead harness's directory is still there: %v", err)
	}
	for _, d := range []string{live, other, s.dir} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if s.Password != "pw" {
		t.Errorf("Password %q", s.Password)
	}
}

// Start says where it looked for redis-server.
func TestStartNotInstalled(t *testing.T) {
	_, err := Start(context.Background(), Options{Path: "/nonexistent/redis-server"})
	if err == nil || err.Error() != "no redis-server at /nonexistent/redis-server: no such file or directory" {
		t.Errorf("explicit path: %v", err)
	}
	t.Setenv("PATH", "")
	_, err = Start(context.Background(), Options{})
	if err == nil || err.Error() != "no redis-server on PATH (install it: `apt-get install redis-server` or `brew install redis`)" {
		t.Errorf("on PATH: %v", err)
	}
}
