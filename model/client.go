package model

import (
	"fmt"
	"strings"
)

// The bounds know one client in detail, go-redis v9.23.0 (model/bounds/bounds.go: its
// dial retries, exponential backoff, a retry's new connection whose
// handshake times out and ends the call). Any other client is known only
// by what its agent declares (ClientParams.Library and the fields after
// it), and the terms here describe such a client generically:
//
//   - a call whose reply never comes waits ReadTimeout (-1: for ever),
//     and is sent again only with RetryOnTimeout, MaxRetries times, each
//     after up to RetryBackoff: C = (retries + 1) × T + retries × backoff;
//   - a refused or reset connection fails at once and is retried
//     MaxRetries times (C = retries × backoff), unless the client queues
//     calls while disconnected (Queues): then it waits for the heal;
//   - a per-operation deadline (OpTimeout with ContextTimeoutEnabled) caps
//     every call;
//   - the heal of a blackhole closes the connections, and the read in
//     flight gets EOF, a connection error, which is retried when retries
//     are left (and then succeeds).

// IsGoRedis reports whether the options describe go-redis (Library "" or
// one naming it), whose mechanics the bounds model in detail.
func (c ClientParams) IsGoRedis() bool {
	return c.Library == "" || strings.HasPrefix(strings.ToLower(c.Library), "go-redis")
}

// Describe names the client and the options that decide a failing call's
// length, for reports: "go-redis v9.23.0 (read timeout 5s, 3 retries)",
// "redis-py 5.0 (read timeout 5s, 1 retry, of a timed-out call too,
// backoff ≤ 10ms)". c should have its defaults (Params.WithDefaults).
func (c ClientParams) Describe() string {
	name := c.Library
	if name == "" {
		name = "go-redis v9.23.0"
	}
	var opts []string
	if c.ReadTimeout < 0 {
		opts = append(opts, "no read timeout")
	} else {
		opts = append(opts, "read timeout "+DurationText(c.ReadTimeout))
	}
	switch r := max(c.MaxRetries, 0); {
	case r == 0:
		opts = append(opts, "no retries")
	case r == 1:
		opts = append(opts, "1 retry")
	default:
		opts = append(opts, fmt.Sprintf("%d retries", r))
	}
	if !c.IsGoRedis() {
		if c.MaxRetries > 0 {
			if c.RetryOnTimeout {
				opts[len(opts)-1] += ", of a timed-out call too"
			} else {
				opts[len(opts)-1] += ", not of a timed-out call"
			}
			opts = append(opts, "backoff ≤ "+DurationText(c.RetryBackoff))
		}
		if c.Queues {
			opts = append(opts, "queues calls while disconnected")
		}
	}
	if c.ContextTimeoutEnabled {
		opts = append(opts, "a per-operation deadline")
	}
	if c.ValidityMargin > 0 {
		opts = append(opts, "steps down at its lease's validity, margin "+DurationText(c.ValidityMargin))
	}
	return name + " (" + strings.Join(opts, ", ") + ")"
}
