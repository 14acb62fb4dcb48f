package env

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// What a Choice refuses, in the words of the names it is given.
func TestChoiceValidate(t *testing.T) {
	names := map[string]string{"Env": "--env", "RedisURL": "--redis-url", "RedisAddr": "--redis-addr",
		"ToxiproxyAddr": "--toxiproxy-addr", "ProxyPorts": "--proxy-ports", "ProxyUpstream": "--proxy-upstream"}
	vars := func(string) string { return "" }
	for _, tc := range []struct {
		c    Choice
		want string // "" valid
	}{
		{Choice{}, ""},
		{Choice{Env: ChoiceContainer}, ""},
		{Choice{RedisAddr: "127.0.0.1:6379", ToxiproxyAddr: "127.0.0.1:8474", ProxyPorts: "21000-21031", ProxyUpstream: "redis:6379"}, ""},
		{Choice{RedisURL: "redis://a:1", RedisAddr: "b:2", Names: names}, "give --redis-url or --redis-addr, not both"},
		{Choice{RedisURL: "redis://a:1", RedisAddr: "b:2"}, "give RedisURL or RedisAddr, not both"},
		{Choice{RedisURL: "http://x"}, "redis"},
		{Choice{Env: "cloud", Names: names}, `--env: "cloud" is neither embedded nor container`},
		{Choice{Env: ChoiceContainer, ToxiproxyAddr: "127.0.0.1:8474", Names: names, Getenv: vars},
			"--env container starts its own Redis and Toxiproxy: drop --redis-addr/--redis-url (and LEASELAB_REDIS_ADDR/URL), --toxiproxy-addr, --proxy-ports and --proxy-upstream"},
		{Choice{Env: ChoiceContainer, RedisAddr: "a:1"}, "Env container starts its own Redis and Toxiproxy: drop RedisAddr/RedisURL, ToxiproxyAddr, ProxyPorts and ProxyUpstream"},
		{Choice{ProxyUpstream: "redis:6379", RedisAddr: "a:1", Names: names},
			"--proxy-ports and --proxy-upstream are for a Toxiproxy in a container: give --redis-addr (or --redis-url) and --toxiproxy-addr too"},
		{Choice{ProxyPorts: "x", RedisAddr: "a:1", ToxiproxyAddr: "b:2", Names: names}, "--proxy-ports: "},
	} {
		err := tc.c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.c, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc.c, err, tc.want)
		}
		if _, perr := tc.c.Provider(context.Background()); (perr == nil) != (err == nil) {
			t.Errorf("%+v: Provider's error %v, Validate's %v", tc.c, perr, err)
		}
	}
}

// The variables stand in for a URL or an address only through Getenv, and
// only when neither is given.
func TestChoiceRedis(t *testing.T) {
	env := map[string]string{"LEASELAB_REDIS_URL": "redis://u:pw@10.0.0.1:6380/2", "LEASELAB_REDIS_ADDR": "10.0.0.2:6379", "LEASELAB_REDIS_PASSWORD": "secret"}
	getenv := func(k string) string { return env[k] }
	for _, tc := range []struct {
		c        Choice
		addr, pw string
		db       int
	}{
		{Choice{}, "", "", 0},
		{Choice{Getenv: getenv}, "10.0.0.1:6380", "pw", 2},
		{Choice{Getenv: getenv, RedisAddr: "127.0.0.1:1"}, "127.0.0.1:1", "secret", 0},
		{Choice{Getenv: getenv, RedisURL: "redis://127.0.0.1:2"}, "127.0.0.1:2", "", 0},
	} {
		addr, auth, err := tc.c.Redis()
		if err != nil || addr != tc.addr || auth.Password != tc.pw || auth.DB != tc.db {
			t.Errorf("%+v: %s %+v %v; want %s, password %q, db %d", tc.c, addr, auth, err, tc.addr, tc.pw, tc.db)
		}
	}
	delete(env, "LEASELAB_REDIS_URL")
	if addr, auth, _ := (Choice{Getenv: getenv}).Redis(); addr != "10.0.0.2:6379" || auth.Password != "secret" {
		t.Errorf("LEASELAB_REDIS_ADDR: %s %+v", addr, auth)
	}
}

// Which Provider a choice names.
func TestChoiceProvider(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		c    Choice
		want Provider
	}{
		{Choice{Env: ChoiceContainer}, Containers{}},
		{Choice{RedisAddr: "a:1", RedisServer: "/x/redis-server", ToxiproxyAddr: "t:2"}, Embedded{RedisServer: "/x/redis-server", RedisAddr: "a:1", ToxiproxyAddr: "t:2"}},
		{Choice{RedisAddr: "a:1", ToxiproxyAddr: "t:2", ProxyPorts: "21000-21001", ProxyUpstream: "redis:6379"},
			External{RedisAddr: "a:1", ToxiproxyAddr: "t:2", ProxyUpstream: "redis:6379", ProxyPorts: PortRange{First: 21000, Last: 21001}}},
	} {
		got, err := tc.c.Provider(ctx)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: %#v %v, want %#v", tc.c, got, err, tc.want)
		}
	}
}

// With nothing given and no redis-server on PATH, the containers when a
// Docker Engine answers (Fallback told), else the embedded environment
// (whose start then says redis-server is missing); a Redis given keeps the
// embedded one.
func TestChoiceFallback(t *testing.T) {
	ctx := context.Background()
	told := 0
	c := Choice{Fallback: func() { told++ }}
	t.Setenv("PATH", t.TempDir())
	docker := DockerAvailable(ctx) == nil
	p, err := c.Provider(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, isContainers := p.(Containers); isContainers != docker || told != map[bool]int{false: 0, true: 1}[docker] {
		t.Errorf("Docker answers: %v; provider %T, fallback told %d times", docker, p, told)
	}
	c.RedisAddr = "127.0.0.1:6379"
	if p, _ := c.Provider(ctx); reflect.TypeOf(p) != reflect.TypeOf(Embedded{}) {
		t.Errorf("a Redis given: %T", p)
	}
}

// An environment error is one message without ErrEnvironment's own words;
// the container environment's says what it needs.
func TestChoiceExplain(t *testing.T) {
	err := fmt.Errorf("%w: redis-server: not found", ErrEnvironment)
	if got := (Choice{}).Explain(err).Error(); got != "environment error: redis-server: not found" {
		t.Errorf("embedded: %q", got)
	}
	got := Choice{Env: ChoiceContainer}.Explain(err).Error()
	if !strings.HasPrefix(got, "environment error: redis-server: not found (the container environment needs a reachable Docker Engine") {
		t.Errorf("container: %q", got)
	}
}
