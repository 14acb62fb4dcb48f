package virtual_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

// boundRepro is a schedule that broke a "predicted" limit before the
// bound modelled its case: metric measured at least atLeast (the case is
// exercised), and every predicted limit must now hold.
type boundRepro struct {
	name, yaml string
	metric     string
	atLeast    time.Duration
}

// boundRepros are the classes of the sound-bounds issue, on the virtual
// backend (sim's real-backend test runs the ones that can be timed).
var boundRepros = []boundRepro{{
	// A partition a hop after a renewal's send: the renewal applies in
	// Redis, its reply is lost, the key outlives the belief by a TTL.
	name: "mid-call partition", metric: "max_gap", atLeast: 9900 * time.Millisecond,
	yaml: `seed: 2
duration: 24s
recovery: 6s
client: {read_timeout: 500ms, write_timeout: 500ms, dial_timeout: 500ms, max_retries: 0}
faults:
  - {at: 7.520025s, for: 14s, kind: partition, mode: blackhole, target: leader}
`}, {
	// The run's first renewal is EVALSHA → NOSCRIPT: lost, so nothing is
	// extended though the replies partition lets requests through.
	name: "cold script cache, replies dropped", metric: "stale_leadership", atLeast: 7500 * time.Millisecond,
	yaml: `duration: 20s
faults:
  - {at: 2s, for: 14s, kind: partition, mode: blackhole-replies, target: leader}
`}, {
	// The same first renewal under 2 s of latency: two round trips.
	name: "cold script cache, latency", metric: "stale_leadership", atLeast: 5400 * time.Millisecond,
	yaml: `duration: 20s
faults:
  - {at: 1s, for: 14s, kind: latency, latency: 2s, direction: both, target: leader}
`}, {
	// The partition heals while the renewal hangs: EOF at once, no retry.
	name: "heal before timeout", metric: "max_gap", atLeast: 5900 * time.Millisecond,
	yaml: `duration: 20s
client: {max_retries: 0}
faults:
  - {at: 4.9219s, for: 1s, kind: partition, mode: blackhole, target: leader}
`}, {
	// The guard abandons a renewal that the replies partition let apply.
	name: "safe mode, replies dropped", metric: "max_gap", atLeast: 8 * time.Second,
	yaml: `seed: 2
duration: 20s
elector: {safe: true}
faults:
  - {at: 5.05s, for: 14s, kind: partition, mode: blackhole-replies, target: leader}
`}, {
	// Jittered latency on the replies only, straddling the read timeout:
	// handshakes get through, SET NX replies time out: phantom leases.
	name: "one-way jittered latency", metric: "max_gap", atLeast: 9500 * time.Millisecond,
	yaml: `seed: 2
duration: 20s
elector: {ttl: 2s, wait: 4.006s, jitter: 200ms}
client: {read_timeout: 200ms, write_timeout: 200ms, max_retries: 1}
faults:
  - {at: 1.602914789s, for: 10.006s, kind: latency, latency: 201ms, jitter: 72ms, direction: replies, target: leader}
`}, {
	// A lossy failover with no renewal in its lag keeps the lease, but the
	// switch cuts the connections, and without retries the next renewal
	// errors: the renewal-error gap.
	name: "lossy failover, lease kept, no retries", metric: "max_gap", atLeast: 3100 * time.Millisecond,
	yaml: `redis: replicated
duration: 20s
elector: {wait: 1.6s}
client: {max_retries: 0}
faults:
  - {at: 0.5s, kind: redis-failover, lag: 1s}
`}, {
	// A wall-clock step does not move time.Since: production's safe-mode
	// guard counts monotonic time, and so does the model now (it counted
	// the jumped wall time, and the guard let the leader believe 6 s too
	// long).
	name: "safe mode, clock jump", metric: "max_gap", atLeast: 0,
	yaml: `duration: 24s
elector: {safe: true}
faults:
  - {at: 2s, for: 20s, kind: latency, latency: 500ms, target: leader}
  - {at: 6s, kind: clock, jump: -6s, target: leader}
`}, {
	// Latency and a pause on the leader at once: the pause delays the
	// renewal, the latency delays the reply before it and the renewal's own
	// 0; the bound took the larger of the two instead of their sum.
	name: "combined latency and pause", metric: "stale_leadership", atLeast: 7700 * time.Millisecond,
	yaml: `duration: 24s
faults:
  - {at: 3s, for: 18s, kind: latency, latency: 1s, target: leader}
  - {at: 6.25s, for: 8s, kind: pause, target: leader}
`}, {
	// A refusal a hop after the send: the renewal applied, then its retries
	// dial a refused port.
	name: "mid-call refusal", metric: "max_gap", atLeast: 9200 * time.Millisecond,
	yaml: `duration: 24s
faults:
  - {at: 7.52601s, for: 14s, kind: partition, mode: refuse, target: leader}
`}}

func TestBoundReprosHold(t *testing.T) {
	for _, r := range boundRepros {
		t.Run(r.name, func(t *testing.T) {
			sc := parseRepro(t, r)
			res := run(t, sc, virtual.Options{})
			checkRepro(t, r, res)
		})
	}
}

// parseRepro reads the repro's scenario, with a "predicted" limit on every
// duration metric a bound covers.
func parseRepro(t *testing.T, r boundRepro) model.Scenario {
	t.Helper()
	y := r.yaml + "expect:\n  max_gap: predicted\n  max_overlap: predicted\n  stale_leadership: predicted\n"
	sc, err := scenarios.Parse(strings.NewReplacer(" ", "-", ",", "").Replace(r.name)+".yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func checkRepro(t *testing.T, r boundRepro, res *model.Result) {
	t.Helper()
	exercised := false
	for _, c := range res.Evaluation.Checks {
		t.Logf("%s", c)
		if c.Verdict != model.Pass {
			t.Errorf("%s", c)
		}
		if c.Metric == r.metric && c.Measured >= r.atLeast {
			exercised = true
		}
	}
	if !exercised {
		t.Errorf("%s never reached %v: the schedule no longer exercises the case", r.metric, r.atLeast)
	}
}
