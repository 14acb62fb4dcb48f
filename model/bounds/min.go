package bounds

import (
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"
)

// minStale is the stale leadership (a leader believing while Redis holds
// no key of its) that a partition must cause once it catches the leader's
// renewal, whatever the phase: the finding of partition-blackhole and
// partition-one-way, as a promise of the client at hand rather than of
// go-redis's (a client that gives up sooner may show none, and is not
// failed for it).
//
// Blackhole: a renewal sent into the partition leaves the key to expire
// TTL after the previous one, sent at least TTL/2 earlier, and the leader
// believes until the call fails, Cheal at the soonest (healedMin); one
// whose request reached Redis a hop before the partition extended the key
// TTL from its send, and the leader believes Cmid after it (midCallMin).
// Stale ≥ max(0, min(TTL/2 + Cheal - TTL, Cmid - TTL)).
//
// Replies dropped: the renewal applies, extending the key TTL from its
// send, and the call fails Cheal after it at the soonest: stale ≥
// max(0, Cheal - TTL) (a cold script cache applies nothing, which only
// lengthens it).
//
// Safe mode's guard demotes before the key expires: none. A client with
// no read timeout ends its call only at the heal, whenever that falls:
// none is certain.
func minStale(p model.Params, mode string, s model.FaultSize) (time.Duration, string) {
	if p.Guarded() {
		return 0, ""
	}
	ttl := term{sym: "TTL", d: p.TTL}
	switch mode {
	case model.ModePartitionBlackhole:
		heal, _ := healedMin(p, mode, s.Partition)
		mid, _ := midCallMin(p, mode, s.Partition)
		if heal == model.Unbounded || mid == model.Unbounded {
			return 0, "the call has no timeout and ends at the heal, whenever that falls: 0s"
		}
		sent, sf := sum(term{sym: "TTL/2", d: p.TTL - p.TTL/2}, term{sym: "Cheal", d: heal}, ttl.minus())
		reached, rf := sum(term{sym: "Cmid", d: mid}, ttl.minus())
		if reached < sent {
			return reached, "min(sent into the partition: " + sf + "; reached Redis, reply lost: " + rf + ") = " + BoundText(reached)
		}
		return sent, "min(sent into the partition: " + sf + "; reached Redis, reply lost: " + rf + ") = " + BoundText(sent)
	case model.ModePartitionReplies:
		heal, _ := healedMin(p, mode, s.Partition)
		if heal == model.Unbounded {
			return 0, "the call has no timeout and ends at the heal, whenever that falls: 0s"
		}
		return sum(term{sym: "Cheal", d: heal}, ttl.minus())
	}
	return 0, ""
}

// PredictedMin is a "min: predicted" limit (stale_leadership only): the
// largest MinStale of the faults the run applied to a leader, less the
// check's slack (the Redis lane sees an expiry late, which shortens a
// stale window), and how it was derived.
func PredictedMin(e model.Expectation, sc model.Scenario, a analysis.Analysis, preds []Prediction) (time.Duration, string) {
	slack := e.Slack
	if slack == 0 {
		slack = DefaultSlack
	}
	modes := map[string]bool{}
	for _, f := range BoundFaults(a) {
		modes[f.Mode] = true
	}
	var best time.Duration
	how := "no fault applied must cause stale leadership: min 0s"
	for _, p := range preds {
		if modes[p.Mode] && p.MinStale > best {
			best, how = p.MinStale, "the least stale leadership "+p.Mode+" must cause: "+p.MinStaleFormula
		}
	}
	if best == 0 {
		return 0, how
	}
	return max(best-slack, 0), how + " - slack " + slack.String()
}
