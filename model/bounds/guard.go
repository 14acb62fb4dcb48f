package bounds

import (
	"github.com/leaselab/leaselab/model"
)

// clientGuard adjusts a guarded prediction (safeMode and failoverBound
// have run) for a declared client that steps down at its lease's validity
// on its own
// (ClientParams.ValidityMargin: redsync's Until, for one). Its guard ends
// the leader's belief as safe mode's does, so safeMode's overlap and
// demotion terms hold; what differs is the call it gave up on. Safe mode
// abandons that call (its context ends); such a client lets it run on,
// retries and all, so it may still land and extend the key with no one
// believing in it, a phantom lease, and nothing says the client's next
// acquire takes back a key holding its own value (a plain SET NX does
// not). The key then lives TTL after the landing, and a follower wins
// within Wait of its expiry.
//
// Failing calls (partitions, latency): the renewal is sent at most
// TTL/2 + jitter after the last successful send, the guard demotes
// TTL - margin after it, so at least guardLeft after the renewal's send;
// the call lands at most C after that send (C + L under latency: a
// request already on its way still arrives): gap ≤ C (+ L) + hop + TTL +
// Wait + hop - guardLeft, unless a partition that drops or refuses the
// requests outlasts the call (nothing lands then). Stopped processes, a stopped Redis, clocks and
// failovers: when such a late landing falls is not modelled, so the gap
// and the failover are unbounded, and a check against them unknown, not a
// FAIL the client does not deserve.
func clientGuard(pr *Prediction, p model.Params, s model.FaultSize) {
	const why = "the client's validity guard: "
	switch pr.Mode {
	case model.ModePartitionBlackhole, model.ModePartitionReplies, model.ModePartitionRefuse, model.ModePartitionReset, model.ModeLatency:
		c, cf := callBound(p, pr.Mode)
		if pr.Mode == model.ModePartitionBlackhole || pr.Mode == model.ModePartitionReplies {
			// A heal while it waits can lengthen it (healedCall).
			hc, hf := healedCall(p, s.Partition, c)
			c, cf = hc, cf+hf
		}
		call := term{sym: "C", d: c}
		land := term{sym: "hop", d: hop}
		if pr.Mode == model.ModeLatency {
			land = term{sym: "L", d: s.Latency}
			if s.Latency <= 0 {
				land.d = model.Unbounded
			}
		}
		left := guardLeft(p, s)
		if c != model.Unbounded && c <= left {
			return // the call ends before the guard fires: nothing lands after it
		}
		if pr.Mode != model.ModePartitionReplies && pr.Mode != model.ModeLatency && s.Partition > 0 && !healPossible(p, s.Partition, c) {
			// Its requests are dropped or refused until the heal, which
			// comes after the call has ended: none lands late.
			return
		}
		g, f := sum(call, land, term{sym: "TTL", d: p.TTL}, term{sym: "Wait", d: p.Wait}, term{sym: "hop", d: hop}, term{sym: "(TTL/2 - jitter - margin)/k", d: -left})
		if g > pr.MaxGap {
			pr.MaxGap, pr.GapFormula = g, why+"the renewal it gave up on runs on and may land as late as its call ends (C: "+cf+"), leaving a key no one believes for TTL: "+f
		}
		// From the fault's start: the renewal goes out up to TTL/2 +
		// jitter later, lands up to C (+ L) after that, its key lives TTL,
		// and a follower wins within Wait + jitter of the expiry.
		fo, ff := sum(term{sym: "TTL/2", d: p.TTL - p.TTL/2}, term{sym: "jitter", d: p.Jitter()}, call, land, term{sym: "TTL", d: p.TTL}, term{sym: "Wait", d: p.Wait}, term{sym: "jitter", d: p.Jitter()}, term{sym: "hop", d: hop})
		if fo > pr.MaxFailover {
			pr.MaxFailover, pr.FailoverFormula = fo, why+"the renewal it gave up on may land as late as its call ends, and its key outlives it by TTL: "+ff
		}
		pr.Note += " The client steps down at its lease's validity but lets the call run on: a late landing leaves a key no one believes."
		if pr.MaxGap > pr.MaxFailover {
			pr.MaxFailover, pr.FailoverFormula = pr.MaxGap, "the gap bound: "+BoundText(pr.MaxGap)
		}
	case model.ModePause, model.ModeSuspend, model.ModeClockDrift, model.ModeFailover, model.ModeRedisPause:
		const f = "the client's validity guard: when a renewal it gave up on lands (leaving a key no one believes, which its next acquire may not take back) is not modelled for this fault = unbounded"
		pr.MaxGap, pr.GapFormula = model.Unbounded, f
		pr.MaxFailover, pr.FailoverFormula = model.Unbounded, f
	}
}
