package agent

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Client declares, in the hello, how the agent's Redis client treats a
// call that gets no reply or no connection: how long one attempt waits,
// what it sends again, whether it queues calls while disconnected. The
// harness predicts the bounds a run is judged by from it (a leader's
// renewal that hangs is what decides how long it believes past its lease).
// A hello without one is predicted as go-redis v9.23.0 with the scenario's
// client options (params.client), and the report says so.
//
// docs/agents.md shows how common clients map: go-redis, redis-py,
// node-redis and ioredis, Jedis and Lettuce.
type Client struct {
	// Library names the client library and its version ("redis-py
	// 5.0.1", "node-redis 4.5.1"). Required. A name that starts with
	// "go-redis" is go-redis, whose own mechanics the harness knows (dial
	// retries, exponential backoff, a retry's new connection whose
	// handshake ends the call): RetryBackoffMS, QueuesWhileDisconnected and
	// HandshakeRoundTrips are refused for it, and RetryOnTimeout does not
	// apply (go-redis retries a timed-out call).
	Library string `json:"library"`
	// ReadTimeoutMS is how long one attempt waits for a reply, in
	// milliseconds (may be fractional); 0: for ever (no read, socket or
	// command timeout). Required: a client with no timeout has no bound
	// on how long a leader believes past its lease.
	ReadTimeoutMS *float64 `json:"read_timeout_ms"`
	// Retries is how many times a failed call is sent again: one whose
	// connection was refused, reset or closed, and, with RetryOnTimeout,
	// one whose reply timed out. 0: never.
	Retries int `json:"retries"`
	// RetryOnTimeout: a call whose reply timed out is sent again too.
	RetryOnTimeout bool `json:"retry_on_timeout,omitempty"`
	// RetryBackoffMS is the longest wait before a retry, in milliseconds.
	RetryBackoffMS float64 `json:"retry_backoff_ms,omitempty"`
	// OpTimeoutMS is a deadline on a whole call, its retries included,
	// in milliseconds (a context deadline, an asyncio timeout); 0: none.
	// go-redis honours it only with ContextTimeoutEnabled.
	OpTimeoutMS float64 `json:"op_timeout_ms,omitempty"`
	// ContextTimeoutEnabled (go-redis only): the client's
	// Options.ContextTimeoutEnabled, under which a context deadline cuts a
	// read.
	ContextTimeoutEnabled bool `json:"context_timeout_enabled,omitempty"`
	// PoolSize (go-redis only): the client's Options.PoolSize; 0: go-redis's
	// default.
	PoolSize int `json:"pool_size,omitempty"`
	// QueuesWhileDisconnected: a call made while the client reconnects
	// waits until it is connected again, however long that takes
	// (node-redis's and ioredis's offline queue).
	QueuesWhileDisconnected bool `json:"queues_while_disconnected,omitempty"`
	// HandshakeRoundTrips is how many round trips a new connection makes
	// before its first command (AUTH, HELLO, SELECT, CLIENT SETINFO);
	// 0: 3.
	HandshakeRoundTrips int `json:"handshake_round_trips,omitempty"`
	// ValidityMarginMS, in milliseconds: the agent's leader steps down on
	// its own at its lease's validity, the send of its last successful
	// acquire or renewal + TTL - this margin by its own clock, whether or
	// not the call in flight has returned, and it does not believe an
	// acquire whose reply comes later (a lock library's validity, such as
	// redsync's Mutex.Until: TTL/100). 0: it believes until a call
	// fails, as the spec's elector does. The predictions then take a guard's
	// terms (no split brain while its clock keeps time) and allow for the
	// call it gave up on landing late.
	ValidityMarginMS float64 `json:"validity_margin_ms,omitempty"`
}

// MaxRetries is the most retries a declared client may have.
const MaxRetries = 100

// IsGoRedis reports whether the declared library is go-redis.
func (c Client) IsGoRedis() bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(c.Library)), "go-redis")
}

// ReadTimeout is ReadTimeoutMS as a duration (0: none, or not declared).
func (c Client) ReadTimeout() time.Duration {
	if c.ReadTimeoutMS == nil {
		return 0
	}
	return msDuration(*c.ReadTimeoutMS)
}

func msDuration(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// check returns what is wrong with the declaration, or nil.
func (c Client) check() error {
	var bad []string
	if strings.TrimSpace(c.Library) == "" {
		bad = append(bad, "lacks library (the client's name and version)")
	}
	if c.ReadTimeoutMS == nil {
		bad = append(bad, "lacks read_timeout_ms (0 if the client waits for a reply for ever)")
	} else if *c.ReadTimeoutMS < 0 {
		bad = append(bad, fmt.Sprintf("read_timeout_ms %v is negative (0: no timeout)", *c.ReadTimeoutMS))
	}
	if c.Retries < 0 || c.Retries > MaxRetries {
		bad = append(bad, fmt.Sprintf("retries %d: want 0 (none) to %d", c.Retries, MaxRetries))
	}
	if c.RetryBackoffMS < 0 {
		bad = append(bad, fmt.Sprintf("retry_backoff_ms %v is negative", c.RetryBackoffMS))
	}
	if c.OpTimeoutMS < 0 {
		bad = append(bad, fmt.Sprintf("op_timeout_ms %v is negative (0: none)", c.OpTimeoutMS))
	}
	if c.PoolSize < 0 {
		bad = append(bad, fmt.Sprintf("pool_size %d is negative", c.PoolSize))
	}
	if c.ValidityMarginMS < 0 {
		bad = append(bad, fmt.Sprintf("validity_margin_ms %v: want 0 (no guard) or a positive margin", c.ValidityMarginMS))
	}
	if c.HandshakeRoundTrips < 0 || c.HandshakeRoundTrips > 20 {
		bad = append(bad, fmt.Sprintf("handshake_round_trips %d: want 0 (3) to 20", c.HandshakeRoundTrips))
	}
	if c.IsGoRedis() {
		for _, f := range []struct {
			name string
			set  bool
		}{{"retry_backoff_ms", c.RetryBackoffMS != 0}, {"queues_while_disconnected", c.QueuesWhileDisconnected}, {"handshake_round_trips", c.HandshakeRoundTrips != 0}} {
			if f.set {
				bad = append(bad, f.name+" is go-redis's own, which the harness knows: declare it only for another library")
			}
		}
	} else {
		if c.ContextTimeoutEnabled {
			bad = append(bad, "context_timeout_enabled is go-redis's option: another library's op_timeout_ms is taken to be honoured")
		}
		if c.PoolSize != 0 {
			bad = append(bad, "pool_size is go-redis's option (its dial breaker): declare it only for go-redis")
		}
	}
	if len(bad) > 0 {
		return errors.New("hello's client " + strings.Join(bad, "; "))
	}
	return nil
}

// DefaultGoRedisReadTimeout is go-redis v9's read timeout when its options
// leave it 0, as measured against v9.23.0.
const DefaultGoRedisReadTimeout = 5 * time.Second

// GoRedisClient declares a go-redis client made with o, whose calls the
// elector bounds with opTimeout (election.Opts.OpTimeout; 0: none): its
// library, read timeout and retries as go-redis reads o (0: its
// defaults; -1, and -2 for the read timeout: none).
func GoRedisClient(o *redis.Options, opTimeout time.Duration) *Client {
	rt := o.ReadTimeout
	switch {
	case rt == 0:
		rt = DefaultGoRedisReadTimeout
	case rt < 0:
		rt = 0 // none
	}
	retries := o.MaxRetries
	switch {
	case retries == 0:
		retries = 3
	case retries < 0:
		retries = 0
	}
	ms := float64(rt) / float64(time.Millisecond)
	c := &Client{Library: "go-redis " + redis.Version(), ReadTimeoutMS: &ms, Retries: retries,
		ContextTimeoutEnabled: o.ContextTimeoutEnabled, PoolSize: max(o.PoolSize, 0)}
	if opTimeout > 0 {
		c.OpTimeoutMS = float64(opTimeout) / float64(time.Millisecond)
	}
	return c
}
