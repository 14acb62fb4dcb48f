package env

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Auth is how every connection to Redis authenticates and whether it uses
// TLS: the harness's own (admin, the Redis-truth lane) and the instances'
// through Toxiproxy, which forwards TLS untouched (the instances dial the
// proxy, TLS names the real host). The zero value: no password, no TLS,
// database 0. Its String never shows the password.
type Auth struct {
	// Username is the ACL user; "" is the default user.
	Username string
	// Password is the password (requirepass, or the ACL user's).
	Password string
	// DB is the database number. The lease key and its keyspace
	// notifications live there.
	DB int
	// TLS, when not nil, makes every connection TLS (rediss://).
	TLS *tls.Config
}

// Apply sets a's fields on o and returns o.
func (a Auth) Apply(o *redis.Options) *redis.Options {
	o.Username, o.Password, o.DB = a.Username, a.Password, a.DB
	if a.TLS != nil {
		o.TLSConfig = a.TLS.Clone()
	}
	return o
}

// String describes a without its password: "user alice, password set, db 2, TLS".
func (a Auth) String() string {
	var parts []string
	if a.Username != "" {
		parts = append(parts, "user "+a.Username)
	}
	if a.Password != "" {
		parts = append(parts, "password set")
	}
	if a.DB != 0 {
		parts = append(parts, fmt.Sprintf("db %d", a.DB))
	}
	if a.TLS != nil {
		parts = append(parts, "TLS")
	}
	if len(parts) == 0 {
		return "no auth"
	}
	return strings.Join(parts, ", ")
}

// ParseRedisURL reads go-redis's URL form, redis://[user:password@]host:port[/db]
// or rediss:// (TLS), with go-redis's own parser. Its errors never contain
// the password.
func ParseRedisURL(s string) (addr string, a Auth, err error) {
	o, err := redis.ParseURL(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the whole URL, password included
		}
		msg := err.Error()
		if u, perr := url.Parse(s); perr == nil {
			if p, ok := u.User.Password(); ok && p != "" {
				msg = strings.ReplaceAll(msg, p, "xxxxx")
			}
		}
		return "", Auth{}, fmt.Errorf("redis URL %s: %s (want redis://[user:password@]host:port[/db] or rediss://…)", RedactURL(s), msg)
	}
	return o.Addr, Auth{Username: o.Username, Password: o.Password, DB: o.DB, TLS: o.TLSConfig}, nil
}

// RedactURL is s with its password replaced by "xxxxx", for messages.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.LastIndex(s, "@"); i >= 0 {
			if j := strings.Index(s, "://"); j >= 0 && j < i {
				return s[:j+3] + "xxxxx@" + s[i+1:]
			}
			return "xxxxx@" + s[i+1:]
		}
		return s
	}
	return u.Redacted()
}

// randomPassword is a fresh password for a spawned redis-server, so that
// other local users cannot reach a run's Redis on its loopback port.
func randomPassword() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generating the Redis password: %w", err)
	}
	return hex.EncodeToString(b), nil
}
