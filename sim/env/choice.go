package env

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	tclog "github.com/testcontainers/testcontainers-go/log"
)

// Where a Choice runs Redis and Toxiproxy.
const (
	// ChoiceEmbedded: a spawned redis-server and an in-process Toxiproxy,
	// or the ones a Choice gives (Embedded, or External with proxy
	// ports).
	ChoiceEmbedded = "embedded"
	// ChoiceContainer: both as containers (Containers).
	ChoiceContainer = "container"
)

// Choice is where a run's Redis and Toxiproxy come from as a user chooses
// it: the chaos CLI's --env, --redis-url, --redis-addr, --redis-server,
// --toxiproxy-addr, --proxy-ports and --proxy-upstream map onto it, and a
// Go caller gets the same rules. Validate refuses what cannot mean
// anything; Provider is the Provider it names. The zero value is a spawned
// redis-server and an in-process Toxiproxy.
type Choice struct {
	// Env is ChoiceEmbedded ("" too) or ChoiceContainer, which starts its
	// own Redis and Toxiproxy and so takes none of the fields below.
	Env string
	// RedisURL (go-redis's form, ParseRedisURL) or RedisAddr, not both,
	// is a Redis to use instead of spawning one.
	RedisURL, RedisAddr string
	// RedisServer is the redis-server binary to spawn (Embedded).
	RedisServer string
	// ToxiproxyAddr is a Toxiproxy API to use instead of an in-process one.
	ToxiproxyAddr string
	// ProxyPorts ("21000-21031", ParsePortRange) and ProxyUpstream are for
	// a Toxiproxy in a container (External); either needs a Redis and
	// ToxiproxyAddr.
	ProxyPorts, ProxyUpstream string
	// Getenv, if not nil, reads the variables that stand in for RedisURL
	// and RedisAddr when neither is given: LEASELAB_REDIS_URL, else
	// LEASELAB_REDIS_ADDR with its password in LEASELAB_REDIS_PASSWORD
	// (which RedisAddr takes too). nil: no variables (the CLI passes
	// os.Getenv).
	Getenv func(string) string
	// Logf, if not nil, receives testcontainers-go's messages when
	// containers are used or looked for; nil silences its global logger
	// (its banner).
	Logf func(format string, args ...any)
	// Fallback, if not nil, is called when Provider uses containers
	// because nothing was given, no redis-server is on PATH and a Docker
	// Engine answers.
	Fallback func()
	// Names are how the errors name the fields (the CLI: "--redis-url"
	// for RedisURL); a field missing from it is named as in Go.
	Names map[string]string
}

func (c Choice) name(field string) string {
	if n, ok := c.Names[field]; ok {
		return n
	}
	return field
}

func (c Choice) getenv(k string) string {
	if c.Getenv == nil {
		return ""
	}
	return c.Getenv(k)
}

// Redis is the Redis the choice gives (RedisURL, RedisAddr or, with
// Getenv, their variables) with its auth; "" when none is given.
func (c Choice) Redis() (string, Auth, error) {
	if c.RedisURL != "" && c.RedisAddr != "" {
		return "", Auth{}, fmt.Errorf("give %s or %s, not both", c.name("RedisURL"), c.name("RedisAddr"))
	}
	u := c.RedisURL
	if u == "" && c.RedisAddr == "" {
		u = c.getenv("LEASELAB_REDIS_URL")
	}
	if u != "" {
		return ParseRedisURL(u)
	}
	addr := c.RedisAddr
	if addr == "" {
		addr = c.getenv("LEASELAB_REDIS_ADDR")
	}
	if addr == "" {
		return "", Auth{}, nil
	}
	return addr, Auth{Password: c.getenv("LEASELAB_REDIS_PASSWORD")}, nil
}

// Validate refuses a choice that cannot mean anything: both a URL and an
// address, a URL go-redis cannot read, an Env of neither kind, a
// container environment given a Redis or a Toxiproxy, proxy ports or an
// upstream without a Redis and a Toxiproxy, a port range that is none.
func (c Choice) Validate() error {
	_, err := c.external()
	return err
}

// Provider is the Provider the choice names, after Validate: Containers,
// External (with proxy ports or an upstream), else Embedded. With nothing
// given and no redis-server on PATH, a Docker Engine that answers within
// 5 s makes it Containers (Fallback is told).
func (c Choice) Provider(ctx context.Context) (Provider, error) {
	ext, err := c.external()
	switch {
	case err != nil:
		return nil, err
	case c.Env == ChoiceContainer:
		return c.containers(), nil
	case c.ProxyPorts != "" || c.ProxyUpstream != "": // validated: with a Redis and a Toxiproxy
		return ext, nil
	}
	if ext.RedisAddr == "" && c.RedisServer == "" && c.ToxiproxyAddr == "" {
		if _, err := exec.LookPath("redis-server"); err != nil {
			if c.Logf == nil {
				tclog.SetDefault(tclog.NewNoopLogger()) // its banner
			}
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			derr := DockerAvailable(dctx)
			cancel()
			if derr == nil {
				if c.Fallback != nil {
					c.Fallback()
				}
				return c.containers(), nil
			}
		}
	}
	return Embedded{RedisServer: c.RedisServer, RedisAddr: ext.RedisAddr, RedisAuth: ext.RedisAuth, ToxiproxyAddr: c.ToxiproxyAddr}, nil
}

// external validates c and returns the External it describes (its Redis
// and auth also what Embedded takes).
func (c Choice) external() (External, error) {
	addr, auth, err := c.Redis()
	if err != nil {
		return External{}, err
	}
	switch c.Env {
	case ChoiceContainer:
		if addr != "" || c.ToxiproxyAddr != "" || c.ProxyPorts != "" || c.ProxyUpstream != "" {
			vars := ""
			if c.Getenv != nil {
				vars = " (and LEASELAB_REDIS_ADDR/URL)"
			}
			return External{}, fmt.Errorf("%s container starts its own Redis and Toxiproxy: drop %s/%s%s, %s, %s and %s", c.name("Env"),
				c.name("RedisAddr"), c.name("RedisURL"), vars, c.name("ToxiproxyAddr"), c.name("ProxyPorts"), c.name("ProxyUpstream"))
		}
		return External{}, nil
	case ChoiceEmbedded, "":
	default:
		return External{}, fmt.Errorf("%s: %q is neither %s nor %s", c.name("Env"), c.Env, ChoiceEmbedded, ChoiceContainer)
	}
	ext := External{RedisAddr: addr, RedisAuth: auth, ToxiproxyAddr: c.ToxiproxyAddr, ProxyUpstream: c.ProxyUpstream}
	if c.ProxyPorts == "" && c.ProxyUpstream == "" {
		return ext, nil
	}
	if addr == "" || c.ToxiproxyAddr == "" {
		return External{}, fmt.Errorf("%s and %s are for a Toxiproxy in a container: give %s (or %s) and %s too", c.name("ProxyPorts"), c.name("ProxyUpstream"),
			c.name("RedisAddr"), c.name("RedisURL"), c.name("ToxiproxyAddr"))
	}
	if c.ProxyPorts != "" {
		r, err := ParsePortRange(c.ProxyPorts)
		if err != nil {
			return External{}, fmt.Errorf("%s: %w", c.name("ProxyPorts"), err)
		}
		ext.ProxyPorts = r
	}
	return ext, nil
}

// containers is the container environment, with c's logging.
func (c Choice) containers() Provider {
	if c.Logf == nil {
		tclog.SetDefault(tclog.NewNoopLogger()) // testcontainers-go's banner
	}
	return Containers{Logf: c.Logf}
}

// Explain is an environment error (one wrapping ErrEnvironment) as one
// message: "environment error: " and what failed, without the wrapper's
// own words; with the container environment, what it needs.
func (c Choice) Explain(err error) error {
	msg := strings.TrimPrefix(err.Error(), ErrEnvironment.Error()+": ")
	if c.Env == ChoiceContainer {
		return fmt.Errorf("environment error: %s (the container environment needs a reachable Docker Engine and the images: README.md, Running with Docker)", msg)
	}
	return fmt.Errorf("environment error: %s", msg)
}
