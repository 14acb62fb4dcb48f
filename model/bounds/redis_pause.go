package bounds

import (
	"github.com/leaselab/leaselab/model"

	"fmt"
	"time"
)

// predictRedisPause covers a redis-pause (CLIENT PAUSE WRITE or ALL) of
// length P: every elector script waits at Redis until the pause ends, and
// runs then, in arrival order, if the attempt that sent it still waits for
// its reply (a client whose read timed out closed its connection, and Redis
// drops a disconnected client's blocked command). The key's time runs on:
// it reads as gone when it runs out, and is gone for the scripts that run
// at the end.
//
// Call. Each attempt blocks for one ReadTimeout, then retries on a new
// connection (HELLO is not a write: it answers) after a backoff:
// (MaxRetries + 1) × ReadTimeout + backoffs, or the pause if that is
// shorter.
//
// Overlap. Nobody acquires during the pause. At its end the held scripts
// run one after another: a follower's acquire wins only if the key ran out,
// and then the leader's held renewal fails in the same instant, its reply a
// hop from the winner's. If the leader's renewal is between attempts at the
// end (its backoff), its retry comes at most one backoff and a new
// connection (dial and three handshake round trips) later: overlap ≤
// backoff(MaxRetries) + 5 hops. Without retries, 5 hops.
//
// Stale. The leader's last renewal before the pause lands up to TTL/2 +
// jitter before it: its key runs out TTL/2 - jitter into the pause, and the
// leader believes until its held renewal fails at the end, or its call
// gives up first: stale ≤ min(P, C) - TTL/2 + jitter + hop.
//
// Gap. The leader demotes no sooner than the pause's start; the key lives
// at most TTL from its last renewal before the pause, and nobody acquires
// until the pause ends; after both, a follower's attempt comes within Wait
// + jitter of its last failed call, plus a backoff and a new connection:
// gap ≤ max(P, TTL) + Wait + jitter + backoff + 5 hops. Loose: the
// built-in measures ~0, since followers' acquires wait at Redis too and
// run at the end.
func predictRedisPause(pr *Prediction, p model.Params, pause time.Duration) {
	c := p.Client
	retries := max(c.MaxRetries, 0)
	pr.Call, pr.CallFormula = redisPauseCall(p, pause)
	var b time.Duration
	if retries > 0 {
		b = clientBackoff(c, retries)
	}
	pr.MaxOverlap, pr.OverlapFormula = sum(term{sym: "backoff", d: b}, term{sym: "5 hops", d: 5 * hop})
	// Stale: the leader's last renewal before the pause lands up to TTL/2 +
	// jitter before it, so its key runs out TTL/2 - jitter into it; the
	// leader believes until its held renewal fails at the end (or its
	// call gives up first).
	held := term{sym: "min(P, C)", d: redisPauseHeld(p, pause)}
	if pause <= 0 {
		held = term{sym: "C (P not given)", d: pr.Call}
	}
	pr.MaxStale, pr.StaleFormula = sum(held, term{sym: "TTL/2", d: -p.TTL / 2}, term{sym: "jitter", d: p.Jitter()}, term{sym: "hop", d: hop})
	long := term{sym: "max(P, TTL)", d: max(pause, p.TTL)}
	if pause <= 0 {
		long = term{sym: "TTL (P not given)", d: p.TTL}
	}
	if pause >= model.Unbounded {
		long = term{sym: "P", d: model.Unbounded}
	}
	pr.MaxGap, pr.GapFormula = sum(long, term{sym: "Wait", d: p.Wait}, term{sym: "jitter", d: p.Jitter()},
		term{sym: "backoff", d: b}, term{sym: "5 hops", d: 5 * hop})
	pr.Note = "Redis holds every elector script for P (CLIENT PAUSE) and runs the ones whose client still " +
		"waits at its end, in arrival order; the key's time runs on. The leader believes while its " +
		"renewal waits, past its key (stale leadership up to P - TTL/2 + jitter), and learns at the end; " +
		"a follower's held acquire wins then if the key ran out. Overlap: the leader's retry between " +
		"attempts at the end. Gap: nobody acquires during the pause, nor before the key runs out."
}

// redisPauseCall is how long one call can wait at Redis in a redis-pause
// of length pause (0: not given): each attempt blocks for one ReadTimeout,
// then retries on a new connection after a backoff, (MaxRetries + 1) ×
// ReadTimeout + backoffs; without a read timeout the pause itself.
func redisPauseCall(p model.Params, pause time.Duration) (time.Duration, string) {
	c := p.Client
	rt := c.ReadTimeout
	switch {
	case rt < 0 && pause > 0:
		return pause, "ReadTimeout none: a blocked script is awaited to the pause's end = P"
	case rt < 0:
		return model.Unbounded, "ReadTimeout none: a blocked script is awaited to the pause's end = P"
	case rt == 0:
		rt = model.DefaultReadTimeout
	}
	n := max(c.MaxRetries, 0) + 1
	if !c.IsGoRedis() {
		n = timeoutAttempts(c)
	}
	d := time.Duration(n)*rt + clientBackoffs(c, n-1)
	return d, fmt.Sprintf("(MaxRetries + 1) × ReadTimeout + backoffs = %d × %v + %v = %v", n, rt, clientBackoffs(c, n-1), d)
}

// redisPauseHeld is how long a renewal the pause holds can keep its
// leader believing: until the pause ends or its call gives up,
// min(P, C) (C when P is not given).
func redisPauseHeld(p model.Params, pause time.Duration) time.Duration {
	c, _ := redisPauseCall(p, pause)
	if pause <= 0 {
		return c
	}
	return min(pause, c)
}
