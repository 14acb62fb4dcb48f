package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/internal/redisserver"
	"github.com/leaselab/leaselab/reports"
)

// A Redis that needs a password or an ACL user: --redis-url (or
// LEASELAB_REDIS_URL) authenticates the harness's admin and truth
// connections and the instances' clients through Toxiproxy, and the
// password appears nowhere: not in the output, errors, reports or the
// reproducing command.
func TestRedisAuth(t *testing.T) {
	const pw = "s3cret-pw-4d1b"
	srv, err := redisserver.Start(context.Background(), redisserver.Options{Password: pw})
	if err != nil {
		t.Skipf("no redis-server: %v", err)
	}
	defer srv.Stop()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: pw})
	defer admin.Close()
	if err := admin.Do(context.Background(), "ACL", "SETUSER", "alice", "on", ">al1ce-pw-77", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LEASELAB_REDIS_ADDR", "")
	t.Setenv("LEASELAB_REDIS_URL", "")

	noSecret := func(t *testing.T, where, text string) {
		t.Helper()
		for _, s := range []string{pw, "al1ce-pw-77", "wr0ng-pw"} {
			if strings.Contains(text, s) {
				t.Errorf("%s shows a password:\n%s", where, text)
			}
		}
	}
	check := func(t *testing.T, out string) {
		t.Helper()
		filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(path)
				noSecret(t, path, string(b))
			}
			return nil
		})
	}

	// The default user's password in the URL.
	out := t.TempDir()
	code, stdout, stderr := chaos(t, "run", "testdata/quick.yaml", "--out", out, "--redis-url", "redis://:"+pw+"@"+srv.Addr+"/0", "--quiet")
	if code != exitOK {
		t.Fatalf("--redis-url with a password: exit %d\n%s\n%s", code, stdout, stderr)
	}
	noSecret(t, "output", stdout+stderr)
	check(t, out)

	// An ACL user from the environment, in another database.
	out = t.TempDir()
	t.Setenv("LEASELAB_REDIS_URL", "redis://alice:al1ce-pw-77@"+srv.Addr+"/3")
	code, stdout, stderr = chaos(t, "run", "testdata/quick.yaml", "--out", out, "--quiet")
	if code != exitOK {
		t.Fatalf("LEASELAB_REDIS_URL with an ACL user: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The Redis lane watched database 3's keyspace notifications.
	if res, err := reports.ReadResult(filepath.Join(out, "quick", "latest", "result.json")); err != nil || !res.Analysis.Redis.Observed {
		t.Errorf("the Redis lane saw nothing in database 3 (err %v)", err)
	}
	noSecret(t, "output", stdout+stderr)
	check(t, out)
	t.Setenv("LEASELAB_REDIS_URL", "")

	// A wrong password, no password, a malformed URL: one message each,
	// no password in it.
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--redis-url", "redis://:wr0ng-pw@" + srv.Addr}, exitEnv, "Redis at " + srv.Addr},
		{[]string{"--redis-addr", srv.Addr}, exitEnv, "NOAUTH"},
		{[]string{"--redis-url", "redis://bob:wr0ng-pw@" + srv.Addr + ":notaport"}, exitUsage, "redis URL"},
		{[]string{"--redis-url", "http://x:wr0ng-pw@" + srv.Addr}, exitUsage, "redis URL"},
		{[]string{"--redis-url", "redis://x", "--redis-addr", srv.Addr}, exitUsage, "not both"},
	} {
		code, stdout, stderr := chaos(t, append([]string{"run", "testdata/quick.yaml", "--out", t.TempDir(), "--quiet"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d (want %d), want one line with %q:\n%s", tc.args[1], code, tc.code, tc.want, stderr)
		}
		noSecret(t, "output", stdout+stderr)
	}

	// The password from LEASELAB_REDIS_PASSWORD with --redis-addr.
	t.Setenv("LEASELAB_REDIS_PASSWORD", pw)
	if code, stdout, stderr := chaos(t, "run", "testdata/quick.yaml", "--out", t.TempDir(), "--redis-addr", srv.Addr, "--quiet"); code != exitOK {
		t.Fatalf("LEASELAB_REDIS_PASSWORD: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
