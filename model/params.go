package model

import (
	"time"

	"github.com/leaselab/leaselab/election/timing"
)

// Params are the timing parameters of a run: everything that decides how fast
// leadership moves. The zero value of each field means the default named on
// it (the spec's for the elector, go-redis v9.23.0's for the client); call
// WithDefaults to get the effective values.
type Params struct {
	// Elector timings (election.Opts). Defaults: TTL 5s, Wait 6s, JitterMS 5
	// (negative: none), OpTimeout 0 (none).
	TTL       time.Duration `json:"ttl"`
	Wait      time.Duration `json:"wait"`
	JitterMS  int           `json:"jitter_ms"`
	OpTimeout time.Duration `json:"op_timeout"`
	// Safe turns on the elector's safe mode (election.Opts.Safe): the lease
	// guard demotes a leader SafeMargin before its lease can have run out,
	// and the runner's leader-only chores are fenced by the lease and its
	// token inside Redis. Default false: the spec's behaviour.
	Safe bool `json:"safe,omitempty"`
	// SafeMargin is the guard's margin. Default TTL/100 + 2ms.
	SafeMargin time.Duration `json:"safe_margin,omitempty"`

	// Client holds the go-redis options every instance's client uses.
	Client ClientParams `json:"client"`

	// ChoreInterval is how often the runner's leader-only chores tick
	// (runner mode only). Default 1s.
	ChoreInterval time.Duration `json:"chore_interval"`
}

// ClientParams are the client options that decide how long a call to an
// unreachable Redis takes: go-redis's (Library ""), whose zero values mean
// go-redis's defaults, or another client's as an agent declares it
// (Library names it; see client.go).
type ClientParams struct {
	ReadTimeout  time.Duration `json:"read_timeout"`  // default 5s (go-redis v9.23.0); -1 = none
	WriteTimeout time.Duration `json:"write_timeout"` // default = ReadTimeout
	DialTimeout  time.Duration `json:"dial_timeout"`  // default 5s
	// MaxRetries: 0 = go-redis default (3); -1 = no retries.
	MaxRetries            int  `json:"max_retries"`
	ContextTimeoutEnabled bool `json:"context_timeout_enabled"`
	PoolSize              int  `json:"pool_size"` // default 10 per CPU
	// SharedPool says the elector's client also carries other traffic (the
	// runner's), so a blackholed call can be retried on several pooled
	// connections, each waiting out its ReadTimeout. Run sets it in runner
	// mode; it changes only the predictions.
	SharedPool bool `json:"shared_pool,omitempty"`
	// Cluster says the client is a go-redis ClusterClient (redis: cluster;
	// Scenario.WithDefaults sets it). A failing call then goes through up
	// to MaxRedirects + 1 node clients, each with its own attempts and dial
	// retries, which the model does not bound: partition and slow-reply
	// predictions are unbounded (a reset partition measured 1.64-1.69 s
	// against the single client's 0.68 s bound), so a "predicted" limit on
	// them is unknown rather than wrong. It changes only the predictions.
	Cluster bool `json:"cluster,omitempty"`

	// Library names the client the options describe. "" (or a name that
	// starts with "go-redis") is go-redis v9.23.0, whose mechanics the
	// bounds model in detail: its dial retries, its exponential backoff,
	// a new connection's handshake, a retry that ends at a failed
	// handshake. Any other name is a client described by the fields alone
	// (an agent's declared client, docs/agents.md): ReadTimeout (-1: none)
	// per attempt, MaxRetries (-1: none) for a refused or reset connection
	// and, with RetryOnTimeout, for a timed-out reply, RetryBackoff before
	// each retry, HandshakeRoundTrips on a new connection, and Queues.
	// Scenario files cannot set these: they describe the agent's client.
	Library string `json:"library,omitempty"`
	// RetryOnTimeout (another library): a call whose reply timed out is
	// sent again, as a refused or reset one is.
	RetryOnTimeout bool `json:"retry_on_timeout,omitempty"`
	// RetryBackoff (another library): the longest wait before a retry.
	RetryBackoff time.Duration `json:"retry_backoff,omitempty"`
	// HandshakeRoundTrips (another library): the round trips a new
	// connection makes before its first command (AUTH, HELLO, SELECT,
	// CLIENT SETINFO). 0: go-redis's 3.
	HandshakeRoundTrips int `json:"handshake_round_trips,omitempty"`
	// Queues (another library): a call made while the client is
	// disconnected waits for it to reconnect, however long that takes
	// (node-redis's and ioredis's offline queue), unless a per-operation
	// deadline (OpTimeout with ContextTimeoutEnabled) ends it.
	Queues bool `json:"queues_while_disconnected,omitempty"`
	// ValidityMargin (an agent's declared client, validity_margin_ms): its
	// leader steps down on its own at its lease's validity, the send of
	// its last successful acquire or renewal + TTL - ValidityMargin by its
	// own clock, whether or not the call in flight has returned, and an
	// acquire whose reply comes later is not believed (redsync's Until,
	// with ValidityMargin TTL/100). 0: it believes until a call
	// fails, as the spec's elector does. Unlike safe mode's guard, the
	// call it gave up on runs on and may still land, and nothing says its
	// next acquire takes back a key that still holds its own value: the
	// predictions take the guard's terms where those hold (Params.Guarded)
	// and add the key such a late call leaves, or are unbounded.
	ValidityMargin time.Duration `json:"validity_margin,omitempty"`
}

// Guarded reports whether the leader steps down at its lease's validity
// by its own clock: safe mode's guard, or a declared client's own
// (ClientParams.ValidityMargin).
func (p Params) Guarded() bool { return p.Safe || p.Client.ValidityMargin > 0 }

// GuardMargin is how long before its lease's validity ends a guarded
// leader steps down: safe mode's margin (SafeMargin, default TTL/100 +
// 2ms) or the declared client's ValidityMargin. p should have its
// defaults.
func (p Params) GuardMargin() time.Duration {
	if !p.Safe && p.Client.ValidityMargin > 0 {
		return p.Client.ValidityMargin
	}
	return (timing.Lease{TTL: p.TTL, SafeMargin: p.SafeMargin}).Margin()
}

// Defaults of the spec (runner/election.go in the spec) and of go-redis v9.23.0.
const (
	DefaultTTL           = 5 * time.Second
	DefaultWait          = 6 * time.Second
	DefaultJitterMS      = 5
	DefaultChoreInterval = time.Second

	DefaultReadTimeout = 5 * time.Second // go-redis v9.23.0's default, as measured
	DefaultDialTimeout = 5 * time.Second
	DefaultMaxRetries  = 3
)

// WithDefaults returns p with every zero field replaced by its default.
// JitterMS 0 means the spec's 5; a negative JitterMS means no jitter and
// stays negative, so WithDefaults can be applied twice. Read the jitter with
// Jitter.
func (p Params) WithDefaults() Params {
	if p.JitterMS == 0 {
		p.JitterMS = DefaultJitterMS
	}
	if p.TTL == 0 {
		p.TTL = DefaultTTL
	}
	if p.Wait == 0 {
		p.Wait = DefaultWait
	}
	if p.ChoreInterval == 0 {
		p.ChoreInterval = DefaultChoreInterval
	}
	c := &p.Client
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = c.ReadTimeout
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = DefaultMaxRetries
		if !c.IsGoRedis() {
			c.MaxRetries = -1 // another library's 0 is none, not go-redis's 3
		}
	}
	return p
}

// Jitter is the renewal jitter bound as a duration: 0 when JitterMS is
// negative (none).
func (p Params) Jitter() time.Duration {
	return time.Duration(max(p.JitterMS, 0)) * time.Millisecond
}

// ClaimBounds are the spec's claimed bounds for p: the worst-case gap
// TTL + Wait (ClaimGap) and the split-brain window TTL (ClaimSplitBrain).
// A run's claims are checked against them (with ClaimSlack), a
// prediction's worst case compared with them (Prediction.ExceedsClaims).
func ClaimBounds(p Params) (gap, overlap time.Duration) {
	return p.TTL + p.Wait, p.TTL
}
