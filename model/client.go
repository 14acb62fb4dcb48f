package model

import (
	"fmt"
	"strings"
	"time"
)

// The bounds know one client in detail, go-redis v9.23.0 (bounds.go: its
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

// clientBackoff is the longest backoff before retry a.
func clientBackoff(c ClientParams, a int) time.Duration {
	if c.IsGoRedis() {
		return retryBackoff(a)
	}
	return c.RetryBackoff
}

// clientBackoffs is the longest backoffs before retries 1..n in all.
func clientBackoffs(c ClientParams, n int) time.Duration {
	if c.IsGoRedis() {
		return retryBackoffs(n)
	}
	return time.Duration(n) * c.RetryBackoff
}

// handshakeTrips is the round trips a new connection makes before its
// first command.
func handshakeTrips(c ClientParams) int {
	if c.IsGoRedis() || c.HandshakeRoundTrips <= 0 {
		return redisInitRoundTrips
	}
	return c.HandshakeRoundTrips
}

// timeoutAttempts is how many times another library sends a call whose
// replies never come: once, and again MaxRetries times if it retries a
// timed-out call.
func timeoutAttempts(c ClientParams) int {
	if c.RetryOnTimeout {
		return max(c.MaxRetries, 0) + 1
	}
	return 1
}

// otherCallBound is callBound for another library than go-redis; p has
// its defaults.
func otherCallBound(p Params, mode string) (time.Duration, string) {
	c := p.Client
	retries := max(c.MaxRetries, 0)
	var d time.Duration
	var f string
	switch mode {
	case ModePartitionBlackhole, ModePartitionReplies, ModeLatency:
		if c.ReadTimeout < 0 {
			d, f = Unbounded, c.Library+" has no read timeout: a dropped reply is awaited until the partition heals = unbounded"
			break
		}
		n := timeoutAttempts(c)
		d = time.Duration(n)*c.ReadTimeout + clientBackoffs(c, n-1)
		if n == 1 {
			f = c.Library + ", a timed-out call not retried: read timeout = " + BoundText(d)
			if retries == 0 {
				f = c.Library + ", no retries: read timeout = " + BoundText(d)
			}
			break
		}
		f = fmt.Sprintf("%s, a timed-out call retried: (retries + 1) × read timeout + retries × backoff = %d × %v + %d × %v = %v",
			c.Library, n, c.ReadTimeout, n-1, c.RetryBackoff, BoundText(d))
	case ModePartitionRefuse, ModePartitionReset:
		if c.Queues {
			d, f = Unbounded, c.Library+" queues a call while it reconnects: it waits until the partition heals = unbounded"
			break
		}
		d = clientBackoffs(c, retries)
		f = fmt.Sprintf("%s: a refused or reset connection fails at once, retried after each backoff: retries × backoff = %d × %v = %v",
			c.Library, retries, c.RetryBackoff, BoundText(d))
		if retries == 0 {
			f = c.Library + ", no retries: a refused or reset connection fails the call at once = 0s"
		}
	default:
		return 0, ""
	}
	return capByDeadline(p, d, f)
}

// capByDeadline caps another library's call at its declared per-operation
// deadline.
func capByDeadline(p Params, d time.Duration, f string) (time.Duration, string) {
	if p.Client.ContextTimeoutEnabled && p.OpTimeout > 0 && p.OpTimeout < d {
		d = p.OpTimeout
		f += ", capped by the per-operation deadline = " + BoundText(d)
	}
	return d, f
}

// otherCallMin is callMin for another library than go-redis; p has its
// defaults. Backoffs are left out, as callMin leaves them.
func otherCallMin(p Params, mode string) (time.Duration, string) {
	c := p.Client
	switch mode {
	case ModePartitionBlackhole, ModePartitionReplies:
		if c.ReadTimeout < 0 {
			return capByDeadline(p, Unbounded, c.Library+", no read timeout = unbounded")
		}
		n := timeoutAttempts(c)
		d := time.Duration(n) * c.ReadTimeout
		return capByDeadline(p, d, fmt.Sprintf("%s: %d × read timeout = %v", c.Library, n, BoundText(d)))
	case ModePartitionRefuse, ModePartitionReset:
		return 0, c.Library + ": a refused or reset connection fails at once, and a backoff may be short = 0s"
	}
	return 0, ""
}

// otherHealedMin is healedMin for another library than go-redis: the
// heal's EOF is a connection error, retried while retries are left (and
// the retry finds the healed link), so a call fails at the heal only on
// its last attempt: after every retry timed out (RetryOnTimeout), or at
// its first timeout, which is not retried.
func otherHealedMin(p Params, mode string, partition time.Duration) (time.Duration, string) {
	c := p.Client
	lo, f := otherCallMin(p, mode)
	if call, _ := otherCallBound(p, mode); !healPossible(p, partition, call) {
		return lo, f + " (the partition outlasts the call: no heal ends it)"
	}
	retries := max(c.MaxRetries, 0)
	switch {
	case retries == 0:
		return 0, c.Library + ", no retries: the heal's EOF ends the call at once = 0s"
	case c.ReadTimeout < 0:
		return lo, f + " (an EOF is retried, and without a read timeout nothing else fails the call)"
	case c.RetryOnTimeout:
		d := time.Duration(retries) * c.ReadTimeout
		d, f = capByDeadline(p, d, fmt.Sprintf("%s: every attempt but the last times out, the heal's EOF ends the last: retries × read timeout = %d × %v = %v",
			c.Library, retries, c.ReadTimeout, BoundText(d)))
		return d, f
	default:
		return capByDeadline(p, c.ReadTimeout, c.Library+": a timed-out call is not retried, an EOF is (and finds the healed link): read timeout = "+BoundText(c.ReadTimeout))
	}
}

// DeclaredClient is the client an agent declared in its hello (process
// backend): the predictions of its run follow it instead of the
// scenario's client options.
type DeclaredClient struct {
	// Client is the declaration as client options (Library names it).
	Client ClientParams `json:"client"`
	// OpTimeout is its deadline on a whole call (Params.OpTimeout); 0:
	// none.
	OpTimeout time.Duration `json:"op_timeout,omitempty"`
}

// Apply returns p with the declared client in place of the scenario's,
// keeping what the run itself decides (SharedPool, Cluster) and what a
// declaration does not say (DialTimeout: a partition's proxy accepts
// connections, so no bound reads it).
func (d DeclaredClient) Apply(p Params) Params {
	c := d.Client
	c.SharedPool, c.Cluster, c.DialTimeout = p.Client.SharedPool, p.Client.Cluster, p.Client.DialTimeout
	p.Client, p.OpTimeout = c, d.OpTimeout
	return p
}

// PredictionOf returns the run's prediction of a failure mode.
func (res *Result) PredictionOf(mode string) (Prediction, bool) {
	for _, p := range res.Predictions {
		if p.Mode == mode {
			return p, true
		}
	}
	return Prediction{}, false
}

// CheckOf returns the evaluation's first check of metric.
func (e Evaluation) CheckOf(metric string) (Check, bool) {
	for _, c := range e.Checks {
		if c.Metric == metric {
			return c, true
		}
	}
	return Check{}, false
}
