package env

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// The spawned redis-server has a random password: a client without it is
// refused, the environment's Auth gets in.
func TestEmbeddedSpawnsWithAPassword(t *testing.T) {
	t.Setenv("LEASELAB_REDIS_ADDR", "")
	t.Setenv("LEASELAB_REDIS_URL", "")
	ctx := context.Background()
	e, err := Embedded{}.Environment(ctx)
	if err != nil {
		t.Skipf("no environment: %v", err)
	}
	defer e.Close()
	if len(e.Auth.Password) < 32 {
		t.Fatalf("password %d characters long; want a random one", len(e.Auth.Password))
	}
	anon := redis.NewClient(&redis.Options{Addr: e.RedisAddr, MaxRetries: -1})
	defer anon.Close()
	if err := anon.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("a client without the password: %v; want NOAUTH", err)
	}
	c := redis.NewClient(e.Auth.Apply(&redis.Options{Addr: e.RedisAddr}))
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("with the environment's Auth: %v", err)
	}
	if s := e.Auth.String(); strings.Contains(s, e.Auth.Password) || s != "password set" {
		t.Errorf("Auth.String() = %q", s)
	}
	// A restart (a redis-restart fault) keeps the password.
	if err := e.RestartRedis(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("after a restart: %v", err)
	}
}

func TestParseRedisURL(t *testing.T) {
	addr, a, err := ParseRedisURL("rediss://alice:pw-123@redis.example:6380/2")
	if err != nil {
		t.Fatal(err)
	}
	if addr != "redis.example:6380" || a.Username != "alice" || a.Password != "pw-123" || a.DB != 2 || a.TLS == nil || a.TLS.ServerName != "redis.example" {
		t.Errorf("got %s %+v", addr, a)
	}
	if s := a.String(); s != "user alice, password set, db 2, TLS" {
		t.Errorf("String() = %q", s)
	}
	for _, bad := range []string{"redis://alice:pw-123@host:notaport", "http://alice:pw-123@host:1", "redis://:pw-123@host:1/notadb"} {
		_, _, err := ParseRedisURL(bad)
		if err == nil {
			t.Errorf("%s: no error", bad)
			continue
		}
		if strings.Contains(err.Error(), "pw-123") {
			t.Errorf("%s: the error shows the password: %v", bad, err)
		}
	}
	if got := RedactURL("redis://alice:pw-123@host:1/0"); got != "redis://alice:xxxxx@host:1/0" {
		t.Errorf("RedactURL = %q", got)
	}
}
