package bounds

import (
	"github.com/leaselab/leaselab/model"

	"fmt"
	"time"
)

// clientBackoff is the longest backoff before retry a.
func clientBackoff(c model.ClientParams, a int) time.Duration {
	if c.IsGoRedis() {
		return retryBackoff(a)
	}
	return c.RetryBackoff
}

// clientBackoffs is the longest backoffs before retries 1..n in all.
func clientBackoffs(c model.ClientParams, n int) time.Duration {
	if c.IsGoRedis() {
		return retryBackoffs(n)
	}
	return time.Duration(n) * c.RetryBackoff
}

// handshakeTrips is the round trips a new connection makes before its
// first command.
func handshakeTrips(c model.ClientParams) int {
	if c.IsGoRedis() || c.HandshakeRoundTrips <= 0 {
		return redisInitRoundTrips
	}
	return c.HandshakeRoundTrips
}

// timeoutAttempts is how many times another library sends a call whose
// replies never come: once, and again MaxRetries times if it retries a
// timed-out call.
func timeoutAttempts(c model.ClientParams) int {
	if c.RetryOnTimeout {
		return max(c.MaxRetries, 0) + 1
	}
	return 1
}

// otherCallBound is callBound for another library than go-redis; p has
// its defaults.
func otherCallBound(p model.Params, mode string) (time.Duration, string) {
	c := p.Client
	retries := max(c.MaxRetries, 0)
	var d time.Duration
	var f string
	switch mode {
	case model.ModePartitionBlackhole, model.ModePartitionReplies, model.ModeLatency:
		if c.ReadTimeout < 0 {
			d, f = model.Unbounded, c.Library+" has no read timeout: a dropped reply is awaited until the partition heals = unbounded"
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
	case model.ModePartitionRefuse, model.ModePartitionReset:
		if c.Queues {
			d, f = model.Unbounded, c.Library+" queues a call while it reconnects: it waits until the partition heals = unbounded"
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
func capByDeadline(p model.Params, d time.Duration, f string) (time.Duration, string) {
	if p.Client.ContextTimeoutEnabled && p.OpTimeout > 0 && p.OpTimeout < d {
		d = p.OpTimeout
		f += ", capped by the per-operation deadline = " + BoundText(d)
	}
	return d, f
}

// otherCallMin is callMin for another library than go-redis; p has its
// defaults. Backoffs are left out, as callMin leaves them.
func otherCallMin(p model.Params, mode string) (time.Duration, string) {
	c := p.Client
	switch mode {
	case model.ModePartitionBlackhole, model.ModePartitionReplies:
		if c.ReadTimeout < 0 {
			return capByDeadline(p, model.Unbounded, c.Library+", no read timeout = unbounded")
		}
		n := timeoutAttempts(c)
		d := time.Duration(n) * c.ReadTimeout
		return capByDeadline(p, d, fmt.Sprintf("%s: %d × read timeout = %v", c.Library, n, BoundText(d)))
	case model.ModePartitionRefuse, model.ModePartitionReset:
		return 0, c.Library + ": a refused or reset connection fails at once, and a backoff may be short = 0s"
	}
	return 0, ""
}

// otherHealedMin is healedMin for another library than go-redis: the
// heal's EOF is a connection error, retried while retries are left (and
// the retry finds the healed link), so a call fails at the heal only on
// its last attempt: after every retry timed out (RetryOnTimeout), or at
// its first timeout, which is not retried.
func otherHealedMin(p model.Params, mode string, partition time.Duration) (time.Duration, string) {
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
	Client model.ClientParams `json:"client"`
	// OpTimeout is its deadline on a whole call (Params.OpTimeout); 0:
	// none.
	OpTimeout time.Duration `json:"op_timeout,omitempty"`
}

// Apply returns p with the declared client in place of the scenario's,
// keeping what the run itself decides (SharedPool, Cluster) and what a
// declaration does not say (DialTimeout: a partition's proxy accepts
// connections, so no bound reads it).
func (d DeclaredClient) Apply(p model.Params) model.Params {
	c := d.Client
	c.SharedPool, c.Cluster, c.DialTimeout = p.Client.SharedPool, p.Client.Cluster, p.Client.DialTimeout
	p.Client, p.OpTimeout = c, d.OpTimeout
	return p
}
