package leasemetrics

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
)

// DefaultCallBuckets are the call duration histogram's buckets, in seconds:
// from a loopback round trip to the go-redis default timeouts with retries.
var DefaultCallBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20}

// ElectorOptions configure an Elector collector.
type ElectorOptions struct {
	// Group is the lease's name (election.Opts.Key, runner Options.Group):
	// the "group" label, and the key whose script calls are timed.
	Group string
	// Buckets of the call duration histogram. Default DefaultCallBuckets.
	Buckets []float64
	// Now is the clock of the lease remaining gauge. Default time.Now.
	Now func() time.Time
}

// Elector is a prometheus.Collector of one elector's metrics. Feed it with
// Observe (the elector's OnTransition) and Hook (on the elector's client);
// Wire does both.
type Elector struct {
	key string
	now func() time.Time

	isLeader  prometheus.Gauge
	remaining *prometheus.Desc
	calls     *prometheus.HistogramVec
	elections prometheus.Counter
	demotions *prometheus.CounterVec
	errs      prometheus.Counter

	mu      sync.Mutex
	leading bool
	validTo time.Time // send of the last successful acquire/renew + its TTL
}

// NewElector returns a collector for the elector of o.Group.
func NewElector(o ElectorOptions) (*Elector, error) {
	if o.Group == "" {
		return nil, errors.New("leasemetrics: ElectorOptions.Group is empty")
	}
	if o.Buckets == nil {
		o.Buckets = DefaultCallBuckets
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	l := prometheus.Labels{"group": o.Group}
	m := &Elector{
		key: election.LeaderKey(o.Group),
		now: o.Now,
		isLeader: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "leaselab", Subsystem: "elector", Name: "is_leader",
			Help: "1 while this instance believes it holds the lease (IsLeader), else 0.", ConstLabels: l}),
		remaining: prometheus.NewDesc("leaselab_elector_lease_remaining_seconds",
			"While leading: the send time of the last successful acquire or renew plus the TTL, minus now (what the elector can count on); 0 when not leading.",
			nil, l),
		calls: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "leaselab", Subsystem: "elector", Name: "call_duration_seconds",
			Help: "Duration of the elector's lease script calls, from send to reply, by operation.", ConstLabels: l, Buckets: o.Buckets}, []string{"op"}),
		elections: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "leaselab", Subsystem: "elector", Name: "elections_total",
			Help: "Elections this instance won (promotions).", ConstLabels: l}),
		demotions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "leaselab", Subsystem: "elector", Name: "demotions_total",
			Help: "Demotions, by reason: lost (a renewal found the key not ours), error (a renewal failed), guard (safe mode's lease guard ran out), stop.", ConstLabels: l}, []string{"reason"}),
		errs: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "leaselab", Subsystem: "elector", Name: "errors_total",
			Help: "Errors the elector reported.", ConstLabels: l}),
	}
	// Every label value exists from the start, so a rate() has a zero to
	// start from.
	for _, r := range []election.DemoteReason{election.ReasonLost, election.ReasonError, election.ReasonGuard, election.ReasonStop} {
		m.demotions.WithLabelValues(string(r))
	}
	for _, op := range []election.Op{election.OpAcquire, election.OpRenew, election.OpRelease} {
		m.calls.WithLabelValues(op.String())
	}
	return m, nil
}

// Hooker is a go-redis client that takes hooks (*redis.Client,
// *redis.ClusterClient, redis.UniversalClient).
type Hooker interface{ AddHook(redis.Hook) }

// Wire feeds m from the elector o configures: it chains m.Observe into
// o.OnTransition (after any hook there) and adds m.Hook to rdb, the client
// the elector runs its scripts on. Call it before election.NewElector.
func (m *Elector) Wire(o *election.Opts, rdb Hooker) {
	prev := o.OnTransition
	o.OnTransition = func(t election.Transition) {
		if prev != nil {
			prev(t)
		}
		m.Observe(t)
	}
	rdb.AddHook(m.Hook())
}

// Observe counts one transition. It is an election.Opts.OnTransition hook:
// it never blocks.
func (m *Elector) Observe(t election.Transition) {
	switch t.Kind {
	case election.Promoted:
		m.elections.Inc()
		m.setLeading(true)
	case election.Demoted:
		m.demotions.WithLabelValues(string(t.Reason)).Inc()
		m.setLeading(false)
	case election.Errored:
		m.errs.Inc()
	}
}

func (m *Elector) setLeading(v bool) {
	m.mu.Lock()
	m.leading = v
	m.mu.Unlock()
	if v {
		m.isLeader.Set(1)
	} else {
		m.isLeader.Set(0)
	}
}

// Hook returns the go-redis hook that times the lease scripts of m's group
// (EVALSHA, and EVAL after a NOSCRIPT: the NOSCRIPT reply itself is not
// timed; a retried command is timed once, retries included) and notes the lease's validity after
// each successful acquire or renew. Other commands pass through untouched.
func (m *Elector) Hook() redis.Hook { return hook{m} }

type hook struct{ m *Elector }

func (hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		op, ttl := h.m.leaseCall(cmd.Args())
		if op == election.OpNone {
			return next(ctx, cmd)
		}
		sent := h.m.now()
		err := next(ctx, cmd)
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			return err // the EVAL that follows is the call, and is timed
		}
		h.m.calls.WithLabelValues(op.String()).Observe(h.m.now().Sub(sent).Seconds())
		if c, ok := cmd.(*redis.Cmd); ok && err == nil && op != election.OpRelease {
			if n, ierr := c.Int64(); ierr == nil && n > 0 {
				h.m.mu.Lock()
				h.m.validTo = sent.Add(ttl)
				h.m.mu.Unlock()
			}
		}
		return err
	}
}

// leaseCall tells whether args are a lease script call on m's key, which
// operation, and the TTL it sets.
func (m *Elector) leaseCall(args []any) (election.Op, time.Duration) {
	if len(args) < 5 {
		return election.OpNone, 0
	}
	name, _ := args[0].(string)
	script, _ := args[1].(string)
	var sha string
	switch name {
	case "evalsha", "EVALSHA":
		sha = script
	case "eval", "EVAL":
		sum := sha1.Sum([]byte(script))
		sha = hex.EncodeToString(sum[:])
	default:
		return election.OpNone, 0
	}
	if key, _ := args[3].(string); key != m.key {
		return election.OpNone, 0
	}
	op := election.ScriptOp(sha)
	if op == election.OpNone || op == election.OpRelease {
		return op, 0
	}
	// acquire and renew: KEYS then id, ttl in ms (the last argument).
	ms, err := strconv.ParseInt(toString(args[len(args)-1]), 10, 64)
	if err != nil {
		return election.OpNone, 0
	}
	return op, time.Duration(ms) * time.Millisecond
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	}
	return ""
}

// Describe implements prometheus.Collector.
func (m *Elector) Describe(ch chan<- *prometheus.Desc) {
	m.isLeader.Describe(ch)
	ch <- m.remaining
	m.calls.Describe(ch)
	m.elections.Describe(ch)
	m.demotions.Describe(ch)
	m.errs.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *Elector) Collect(ch chan<- prometheus.Metric) {
	m.isLeader.Collect(ch)
	m.mu.Lock()
	left := 0.0
	if m.leading && !m.validTo.IsZero() {
		left = max(m.validTo.Sub(m.now()).Seconds(), 0)
	}
	m.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(m.remaining, prometheus.GaugeValue, left)
	m.calls.Collect(ch)
	m.elections.Collect(ch)
	m.demotions.Collect(ch)
	m.errs.Collect(ch)
}
