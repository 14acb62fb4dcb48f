package bounds

import (
	"github.com/leaselab/leaselab/model"

	"fmt"
	"slices"
	"strings"
	"time"
)

// Modes lists every failure mode in the order Predict returns them.
var Modes = []string{
	model.ModeLeaderCrash, model.ModeRenewError, model.ModePartitionBlackhole, model.ModePartitionRefuse,
	model.ModePartitionReset, model.ModePartitionReplies, model.ModeLatency, model.ModePause, model.ModeSuspend, model.ModeClockDrift, model.ModeLeaseLoss,
	model.ModeGracefulStop, model.ModeFailover, model.ModeRedisPause,
}

// hop is what the bounds allow for a healthy round trip where a renewal
// must land before its key expires: a renewal due exactly at the expiry
// lands a hop late and finds the key gone (measured ~0.1 ms through
// Toxiproxy; the virtual backend models 50 µs each way).
const hop = time.Millisecond

// BoundText writes a bound as formulas, tables and the CLI show it:
// "unbounded" for Unbounded, else the duration as time.Duration prints it
// (exact: a bound is computed, not measured).
func BoundText(d time.Duration) string {
	if d == model.Unbounded {
		return "unbounded"
	}
	return d.String()
}

// go-redis v9.23.0 options that decide retry timing but are not in
// ClientParams; these are its defaults (options.go, internal/pool).
const (
	redisMinRetryBackoff   = 10 * time.Millisecond
	redisMaxRetryBackoff   = time.Second
	redisDialerRetries     = 5
	redisDialerRetryPeriod = 100 * time.Millisecond
	// redisInitRoundTrips is a new connection's handshake: HELLO and CLIENT
	// SETINFO LIB-NAME and LIB-VER.
	redisInitRoundTrips = 3
)

// Prediction is the analytic worst case of one failure mode for one
// parameter set, with the reasoning written out so a reader can check it.
type Prediction struct {
	Mode       string        `json:"mode"`
	MaxGap     time.Duration `json:"max_gap"`
	MaxOverlap time.Duration `json:"max_overlap"`
	// GapFormula and OverlapFormula give the symbols, the numbers
	// substituted and the result, e.g. "TTL + Wait = 5s + 6s = 11s".
	GapFormula     string `json:"gap_formula"`
	OverlapFormula string `json:"overlap_formula"`
	// Call is the worst-case duration of the failing Redis call, for the
	// modes where one decides the timing; CallFormula derives it.
	Call        time.Duration `json:"call,omitempty"`
	CallFormula string        `json:"call_formula,omitempty"`
	// MaxFailover is the worst failover time (the "failover" metric: from
	// the fault's start to the first stable leader after the hit leader's
	// demotion) of one fault of this mode; FailoverFormula derives it.
	// Faults that follow each other compose in FailoverChain.
	MaxFailover     time.Duration `json:"max_failover,omitempty"`
	FailoverFormula string        `json:"failover_formula,omitempty"`
	// MaxStale is the worst stale leadership (a leader believing while
	// Redis holds no key of its) where it exceeds MaxOverlap, which bounds
	// it otherwise (a follower may win as soon as the key is gone); 0:
	// MaxOverlap. StaleFormula derives it.
	MaxStale     time.Duration `json:"max_stale,omitempty"`
	StaleFormula string        `json:"stale_formula,omitempty"`
	// MinStale is the stale leadership a fault of this mode must cause
	// once it catches the leader's renewal, for the client at hand
	// (min.go): the finding "min: predicted" asks for. 0: none is
	// certain. MinStaleFormula derives it.
	MinStale        time.Duration `json:"min_stale,omitempty"`
	MinStaleFormula string        `json:"min_stale_formula,omitempty"`
	Note            string        `json:"note"`
}

// Within reports whether a measured value respects a predicted bound, give
// or take slack for measurement error. Nothing exceeds Unbounded.
func Within(measured, predicted, slack time.Duration) bool {
	if predicted == model.Unbounded || predicted > model.Unbounded-slack {
		return true
	}
	return measured <= predicted+slack
}

// CallBound is the worst-case duration of one elector call to Redis under a
// partition mode (and under latency, where a late reply is waited for no
// longer than a dropped one). Other modes return 0: their calls fail at once
// or do not fail.
//
// The model is go-redis v9.23.0's retry logic (redis.go processWithRetry,
// _process, initConn; error.go shouldRetry; internal/pool dialConn) for the
// leader's renewal, which finds the connection of its last renewal in the
// pool, checked against measurements through the harness's own client, Gate
// and Toxiproxy in TestCallBoundMeasured (sim/callbound_test.go):
//
//   - partition-blackhole: the request vanishes, so each attempt lasts one
//     ReadTimeout. A timed-out command on a pooled connection is retried
//     (after backoff(1)); the retry dials a fresh connection (Toxiproxy
//     accepts it) whose HELLO times out too. HELLO runs through its own
//     single-connection client: its retry sleeps backoff(1), then gets the
//     timeout back from the connection it removed, which is not retried
//     (retryTimeout is off for it), and neither is the command. So
//     min(MaxRetries, 1) + 1 attempts plus two backoff(1): 2 × 300ms +
//     2 × 30ms = 660ms with ReadTimeout 300ms (measured 629-658 ms), 1 ×
//     ReadTimeout with MaxRetries -1. This assumes the pool holds one
//     connection, as a bare elector's does; a pool with idle connections can
//     retry on each of them, up to (MaxRetries + 1) × ReadTimeout. A
//     partition that also drops the TCP handshake would cost DialTimeout per
//     retry instead. Only the first attempt carries the command; the
//     retry stops at HELLO.
//   - partition-replies (blackhole-replies): the same call as a blackhole,
//     though the first attempt's command applies in Redis (and HELLO does).
//     Dropping only the requests is a plain blackhole.
//   - partition-refuse: the proxy closed the pooled connection, which the
//     pool's health check (a MSG_PEEK of the socket when it takes an idle
//     connection) finds closed and drops, so every attempt, the first too,
//     dials a refused port: DialerRetries tries with DialerRetryPeriod
//     between them. MaxRetries + 1 dial rounds plus the backoffs:
//     4 × 400ms + 170ms = 1.77s with defaults (measured 1.69-1.81 s in agent
//     processes and, since the harness's Gate exposes the socket as a plain
//     TCP connection does, in-process), 400ms with MaxRetries -1. A
//     connection go-redis cannot health-check (TLS: a *tls.Conn is no
//     syscall.Conn) takes the EOF at first use instead, one round less.
//   - partition-reset: the proxy accepts and resets at the first byte, so no
//     I/O takes time: it is all backoffs. A reset is a non-timeout net.Error,
//     which v9.23.0 retries. The pooled attempt fails, then each retry's new
//     connection fails in HELLO, whose own retries get the same error back
//     from the connection it removed and retry it MaxRetries times:
//     (MaxRetries + 1) × (backoff(1) + ... + backoff(MaxRetries)) = 4 ×
//     170ms = 680ms with defaults (measured 0.37-0.45 s: 12 backoffs of
//     mean 10 + 10, 10 + 20, 10 + 40 ms).
//
// Refused and reset calls spend their time in sleeps that watch the
// context, so an OpTimeout caps them with or without ContextTimeoutEnabled.
//
// The backoff before retry a is below MinRetryBackoff + MinRetryBackoff<<a,
// capped at MaxRetryBackoff, so the bound uses that. With
// ContextTimeoutEnabled and OpTimeout > 0 the context deadline caps the
// whole call; without ContextTimeoutEnabled a blackholed read ignores it
// and it only stops further retries (go-redis sleeps on the context), which
// the upper bound ignores to stay conservative and callMin, the lower
// bound, takes into account.
func CallBound(p model.Params, mode string) time.Duration {
	d, _ := callBound(p.WithDefaults(), mode)
	return d
}

// CallRange is the shortest and the longest duration of one elector call
// under the mode, with their derivations; p gets its defaults.
func CallRange(p model.Params, mode string) (lo, hi time.Duration, loFormula, hiFormula string) {
	p = p.WithDefaults()
	lo, loFormula = callMin(p, mode)
	hi, hiFormula = callBound(p, mode)
	return lo, hi, loFormula, hiFormula
}

// RetryBackoff is the range of go-redis v9.23.0's backoff before retry a.
func RetryBackoff(a int) (lo, hi time.Duration) {
	return redisMinRetryBackoff, retryBackoff(a)
}

// callBound is CallBound with its derivation; p already has defaults.
func callBound(p model.Params, mode string) (time.Duration, string) {
	c := p.Client
	if !c.IsGoRedis() {
		return otherCallBound(p, mode)
	}
	if c.Cluster && failingCall(mode) {
		return model.Unbounded, "ClusterClient: MaxRedirects + 1 node clients' attempts and dial retries are not modelled = unbounded"
	}
	retries := max(c.MaxRetries, 0) // -1 = none
	var d time.Duration
	var f string
	switch mode {
	case model.ModePartitionBlackhole, model.ModePartitionReplies, model.ModeLatency:
		if c.ReadTimeout < 0 {
			d, f = model.Unbounded, "ReadTimeout none: a dropped reply is awaited forever = unbounded"
			break
		}
		if c.SharedPool {
			// The elector shares the pool with the runner's traffic: each
			// retry can take another pooled connection whose read times out
			// too (go-redis source, not separately measured here).
			// The last attempt may get a new connection instead, whose
			// HELLO times out and sleeps one more backoff(1).
			attempts := retries + 1
			backoff := retryBackoffs(retries)
			if retries > 0 {
				backoff += retryBackoff(1)
			}
			d = time.Duration(attempts)*c.ReadTimeout + backoff
			f = fmt.Sprintf("shared pool: (MaxRetries + 1) × ReadTimeout + backoffs + backoff(1) = %d × %v + %v = %v", attempts, c.ReadTimeout, backoff, d)
			break
		}
		attempts := min(retries, 1) + 1
		d = time.Duration(attempts) * c.ReadTimeout
		f = fmt.Sprintf("(min(MaxRetries, 1) + 1) × ReadTimeout = %d × %v", attempts, c.ReadTimeout)
		if attempts > 1 {
			// The command's retry sleeps backoff(1); so does HELLO's own
			// retry before it fails on the connection it removed.
			d += 2 * retryBackoff(1)
			f = fmt.Sprintf("(min(MaxRetries, 1) + 1) × ReadTimeout + 2 × backoff(1) = %d × %v + 2 × %v", attempts, c.ReadTimeout, retryBackoff(1))
		}
		f += " = " + BoundText(d)
	case model.ModePartitionRefuse:
		// The health check drops the closed pooled connection: the first
		// attempt dials as every retry does.
		dial := (redisDialerRetries - 1) * redisDialerRetryPeriod
		backoff := retryBackoffs(retries)
		d = time.Duration(retries+1)*dial + backoff
		f = fmt.Sprintf("(MaxRetries + 1) × (DialerRetries - 1) × DialerRetryPeriod + backoffs = %d × %v + %v = %v",
			retries+1, dial, backoff, d)
		return capByContext(p, d, f)
	case model.ModePartitionReset:
		if retries == 0 {
			return 0, "MaxRetries none: the reset fails it at once = 0s"
		}
		backoff := retryBackoffs(retries)
		d = time.Duration(retries+1) * backoff
		f = fmt.Sprintf("(MaxRetries + 1) × backoffs = %d × %v = %v", retries+1, backoff, d)
		return capByContext(p, d, f)
	default:
		return 0, ""
	}
	if c.ContextTimeoutEnabled && p.OpTimeout > 0 && p.OpTimeout < d {
		d = p.OpTimeout
		f += fmt.Sprintf(", capped by OpTimeout (ContextTimeoutEnabled) = %v", d)
	}
	return d, f
}

// capByContext caps a refused or reset call at OpTimeout. Such a call
// spends its time in backoff and dial-retry sleeps, which watch the context
// whether or not ContextTimeoutEnabled is set; its I/O fails at once.
func capByContext(p model.Params, d time.Duration, f string) (time.Duration, string) {
	if p.OpTimeout > 0 && p.OpTimeout < d {
		d = p.OpTimeout
		f += fmt.Sprintf(", capped by OpTimeout = %v", d)
	}
	return d, f
}

// retryBackoff is the upper bound of go-redis's backoff before retry a:
// internal.RetryBackoff draws MinRetryBackoff + [0, MinRetryBackoff<<a),
// capped at MaxRetryBackoff. Its lower bound is MinRetryBackoff.
func retryBackoff(a int) time.Duration {
	return min(redisMaxRetryBackoff, redisMinRetryBackoff+redisMinRetryBackoff<<a)
}

// retryBackoffs is the upper bound of the backoffs before retries 1..n.
func retryBackoffs(n int) time.Duration {
	var d time.Duration
	for a := 1; a <= n; a++ {
		d += retryBackoff(a)
	}
	return d
}

// callMin is a lower bound of the failing call's duration (Cmin), with its
// derivation; p already has defaults. Backoffs are left out (each is at
// least MinRetryBackoff, so this stays below the truth).
//
// A blackholed call is the whole call: the pooled attempt waits out its
// ReadTimeout and, with retries, the retry's new connection waits out
// another in HELLO. An OpTimeout ends it sooner only as go-redis lets it:
// with ContextTimeoutEnabled the deadline cuts any read; without, reads
// ignore the context (the first attempt always lasts ReadTimeout), and only
// the backoff sleep before a retry sees it has expired.
func callMin(p model.Params, mode string) (time.Duration, string) {
	c := p.Client
	if !c.IsGoRedis() {
		return otherCallMin(p, mode)
	}
	if c.Cluster && failingCall(mode) {
		return 0, "ClusterClient: not modelled, 0"
	}
	retries := max(c.MaxRetries, 0)
	switch mode {
	case model.ModePartitionBlackhole, model.ModePartitionReplies:
		if c.ReadTimeout < 0 {
			if c.ContextTimeoutEnabled && p.OpTimeout > 0 {
				return p.OpTimeout, "OpTimeout (ContextTimeoutEnabled, ReadTimeout none) = " + BoundText(p.OpTimeout)
			}
			return model.Unbounded, "ReadTimeout none = unbounded"
		}
		attempts := min(retries, 1) + 1
		d := time.Duration(attempts) * c.ReadTimeout
		f := fmt.Sprintf("(min(MaxRetries, 1) + 1) × ReadTimeout = %d × %v = %v", attempts, c.ReadTimeout, d)
		switch {
		case p.OpTimeout <= 0 || p.OpTimeout >= d:
		case c.ContextTimeoutEnabled:
			d = p.OpTimeout
			f += fmt.Sprintf(", capped by OpTimeout (ContextTimeoutEnabled) = %v", d)
		default:
			d = max(c.ReadTimeout, p.OpTimeout)
			f += fmt.Sprintf(", cut at the first backoff after OpTimeout: max(ReadTimeout, OpTimeout) = %v", d)
		}
		return d, f
	case model.ModePartitionRefuse:
		// Every attempt dials (the health check dropped the closed pooled
		// connection). After PoolSize failed dial rounds the pool fails
		// dials at once (its dial breaker); PoolSize 0 is 10 per CPU, at
		// least 10. This assumes no failed rounds left over from an earlier
		// outage.
		pool := c.PoolSize
		if pool <= 0 {
			pool = 10
		}
		rounds := min(retries+1, pool)
		dial := (redisDialerRetries - 1) * redisDialerRetryPeriod
		d := time.Duration(rounds)*dial + time.Duration(retries)*redisMinRetryBackoff
		f := fmt.Sprintf("min(MaxRetries + 1, PoolSize) × (DialerRetries - 1) × DialerRetryPeriod + MaxRetries × MinRetryBackoff = %d × %v + %d × %v = %v",
			rounds, dial, retries, redisMinRetryBackoff, d)
		return capByContext(p, d, f)
	case model.ModePartitionReset:
		if retries == 0 {
			return 0, "MaxRetries none = 0s"
		}
		d := time.Duration((retries+1)*retries) * redisMinRetryBackoff
		f := fmt.Sprintf("(MaxRetries + 1) × MaxRetries × MinRetryBackoff = %d × %d × %v = %v", retries+1, retries, redisMinRetryBackoff, d)
		return capByContext(p, d, f)
	}
	return 0, ""
}

// failingCall reports whether the mode's timing rests on how long a failing
// client call lasts.
func failingCall(mode string) bool {
	switch mode {
	case model.ModePartitionBlackhole, model.ModePartitionReplies, model.ModePartitionRefuse, model.ModePartitionReset, model.ModeLatency:
		return true
	}
	return false
}

// callDeadline is what cuts a whole call, its round trips together (a read
// timeout cuts each alone): the op timeout when go-redis honours it
// (context timeouts), safe mode's guard when that comes first; ok is false
// when nothing does.
func callDeadline(p model.Params, s model.FaultSize) (term, bool) {
	d, ok := term{sym: "T_op", d: p.OpTimeout}, p.Client.ContextTimeoutEnabled && p.OpTimeout > 0
	if p.Safe {
		if left := guardLeft(p, s); !ok || left < d.d {
			d, ok = term{sym: "(TTL/2 - jitter - margin)/k", d: left}, true
		}
	}
	return d, ok
}

// Predict returns the worst-case gap and overlap of every failure mode, in
// the order of Modes.
func Predict(p model.Params, s model.FaultSize) []Prediction {
	out := make([]Prediction, 0, len(Modes))
	for _, m := range Modes {
		pr, _ := PredictMode(p, m, s)
		out = append(out, pr)
	}
	return out
}

// PredictMode predicts one failure mode; ok is false for an unknown mode.
//
// The elector model, from the spec: a follower tries to acquire every Wait;
// a leader renews TTL/2 + jitter (jitter < JitterMS ms; the bound uses
// JitterMS) after its previous renewal returned; a renewal that returns 0 or
// an error demotes at once and the next acquire is Wait later; the key
// expires TTL after the last renewal that reached Redis. "Gap" and "overlap"
// are about believed leadership. Each bound also assumes at least one healthy
// follower, and ignores the ~0.1 ms of a healthy Redis round trip.
func PredictMode(p model.Params, mode string, s model.FaultSize) (Prediction, bool) {
	p = p.WithDefaults()
	ttl, wait := p.TTL, p.Wait
	jitter := p.Jitter()
	half := term{sym: "TTL/2", d: ttl / 2}
	jit := term{sym: "jitter", d: jitter}
	lease := term{sym: "TTL", d: ttl}
	retry := term{sym: "Wait", d: wait}
	renew := ttl/2 + jitter // the longest interval between renewals

	pr := Prediction{Mode: mode}
	noOverlap := func(why string) {
		pr.MaxOverlap, pr.OverlapFormula = 0, "0: "+why
	}
	switch mode {
	case model.ModeLeaderCrash:
		pr.MaxGap, pr.GapFormula = sum(lease, retry)
		noOverlap("a crashed instance stops believing at once")
		pr.Note = "The crash comes just after a renewal; the key lives on for TTL, and the " +
			"follower whose attempt fell just before the expiry tries again Wait later. " +
			"Jitter only delays renewals, so it does not enter."

	case model.ModeRenewError:
		failingRenew(&pr, p, 0, 0)
		pr.Note = "The renewal errors at once and the leader demotes, as early as TTL/2 after its last " +
			"renewal, while its key lives until TTL after it; followers get it at most Wait after expiry."

	case model.ModePartitionBlackhole:
		call, f := callBound(p, mode)
		call, hf := healedCall(p, s.Partition, call)
		pr.Call, pr.CallFormula = call, f+hf
		failingRenew(&pr, p, 0, call)
		heal, hf := healedMin(p, mode, s.Partition)
		mid, mf := midCallMin(p, mode, s.Partition)
		renewGap(&pr, p, s, term{sym: "Cheal", d: heal}, term{sym: "Cmid", d: mid})
		if healPossible(p, s.Partition, call) {
			healedAfterExpiry(&pr, p)
		}
		pr.Note = "The leader's next renewal (TTL/2 + jitter after the last) hangs until the client " +
			"gives up (C), so it believes for TTL/2 + jitter + C, while its key expired TTL after " +
			"the last renewal and a follower may take it right then. Gap: a renewal sent into the " +
			"partition fails no sooner than Cheal (" + hf + "), and its key expires TTL/2 after " +
			"that at most; but a partition that starts a hop after a renewal's send lets that " +
			"renewal reach Redis and drops its reply: the key lives a whole TTL from then while the " +
			"call fails after Cmid (" + mf + "). Either way the latest follower attempt comes Wait " +
			"after the expiry."
		if s.Partition <= 0 {
			pr.Note += " FaultSize.Partition is not given: the bound assumes the partition outlasts the call."
		}

	case model.ModePartitionRefuse:
		call, f := callBound(p, mode)
		pr.Call, pr.CallFormula = call, f
		failingRenew(&pr, p, 0, call)
		mid, mf := refusedMin(p, s.Refusals)
		renewGap(&pr, p, s, term{sym: "0", d: 0}, term{sym: "Cmid", d: mid})
		healedAfterExpiry(&pr, p) // the heal lets a dial retry through
		pr.Note = "The renewal fails after the client's retries (C); if TTL/2 + jitter + C exceeds " +
			"the TTL a follower can win before the leader demotes. Gap: a renewal sent into the " +
			"partition fails at once once the pool's dial breaker is open; one whose request reached " +
			"Redis a hop before the proxy closed its connection extended the key a whole TTL, and " +
			"its retries dial a refused port for Cmid (" + mf + ") at the shortest."

	case model.ModePartitionReset:
		call, f := callBound(p, mode)
		pr.Call, pr.CallFormula = call, f
		failingRenew(&pr, p, 0, call)
		healedAfterExpiry(&pr, p) // the heal lets a retry after a backoff through
		// The demoted leader is a follower too: Wait after its failed
		// renewal it tries again. A reset that healed by then (shorter than
		// Wait) lets that attempt through, and the key, which outlived the
		// demotion by at most TTL - TTL/2, is gone by then if TTL/2 <= Wait.
		if r := s.ResetPartition; r > 0 && r != model.Unbounded && r <= p.Wait && p.TTL-p.TTL/2 <= p.Wait {
			if g, f := sum(term{sym: "Wait", d: p.Wait}, term{sym: "hop", d: hop}); g < pr.MaxGap {
				pr.MaxGap = g
				pr.GapFormula = fmt.Sprintf("the reset heals within Wait (%v <= %v) and TTL/2 <= Wait: the demoted leader's own next attempt wins: %s (else %s)", r, p.Wait, f, pr.GapFormula)
			}
		}
		pr.Note = "The renewal fails after the client's retries (C); if TTL/2 + jitter + C exceeds " +
			"the TTL a follower can win before the leader demotes. The gap case takes the failure as " +
			"instant: a reset's retries are only backoffs. A reset acts on a connection's next use, " +
			"so a request already on its way is answered."

	case model.ModePartitionReplies:
		predictReplies(&pr, p, s)

	case model.ModeLatency:
		predictLatency(&pr, p, s)

	case model.ModePause, model.ModeSuspend:
		if s.Pause <= 0 {
			pr.GapFormula, pr.OverlapFormula = "0: no pause given", "0: no pause given"
			pr.Note = "FaultSize.Pause is 0."
			break
		}
		// Both stop the leader for P, and the worst case is the same: the
		// pause begins as the renewal falls due. A suspended leader's clock
		// stops, so that renewal fires P late whenever in the lease the
		// suspend began; a paused one's runs on, so the renewal fires at
		// resume, P late only in that worst case (earlier in the lease it
		// is less late, and a guard or renewal due meanwhile fires at once
		// on resume).
		paused := term{sym: "P", d: s.Pause}
		if renew+s.Pause+hop <= ttl {
			_, f := sum(half, jit, paused)
			pr.GapFormula = "0: " + f + " <= TTL = " + BoundText(ttl) + ", the late renewal still lands in time"
			pr.OverlapFormula = pr.GapFormula
			break
		}
		pr.MaxOverlap, pr.OverlapFormula = sum(paused, half, jit, lease.minus())
		// The late renewal returns 0 a hop after the resume, past the
		// expiry, and the next attempt comes within Wait of the expiry.
		pr.MaxGap, pr.GapFormula = sum(retry, term{sym: "hop", d: hop})
		// The leader believes until its late renewal returns 0, at least
		// P + TTL/2 - TTL past its key's expiry under a suspend (the
		// renewal is P late wherever the suspend began), P - TTL under a
		// pause (one that began just after a renewal's reply). A follower
		// attempts within Wait of the expiry: one that falls in that
		// window wins before the demotion, so the gap is what is left of
		// the Wait (hop: the round trips; 0: every attempt falls in it).
		window := []term{lease, term{sym: "P", d: -shortestPause(s)}}
		if pr.Mode == model.ModeSuspend {
			window = append(window, half.minus())
		}
		if g, f := sum(append(append([]term{retry}, window...), term{sym: "hop", d: hop})...); g < pr.MaxGap {
			pr.MaxGap = g
			pr.GapFormula = "a follower's attempt within Wait of the expiry wins if it falls before the leader's demotion: " + f
		}
		if pr.Mode == model.ModeSuspend {
			pr.Note = "A suspended leader's clock stops, so its renewal fires TTL/2 + jitter of its own time " +
				"after the last one: P late in real time, wherever in the lease the suspend began. The key " +
				"expired TTL after that renewal and a follower may hold it; the leader acts on its belief " +
				"until the late renewal returns 0. If no follower won yet the renewal finds no key, and the " +
				"gap lasts until the next follower attempt, within Wait. Beliefs count as held while suspended."
		} else {
			pr.Note = "A paused leader's clock runs on (SIGSTOP, a GC), so every timer due during the pause " +
				"fires at once on resume: its renewal is at most P late, when the pause begins as it falls due " +
				"(a pause earlier in the lease delays it less). The key expired TTL after the last renewal and " +
				"a follower may hold it; the leader acts on its belief until the overdue renewal returns 0, a " +
				"round trip after the resume (in safe mode its overdue guard demotes it at the resume). If no " +
				"follower won yet the renewal finds no key, and the gap lasts until the next follower attempt, " +
				"within Wait. Beliefs count as held while paused."
		}

	case model.ModeClockDrift:
		k := s.ClockRate
		if k <= 0 {
			k = 1
		}
		slow := term{sym: "(TTL/2 + jitter)/k", d: time.Duration(float64(renew) / k)}
		slow.num = fmt.Sprintf("(%v + %v)/%g", ttl/2, jitter, k)
		if slow.d+hop <= ttl {
			_, f := sum(slow)
			pr.GapFormula = "0: " + f + " <= TTL = " + BoundText(ttl) + ", renewals keep the key alive"
			pr.OverlapFormula = pr.GapFormula
			pr.Note = "The leader's clock is fast enough for its renewals to beat the TTL."
			break
		}
		pr.MaxOverlap, pr.OverlapFormula = sum(slow, lease.minus())
		pr.MaxGap, pr.GapFormula = sum(retry)
		pr.Note = "A leader whose clock runs at k× real speed renews every (TTL/2 + jitter)/k of real " +
			"time, longer than the TTL: the key expires between renewals, a follower may win at once, " +
			"and the leader learns it only at its next renewal. A slow follower stretches its own Wait " +
			"to Wait/k, which lengthens gaps when every follower is slow."

	case model.ModeLeaseLoss:
		predictLeaseLoss(&pr, p, s.RedisDowntime)

	case model.ModeFailover:
		predictFailover(&pr, p, s)

	case model.ModeRedisPause:
		predictRedisPause(&pr, p, s.RedisPause)

	case model.ModeGracefulStop:
		pr.MaxGap, pr.GapFormula = sum(retry)
		noOverlap("the leader releases its key as it steps down (at most one Redis round trip of overlap)")
		pr.Note = "Release deletes the key; the next follower attempt, within Wait, wins."

	default:
		pr.Note = "unknown failure mode"
		return pr, false
	}
	if p.Guarded() {
		safeMode(&pr, p, s)
	}
	failoverBound(&pr, p, s)
	if !p.Safe && p.Guarded() {
		clientGuard(&pr, p, s) // after failoverBound: it raises both
	}
	if p.Client.Cluster && failingCall(mode) {
		clusterUnbounded(&pr)
	}
	pr.MinStale, pr.MinStaleFormula = minStale(p, mode, s)
	return pr, true
}

// clusterUnbounded: a ClusterClient's failing calls (MaxRedirects + 1 node
// clients' attempts, each with its dial retries, and the slot map's
// reloads) are not modelled, so neither is any metric they feed: the gap
// and the failover as much as the overlap (a blackholed leader under
// redis: cluster failed over in 12.38 s virtual, 14.11 s real, against a
// single-Redis 11 s). Every bound of the mode is unbounded, and a check
// against it unknown.
func clusterUnbounded(pr *Prediction) {
	const f = "ClusterClient: its failing calls (MaxRedirects + 1 node clients' attempts, dial retries, slot reloads) are not modelled = unbounded"
	pr.MaxGap, pr.GapFormula = model.Unbounded, f
	pr.MaxOverlap, pr.OverlapFormula = model.Unbounded, f
	pr.MaxStale, pr.StaleFormula = model.Unbounded, f
	pr.MaxFailover, pr.FailoverFormula = model.Unbounded, f
}

// StoppedAcquire is what a pause or suspend of length stop on an instance
// that was not leading adds to the gap and failover bounds of a leader's
// fault in force with it: a follower stopped between its SET NX landing and
// the reply holds the key without believing. The gap the leader's fault
// leaves runs on until the stopped follower resumes and believes (stop + a
// hop) or, if it cannot believe (safe mode abandons an acquire that
// outlasted its deadline, TTL - margin), until the key it set expired and
// the next attempt came: TTL + Wait. A follower that resumes too late for
// its first renewal (stop + TTL/2 + jitter past the landing, beyond the
// TTL) believes a key gone: that belief ends in a second gap, up to
// TTL/2 + Wait - stop after it, and delays a stable leader by the belief
// (stop + TTL/2 + jitter), or by the key it held (TTL + Wait + jitter).
// extra adds to the leader's gap bound, alone bounds a gap by itself
// (0: none), and failover adds to the failover bound.
func StoppedAcquire(p model.Params, stop time.Duration) (extra, alone, failover time.Duration, formula string) {
	p = p.WithDefaults()
	margin := p.GuardMargin()
	held := p.TTL + p.Wait
	if p.Guarded() && stop >= p.TTL-margin {
		// The acquire's deadline passed: abandoned, never believed.
		f := fmt.Sprintf("a follower stopped %v mid-acquire (a guarded acquire is not believed past TTL - margin = %v) holds the key unbelieved: + TTL + Wait + hop = %v", stop, p.TTL-margin, held+hop)
		return held + hop, 0, held + p.Jitter(), f
	}
	extra = min(stop, held) + hop
	if stop <= p.TTL-p.TTL/2-p.Jitter()-hop {
		return extra, 0, stop + hop, fmt.Sprintf("a follower stopped %v mid-acquire holds the key unbelieved until it resumes: + min(P_f, TTL + Wait) + hop = %v", stop, extra)
	}
	alone = max(0, p.TTL/2+p.Wait-stop) + 2*hop
	failover = model.Unbounded
	if stop != model.Unbounded {
		failover = max(held+p.Jitter(), stop+p.TTL/2+p.Jitter()+2*hop)
	}
	return extra, alone, failover, fmt.Sprintf("a follower stopped %v mid-acquire holds the key unbelieved until it resumes: + min(P_f, TTL + Wait) + hop = %v; its first renewal, P_f + TTL/2 + jitter after the landing, finds the key gone (a second gap of up to TTL/2 + Wait - P_f = %v; the failover waits for that belief's end or the key's: + max(TTL + Wait + jitter, P_f + TTL/2 + jitter) = %v)", stop, extra, alone, failover)
}

// shortPause is the pause safe mode's guard term takes: the longest that
// hit a leader and lasted no longer than ttl (FaultSize.PauseShortMax),
// else the only one when it is that short.
func shortPause(s model.FaultSize, ttl time.Duration) time.Duration {
	if s.PauseShortMax > 0 {
		return s.PauseShortMax
	}
	if s.Pause <= ttl {
		return s.Pause
	}
	return 0
}

// shortestPause is the pause the gap bounds take: the shortest of several
// (FaultSize.PauseMin), else the only one.
func shortestPause(s model.FaultSize) time.Duration {
	if s.PauseMin > 0 {
		return min(s.PauseMin, s.Pause)
	}
	return s.Pause
}

// safeMode adjusts a spec-mode prediction for the elector's safe mode
// (Params.Safe). The lease guard demotes the leader at the send time of its
// last successful acquire or renewal + TTL − margin, by its own clock, and
// abandons a call still in flight then; the key, set when that call reached
// Redis, lives at least TTL after the send. So wherever the leader's clock
// keeps time, a leader whose calls hang, fail or crawl stops believing
// before its key can expire: no believed overlap. The gap can grow by the
// margin (and the one-way latency that delayed the key). A paused process
// or a clock slower than 1 − margin/TTL defeats the guard (it counts on
// that clock), and a key lost behind the leader's back is not its doing:
// there the spec's overlap stands, and only the fence (chores refused
// unless the caller holds the lease and its token) keeps the stale
// leader's writes out.
func safeMode(pr *Prediction, p model.Params, s model.FaultSize) {
	margin := p.GuardMargin()
	who := "safe mode"
	if !p.Safe {
		who = "the client's validity guard"
	}
	switch pr.Mode {
	case model.ModeRenewError, model.ModePartitionBlackhole, model.ModePartitionReplies, model.ModePartitionRefuse, model.ModePartitionReset, model.ModeLatency:
		if pr.MaxOverlap > 0 {
			pr.MaxOverlap = 0
			pr.OverlapFormula = fmt.Sprintf("0: "+who+": the guard demotes the leader at its last successful send + TTL - margin = + %v - %v, before its key expires (TTL after that send reached Redis); was %s",
				p.TTL, margin, pr.OverlapFormula)
		}
		terms := []term{{sym: "margin", d: margin}}
		why := who + ": the guard demotes up to the margin before the key expires, then a follower within Wait: "
		if pr.Mode == model.ModeLatency && s.Latency > 0 {
			// The slow instance's own next acquire may land first: it is
			// believed only when its reply comes back, a round trip after.
			rtt := s.LatencyRTT
			if rtt <= 0 {
				rtt = 2 * s.Latency
			}
			terms = append(terms, term{sym: "min(R, T)", d: min(rtt, model.AttemptTimeout(p))})
			why = who + ": the guard demotes up to the margin before the key expires; the next winner, possibly the slow instance itself, is believed up to Wait + a round trip later: "
			// A renewal the guard abandons still lands, up to L after its
			// send, TTL/2 + jitter after the last successful one: its key
			// outlives the guard by TTL/2 + jitter + margin + L.
			if left := guardLeft(p, s); 2*min(rtt, model.AttemptTimeout(p)) > left {
				g, f := sum(term{sym: "TTL", d: p.TTL}, term{sym: "L", d: s.Latency}, term{sym: "Wait", d: p.Wait}, term{sym: "(TTL/2 - jitter - margin)/k", d: -left})
				if g > pr.MaxGap {
					pr.MaxGap, pr.GapFormula = g, who+": the guard abandons a renewal that still lands up to L later: "+f
				}
			}
		}
		terms = append(terms, term{sym: "Wait", d: p.Wait})
		if g, f := sum(terms...); g > pr.MaxGap {
			pr.MaxGap, pr.GapFormula = g, why+f
		}
		if pr.Mode == model.ModeLatency {
			if g, f, ok := safeAcquirePhantom(p, s, 1); ok && g > pr.MaxGap {
				pr.MaxGap, pr.GapFormula = g, f
			}
		}
		pr.Note += " " + strings.ToUpper(who[:1]) + who[1:] + ": the lease guard ends the leader's belief before its key can expire, as long as its clock keeps time."
	case model.ModePause, model.ModeSuspend, model.ModeClockDrift, model.ModeLeaseLoss, model.ModeFailover:
		if renew, short := p.TTL/2+p.Jitter(), shortPause(s, p.TTL); pr.Mode == model.ModePause && short > 0 && short <= p.TTL && renew+short > p.TTL-margin {
			// The guard is a timer too: a pause that ends past it (the
			// last send + TTL - margin) demotes the leader at the resume,
			// before its key expires when the pause is shorter than the
			// TTL, where the spec's late renewal would still land (its gap
			// 0). The demoted leader tries again Wait later and wins: the
			// key is gone by then, or still its own (safe mode's acquire
			// takes it back), unless a follower won first. Found by chaos
			// explore (pause-safe in elector mode, 2.45 s: 6.0001 s of a
			// 0 s bound).
			if g, f := sum(term{sym: "Wait", d: p.Wait}, term{sym: "hop", d: hop}); g > pr.MaxGap {
				pr.MaxGap, pr.GapFormula = g, "safe mode: a resume past the guard demotes the leader before its key expires; its own next attempt, Wait later, finds the key gone: "+f
			}
		}
		if pr.Mode == model.ModeClockDrift && s.ClockRateMax > 1 {
			// A fast clock fires the guard (TTL - margin)/k after the send,
			// while the key lives TTL after it.
			g, f := sum(term{sym: "TTL", d: p.TTL}, term{sym: "Wait", d: p.Wait}, term{sym: "(TTL - margin)/k", d: -time.Duration(float64(p.TTL-margin) / s.ClockRateMax)})
			if g > pr.MaxGap {
				pr.MaxGap, pr.GapFormula = g, who+", a fast clock fires the guard early: "+f
			}
		}
		if pr.MaxOverlap == 0 || !p.Safe {
			break
		}
		pr.Note += " Safe mode does not shorten this overlap: the guard counts on the leader's own clock (stopped by a suspend, slow under drift beyond 1 - margin/TTL), a paused leader's guard cannot fire before the resume (it shortens the overlap only by the renewal's round trip), and a lost key is not the leader's doing. The fence still refuses the stale leader's chores: no stale write lands."
	}
}

// healedMin is the shortest failing call under a partition that drops
// replies (blackhole, blackhole-replies) and may heal while the call waits:
// removing the timeout toxic closes the connections it held, so the read
// in flight gets EOF at once, which go-redis retries like any network
// error (the retry then finds a healthy link):
//
//   - MaxRetries none: the heal's EOF fails the call however soon after
//     its send: 0;
//   - MaxRetries 1: a failing call needs the pooled attempt to time out
//     (T), and the heal's EOF on the retry's HELLO then ends it: T;
//   - more retries: an EOF on HELLO is retried too, so only HELLO's own
//     timeout fails the call: Cmin, the whole call without its backoffs.
func healedMin(p model.Params, mode string, partition time.Duration) (time.Duration, string) {
	if !p.Client.IsGoRedis() {
		return otherHealedMin(p, mode, partition)
	}
	lo, f := callMin(p, mode)
	if call, _ := callBound(p, mode); !healPossible(p, partition, call) {
		return lo, f + " (the partition outlasts the call: no heal ends it)"
	}
	switch max(p.Client.MaxRetries, 0) {
	case 0:
		return 0, "MaxRetries none: the heal's EOF ends the call at once = 0s"
	case 1:
		t := min(model.AttemptTimeout(p), lo)
		return t, "MaxRetries 1: the pooled attempt times out, then the heal's EOF on the retry's HELLO ends it: T = " + BoundText(t)
	}
	return lo, f
}

// midCallMin is the shortest failing call whose request reached Redis
// just before a partition that drops the replies began. Without retries it
// is one attempt, cut by the heal when the partition is shorter; with
// retries, healedMin.
func midCallMin(p model.Params, mode string, partition time.Duration) (time.Duration, string) {
	if p.Client.MaxRetries > 0 {
		return healedMin(p, mode, partition)
	}
	t := model.AttemptTimeout(p)
	if partition > 0 && partition < t {
		return partition, "MaxRetries none: the partition heals before the attempt's timeout, and its EOF ends the call: partition = " + BoundText(partition)
	}
	return t, "MaxRetries none: one attempt's timeout T = " + BoundText(t)
}

// refusedMin is the shortest failing renewal whose request reached Redis
// just before a refuse partition closed its connection: the EOF is
// retried, and every retry dials a refused port, DialerRetries tries
// DialerRetryPeriod apart, until PoolSize failed rounds trip the pool's
// dial breaker. A pool that kept failed rounds from an earlier refusal
// (refusals > 1) may trip it after one round.
func refusedMin(p model.Params, refusals int) (time.Duration, string) {
	retries := max(p.Client.MaxRetries, 0)
	if retries == 0 {
		return 0, "MaxRetries none: the EOF fails it at once = 0s"
	}
	if !p.Client.IsGoRedis() {
		return otherCallMin(p, model.ModePartitionRefuse)
	}
	dial := (redisDialerRetries - 1) * redisDialerRetryPeriod
	if refusals > 1 {
		d, f := capByContext(p, dial, "one dial round, the breaker may keep failed rounds of an earlier refusal: (DialerRetries - 1) × DialerRetryPeriod = "+BoundText(dial))
		return d, f
	}
	// The call's own connection was in use, not idle, so no health check
	// saw it close: the first attempt takes the EOF, only the retries dial.
	pool := p.Client.PoolSize
	if pool <= 0 {
		pool = 10
	}
	rounds := min(retries, pool)
	d := time.Duration(rounds)*dial + time.Duration(retries)*redisMinRetryBackoff
	f := fmt.Sprintf("min(MaxRetries, PoolSize) × (DialerRetries - 1) × DialerRetryPeriod + MaxRetries × MinRetryBackoff = %d × %v + %d × %v = %v",
		rounds, dial, retries, redisMinRetryBackoff, d)
	return capByContext(p, d, f)
}

// guardLeft is how long after a renewal's send the safe-mode guard may
// abandon it at the latest renewal: TTL/2 - jitter - margin by the
// leader's clock, less in real time when that clock runs fast (k > 1).
//
// Safe mode renews TTL/2 + jitter after the last renewal's send. A client
// guard (ClientParams.ValidityMargin) may keep the spec's cadence, TTL/2 +
// jitter after the last reply, so its renewal goes out up to that call's
// round trip later: a hop, or under latency min(R, T), comes off too.
func guardLeft(p model.Params, s model.FaultSize) time.Duration {
	left := p.TTL/2 - p.Jitter() - p.GuardMargin()
	if !p.Safe && p.Guarded() {
		r := hop
		if s.Latency > 0 {
			rtt := s.LatencyRTT
			if rtt <= 0 {
				rtt = 2 * s.Latency
			}
			r = min(rtt, model.AttemptTimeout(p))
		}
		left -= r
	}
	if s.ClockRateMax > 1 {
		left = time.Duration(float64(left) / s.ClockRateMax)
	}
	return max(left, 0)
}

// healPossible reports whether a partition of length partition can heal
// while a call it caught still waits: the first renewal it catches is sent
// within TTL/2 + jitter of its start and waits up to call. 0: not given,
// and the partition is taken to outlast the call.
func healPossible(p model.Params, partition, call time.Duration) bool {
	return partition > 0 && (call == model.Unbounded || partition < p.TTL/2+p.Jitter()+call)
}

// healedCall is the longest call under a partition that drops replies when
// the partition may heal while it waits: with two or more retries, the
// heal's EOF on the retry's HELLO is retried after backoff(2), where
// HELLO's own timeout would have slept backoff(1), and the next attempt
// finds a healthy link (a round trip the bounds leave out).
func healedCall(p model.Params, partition, call time.Duration) (time.Duration, string) {
	if call == model.Unbounded || !p.Client.IsGoRedis() || max(p.Client.MaxRetries, 0) < 2 || !healPossible(p, partition, call) {
		return call, ""
	}
	extra := retryBackoff(2) - retryBackoff(1)
	return call + extra, fmt.Sprintf("; a heal's EOF on the retry's HELLO is retried after backoff(2): + %v = %v", extra, call+extra)
}

// healedAfterExpiry raises the gap to Wait where a heal can end a call that
// outlasted the key (the overlap case): its retry then reaches Redis and
// returns 0, so the leader demotes just after the expiry, and the next
// follower attempt comes within Wait of it. Safe mode's guard demotes
// before the expiry instead.
func healedAfterExpiry(pr *Prediction, p model.Params) {
	if p.Guarded() || pr.MaxOverlap <= 0 || pr.MaxGap >= p.Wait {
		return
	}
	pr.MaxGap = p.Wait
	pr.GapFormula = "Wait = " + BoundText(p.Wait) + ": a heal can end a call that outlasted the key, whose retry then returns 0 just after the expiry; a follower attempt comes within Wait of it (else " + pr.GapFormula + ")"
}

// renewGap fills the gap of a failing renewal that may or may not have
// reached Redis. Not applied: the key expires TTL after the previous
// renewal, and the leader demotes no sooner than TTL/2 + lo after it.
// Applied (its request reached Redis, its reply was lost): the key expires
// TTL after this renewal, and the leader demotes no sooner than mid after
// it; in safe mode no later than its guard, TTL - margin after the
// previous send, i.e. TTL/2 - jitter - margin after this one at the
// latest renewal. Either way a follower attempt comes within Wait of the
// expiry.
func renewGap(pr *Prediction, p model.Params, s model.FaultSize, lo, mid term) {
	half, wait := term{sym: "TTL/2", d: p.TTL - p.TTL/2}, term{sym: "Wait", d: p.Wait}
	sent, sf := sum(half, wait, lo.minus())
	if lo.d == 0 {
		sent, sf = sum(half, wait)
	}
	if p.Guarded() {
		if left := guardLeft(p, s); left < mid.d {
			mid = term{sym: "(TTL/2 - jitter - margin)/k", d: left}
		}
	}
	applied, af := sum(term{sym: "TTL", d: p.TTL}, wait, mid.minus())
	if mid.d == 0 {
		applied, af = sum(term{sym: "TTL", d: p.TTL}, wait)
	}
	pr.MaxGap = max(sent, applied)
	pr.GapFormula = "max(sent into the fault: " + sf + "; reached Redis, reply lost: " + af + ") = " + BoundText(pr.MaxGap)
}

// failingRenew fills the prediction for a renewal that fails after between
// lo and hi: the leader believes until TTL/2 + jitter + hi after its last
// renewal, which reached Redis, so its key expired at TTL (overlap); it may
// demote as early as TTL/2 + lo, and the latest follower attempt comes Wait
// after expiry (gap).
func failingRenew(pr *Prediction, p model.Params, lo, hi time.Duration) {
	ttl := p.TTL
	terms := []term{{sym: "TTL/2", d: ttl / 2}, {sym: "jitter", d: p.Jitter()}}
	if hi > 0 {
		terms = append(terms, term{sym: "C", d: hi})
	}
	pr.MaxOverlap, pr.OverlapFormula = sum(append(terms, term{sym: "TTL", d: -ttl})...)
	gap := []term{{sym: "TTL/2", d: ttl - ttl/2}, {sym: "Wait", d: p.Wait}}
	if lo > 0 {
		gap = append(gap, term{sym: "Cmin", d: -lo})
	}
	pr.MaxGap, pr.GapFormula = sum(gap...)
}

// predictLeaseLoss covers a Redis restart: Redis is unreachable for D, then
// comes back empty, so the key (and the script cache) is gone.
//
// Overlap. A renewal sent after Redis is back finds the pooled connection
// closed (the proxy closed it when Redis went). The pool's health check
// usually sees that and dials a new one; where the close is not yet seen,
// the renewal fails at once with EOF, and its retry, after backoff(1),
// returns 0 on a new connection. Counting that slower case, the leader believes until
// TTL/2 + jitter + backoff(1) after its last renewal, which came before
// the restart, while a follower may win as soon as Redis is back. In truth
// that overlap is D shorter, but D is measured from above, so the bound does
// not subtract it. A renewal sent while Redis is down retries like a reset
// (the proxy accepts, then closes as it cannot reach Redis) and ends at most
// C after it began, so at most C after Redis is back. Without retries the
// first EOF demotes at once.
//
// Gap. The leader believes until at least the restart. Acquires fail while
// Redis is down, and a follower tries again Wait after its attempt failed;
// a failed attempt ends after its last refused try, before Redis is back,
// plus the backoffs of HELLO's own retries: backoff(1) + ... +
// backoff(MaxRetries). So some follower attempt comes within
// D + Wait + backoffs of the restart.
func predictLeaseLoss(pr *Prediction, p model.Params, downtime time.Duration) {
	call, f := callBound(p, model.ModePartitionReset)
	pr.Call, pr.CallFormula = call, "Redis down behind the proxy, which accepts then closes, as a reset: "+f
	leaseLoss(pr, p, term{sym: "D", d: downtime})
	pr.Note = "Redis is down for D, then back empty: the key vanishes behind the leader's back. A " +
		"follower may win as soon as Redis is back, and the leader learns it at its next renewal, at " +
		"most TTL/2 + jitter after its last one, plus the retry that replaces the connection the " +
		"restart closed (backoff(1)); a renewal caught by the downtime retries like a reset and ends " +
		"within C. Nobody can acquire while Redis is down, and a follower whose attempt failed tries " +
		"again Wait after it, HELLO's retry backoffs after its last refused try: a gap of up to " +
		"D + Wait + backoffs."
	if downtime <= 0 {
		pr.Note += " FaultSize.RedisDowntime is not given: the gap bound takes the restart as instant."
	}
}

// leaseLoss fills the gap and overlap of a key lost behind the leader's
// back (see predictLeaseLoss), given the call the loss may catch (pr.Call:
// 0 when none fails) and down, the stretch in which nobody could acquire
// (left out when 0).
func leaseLoss(pr *Prediction, p model.Params, down term) {
	call := pr.Call
	retries := max(p.Client.MaxRetries, 0)
	half, jit := term{sym: "TTL/2", d: p.TTL / 2}, term{sym: "jitter", d: p.Jitter()}
	late := []term{half, jit}
	if retries > 0 {
		late = append(late, term{sym: "backoff(1)", d: clientBackoff(p.Client, 1)})
	}
	var syms, nums []string
	var renew time.Duration
	for _, t := range late {
		syms, nums, renew = append(syms, t.sym), append(nums, BoundText(t.d)), renew+t.d
	}
	pr.MaxOverlap = max(renew, call)
	pr.OverlapFormula = fmt.Sprintf("max(%s, C) = max(%s, %s) = %s",
		strings.Join(syms, " + "), strings.Join(nums, " + "), BoundText(call), BoundText(pr.MaxOverlap))

	var gap []term
	if down.d > 0 {
		gap = append(gap, down)
	}
	gap = append(gap, term{sym: "Wait", d: p.Wait})
	if retries > 0 {
		gap = append(gap, term{sym: "backoffs", d: clientBackoffs(p.Client, retries)})
	}
	pr.MaxGap, pr.GapFormula = sum(gap...)
}

// predictFailover covers a replica promoted in place of the node that
// serves the lease. A is the failover's span: the lag (the replica applied
// nothing while the primary took writes) plus the switch S (until the
// instances reach the new primary).
//
// Clean (lag 0): the replica has every write, so the key carries the expiry
// of the last renewal, at most TTL/2 + jitter old at the start. A renewal
// sent meanwhile is held, then cut off (or redirected) at the switch and
// retried there after backoff(1): the lease survives while A + backoff(1)
// < TTL/2 - jitter. That needs retries: without them the renewal errors
// and the leader demotes, as on a renewal error.
//
// Lossy (lag > 0): a renewal that falls in the lag is lost, so the new
// primary's key keeps the previous renewal's expiry, which comes due
// 2 × jitter before the renewal after the lost one (two intervals of
// TTL/2 + jitter exceed the TTL): the lease is lost however short the lag,
// unless no renewal falls in it, and for A ≥ TTL/2 + jitter one always
// does. The key vanishes behind the leader's back, as in a Redis restart
// whose downtime is the switch S (the primary served every write during
// the lag).
func predictFailover(pr *Prediction, p model.Params, s model.FaultSize) {
	a, lag, sw := s.Failover, s.FailoverLag, s.FailoverSwitch
	if sw <= 0 {
		sw = max(a-lag, 0)
	}
	alive := p.TTL/2 - p.Jitter()
	retry := time.Duration(0)
	if p.Client.MaxRetries >= 0 {
		retry = clientBackoff(p.Client, 1)
	}
	if lag == 0 && a > 0 && a+retry < alive {
		if p.Client.MaxRetries < 0 {
			failingRenew(pr, p, 0, 0)
			pr.Note = "Clean failover (A = " + BoundText(a) + "), but the client has no retries: a renewal caught by " +
				"the switch errors, the leader demotes, and its key lives until TTL after its last renewal, as on a renewal error."
			return
		}
		f := "0: clean, A + backoff(1) = " + BoundText(a) + " + " + BoundText(retry) + " < TTL/2 - jitter = " + BoundText(alive) +
			": the promoted replica has the lease, and the renewal the switch caught is retried there in time"
		pr.GapFormula, pr.OverlapFormula = f, f
		pr.Note = "A clean failover (the replica has every write) that completes within TTL/2 - jitter of the " +
			"last renewal keeps the lease."
		return
	}
	if p.Client.Cluster {
		// The old primary answers MOVED and the client follows it: no call
		// fails at the switch.
		pr.CallFormula = "ClusterClient: the old primary answers MOVED, the call is redirected: no call fails"
	} else {
		call, f := callBound(p, model.ModePartitionReset)
		pr.Call, pr.CallFormula = call, "the switch cuts the connections; a call caught by it retries as on a reset: "+f
	}
	leaseLoss(pr, p, term{sym: "S", d: sw})
	if !p.Client.Cluster && p.Client.MaxRetries < 0 {
		// The lease may survive the switch (no renewal fell in the lag),
		// but the switch cut the connections: a renewal in flight at the
		// switch (or one on a connection whose close the pool's health
		// check has not yet seen) fails with EOF and is not retried, so the
		// leader demotes TTL/2 after its last renewal while its key lives
		// on, as on a renewal error.
		g, f := sum(term{sym: "TTL/2", d: p.TTL - p.TTL/2}, term{sym: "Wait", d: p.Wait})
		if g > pr.MaxGap {
			pr.MaxGap, pr.GapFormula = g, "lease kept, but the switch cut the connections and the next renewal's EOF is not retried (MaxRetries none), as on a renewal error: "+f+"; lease lost: "+pr.GapFormula
		}
	}
	why := "lossy (lag " + BoundText(lag) + "): a renewal that falls in the lag is lost, and the key then expires 2 × jitter before the next one"
	switch {
	case a <= 0:
		why = "the failover's span A is not given"
	case lag == 0:
		why = "clean, but A + backoff(1) = " + BoundText(a+retry) + " >= TTL/2 - jitter = " + BoundText(alive) + ": the held renewal comes too late"
	}
	pr.Note = "The lease may be lost (" + why + "): the key vanishes behind the leader's back. A follower may win at " +
		"once; the leader learns it at its next renewal, at most TTL/2 + jitter after its last one (plus backoff(1) when the " +
		"switch cut its connection); a follower attempt comes within S + Wait + backoffs of the switch."
}

// predictReplies covers a partition that drops only the replies: requests
// reach Redis and apply, the caller sees timeouts. The renewal sent at t0
// (TTL/2 + jitter after the last) extends the key to t0 + TTL, yet the
// leader demotes at t0 + C at the latest: it believes past that key's
// expiry only if the call outlasts a whole TTL, and the key outlives its
// belief by TTL minus the call, then a follower attempt comes within Wait.
// The call is shortest when the partition heals while it waits (the read
// gets EOF, Cheal: healedMin), so the gap is TTL + Wait - Cheal. The
// retry's new connection stops at HELLO, so only the first attempt's
// renewal applies.
//
// Unless the script cache is cold (FaultSize.ColdRenewal): the first
// renewal of a run, and the first after a SCRIPT FLUSH, a restart or a
// failover, is an EVALSHA that Redis answers NOSCRIPT, which never comes
// back, so go-redis never sends the EVAL and nothing is extended: the key
// expires TTL after the previous renewal, as in a blackhole, and the
// overlap is TTL/2 + jitter + C - TTL.
//
// The demoted leader is a follower behind the same partition, and Wait
// after its renewal failed (no sooner than Cmin + Wait into the partition)
// it tries to acquire. A bare elector's client has no initialized
// connection left by then (go-redis removed both that timed out), and a new
// one's HELLO times out before SET NX is written: nothing applies
// (TestCallBoundMeasured checks it). With a shared pool, an idle pooled
// connection carries the SET NX to Redis: if the key is free it applies,
// while the caller sees a timeout (Machine: acquire error, stay follower):
// a phantom lease nobody believes, blocking every follower for a TTL, again
// on each attempt that finds an idle connection and a free key while the
// partition lasts. Once healed, the last phantom expires within TTL and a
// follower attempt comes within Wait: the gap is bounded only by the
// partition's length, partition + TTL + Wait - T.
//
// With a shared pool the renewal's retries also run on other pooled
// connections and apply again, each extending the key further; that only
// shrinks the overlap, and the call still ends at least one attempt
// timeout T after the last renewal that applied (or at the heal's EOF
// without retries), so the gap uses min(T, Cheal), not Cmin.
func predictReplies(pr *Prediction, p model.Params, s model.FaultSize) {
	partition := s.ReplyPartition
	call, f := callBound(p, model.ModePartitionReplies)
	call, hcf := healedCall(p, s.Partition, call)
	f += hcf
	lo, lf := callMin(p, model.ModePartitionReplies)
	heal, hf := healedMin(p, model.ModePartitionReplies, s.Partition)
	pr.Call, pr.CallFormula = call, f
	lease, retry := term{sym: "TTL", d: p.TTL}, term{sym: "Wait", d: p.Wait}
	if s.ColdRenewal || s.ColdAfterLateReply {
		pr.MaxOverlap, pr.OverlapFormula = sum(term{sym: "TTL/2", d: p.TTL / 2}, term{sym: "jitter", d: p.Jitter()}, term{sym: "C", d: call}, lease.minus())
		pr.OverlapFormula = "cold script cache (EVALSHA's NOSCRIPT is lost, nothing extended): " + pr.OverlapFormula
	} else {
		pr.MaxOverlap, pr.OverlapFormula = sum(term{sym: "C", d: call}, lease.minus())
		pr.OverlapFormula = "the renewal applies, extending the key TTL from its send: " + pr.OverlapFormula
	}
	shared := p.Client.SharedPool
	cmin := term{sym: "Cheal", d: heal}
	if shared {
		cmin = term{sym: "min(T, Cheal)", d: min(model.AttemptTimeout(p), heal)}
	}
	renewGap(pr, p, s, cmin, cmin)
	if healPossible(p, s.Partition, call) {
		healedAfterExpiry(pr, p)
	}
	phantom := shared && partition > 0 && lo < model.Unbounded-p.Wait && (partition == model.Unbounded || partition > lo+p.Wait)
	if phantom {
		g, gf := sum(term{sym: "partition", d: partition}, lease, retry, term{sym: "T", d: -model.AttemptTimeout(p)})
		if g > pr.MaxGap {
			pr.MaxGap, pr.GapFormula = g, "phantom leases: "+gf
		}
	}
	pr.Note = "Requests reach Redis and apply; replies are lost. The leader's renewal, sent TTL/2 + " +
		"jitter after the last, extends its key TTL from then, while the call times out after C " +
		"(Cmin at the shortest: " + lf + "; Cheal if the partition heals while it waits: " + hf + ") and the leader demotes: " +
		"the key outlives the leader's belief, then a follower attempt comes within Wait. With a cold " +
		"script cache (the run's first renewal, the first after a flush, restart or failover) the " +
		"EVALSHA's NOSCRIPT is lost instead: nothing is extended, and the leader believes TTL/2 + " +
		"jitter + C after its key's last extension. "
	switch {
	case !shared:
		pr.Note += "The demoted leader's own acquires through the partition cannot apply: its client " +
			"has no initialized connection left, and a new one's HELLO times out before SET NX is sent: no phantom lease."
	case phantom:
		pr.Note += "Shared pool: the partition outlasts Cmin + Wait, so the demoted leader's acquire " +
			"can reach Redis over an idle pooled connection and apply unseen when the key is free: a " +
			"phantom lease nobody believes, possibly again while the partition lasts, so the gap is " +
			"bounded by the partition's length plus TTL + Wait. Retries on pooled connections apply " +
			"the renewal again; the call still ends T after the last one applied."
	case partition > 0:
		pr.Note += "Shared pool: the partition ends before the demoted leader's next acquire " +
			"(Cmin + Wait in), so none of its acquires applies unseen (no phantom lease). Retries on " +
			"pooled connections apply the renewal again; the call still ends T after the last one applied."
	default:
		pr.Note += "Shared pool, hazard not covered: if the partition outlasts Cmin + Wait, the demoted " +
			"leader's acquire can reach Redis over an idle pooled connection and apply unseen (a " +
			"phantom lease nobody believes), and the gap grows to partition + TTL + Wait - T; give " +
			"FaultSize.ReplyPartition. Retries on pooled connections apply the renewal again; the call " +
			"still ends T after the last one applied."
	}
}

// latencyCall is the longest failing call under latency whose round trips
// take minRTT to rtt longer. When every one times out it is a blackhole's
// (callBound). When some come back in time, a retry's new connection can
// complete its handshake (HELLO and two CLIENT SETINFO, each a round trip
// under T) before its command times out, so each retry costs up to three
// round trips of T plus one attempt timeout: T + MaxRetries × (4 × T) +
// backoffs.
func latencyCall(p model.Params, rtt, minRTT time.Duration) (time.Duration, string) {
	t := model.AttemptTimeout(p)
	retries := max(p.Client.MaxRetries, 0)
	if minRTT >= t || retries == 0 || t == model.Unbounded || (!p.Client.IsGoRedis() && !p.Client.RetryOnTimeout) {
		return callBound(p, model.ModeLatency)
	}
	h := handshakeTrips(p.Client)
	per := time.Duration(h)*min(rtt, t) + t
	d := t + time.Duration(retries)*per + clientBackoffs(p.Client, retries)
	f := fmt.Sprintf("some round trips come back: each retry's handshake completes, then its command times out: T + MaxRetries × (%d × min(R, T) + T) + backoffs = %v + %d × %v + %v = %v",
		h, t, retries, per, clientBackoffs(p.Client, retries), d)
	if p.Client.ContextTimeoutEnabled && p.OpTimeout > 0 && p.OpTimeout < d {
		d = p.OpTimeout
		f += fmt.Sprintf(", capped by OpTimeout (ContextTimeoutEnabled) = %v", d)
	}
	return d, f
}

// predictLatency covers a leader whose Redis messages are delayed: up to L
// each way, adding a round trip of R (RTT, at most 2L) and at least Rmin
// (LatencyMinRTT), against the attempt timeout T. The next renewal is
// scheduled when the previous one returns (the spec's state diagram goes
// renew → Leader → renew), so the key, set when a renewal lands, has TTL/2
// + jitter + that renewal's reply delay (up to L, and up to L even for a
// renewal sent before the latency began: its reply left Redis after) until
// the next renewal is sent.
//
// Overlap. While round trips come back within T (Rmin < T), the next
// renewal's 0 comes back a round trip after its send: TTL/2 + jitter + L +
// R - TTL (3L both ways). A cold script cache (the run's first renewal, the
// first after a flush, restart or failover: FaultSize.ColdRenewal) costs
// EVALSHA → NOSCRIPT → EVAL, two round trips: TTL/2 + jitter + 2R - TTL,
// plus L if the reply before was late too (ColdAfterLateReply). When they time out (R ≥ T), the call
// lasts C as in a blackhole: TTL/2 + jitter + L + C - TTL.
//
// Gap. If some round trips come back, the next winner may be the slow
// instance itself, whose SET NX landed before a healthy follower's attempt
// (within Wait of the expiry), believed when its reply arrives: Wait + L. If some time out, the last timed-out request
// still lands up to L after its send, L - T after the leader gave up,
// extending the key it no longer acts on: TTL + Wait + L - T. If both can
// happen (jitter, or one direction only), a new connection's handshake can
// get through while a SET NX's reply then times out: the demoted slow
// instance's acquire applies unseen, a phantom lease nobody believes, again
// at each of its attempts while the latency lasts (D): D + L + TTL + Wait.
// A cold renewal whose EVALSHA is answered and whose two round trips outlast
// a deadline on the whole call (R < T, 2R ≥ the deadline) sends its EVAL up
// to R after the call began, and that lands up to L later while the leader
// gives up at the deadline: TTL + Wait + R + L - the deadline.
func predictLatency(pr *Prediction, p model.Params, s model.FaultSize) {
	l := s.Latency
	if l <= 0 {
		pr.GapFormula, pr.OverlapFormula = "0: no latency given", "0: no latency given"
		pr.Note = "FaultSize.Latency is 0."
		return
	}
	rtt, minRTT := s.LatencyRTT, s.LatencyMinRTT
	if rtt <= 0 {
		rtt, minRTT = 2*l, 2*l
	}
	minRTT = min(minRTT, rtt)
	t := model.AttemptTimeout(p)
	half, jit, lease, retry := term{sym: "TTL/2", d: p.TTL / 2}, term{sym: "jitter", d: p.Jitter()}, term{sym: "TTL", d: p.TTL}, term{sym: "Wait", d: p.Wait}
	late := term{sym: "L", d: min(l, t)}
	if l > t {
		late.sym = "T"
	}
	answered, timedOut := minRTT < t, rtt >= t
	cut := term{sym: "T", d: t}
	if p.Guarded() {
		// The guard abandons the renewal TTL/2 - jitter - margin after
		// its send at the latest.
		if left := guardLeft(p, s); left < t {
			cut = term{sym: "(TTL/2 - jitter - margin)/k", d: left}
		}
	}
	var overlaps, gaps []string
	if answered {
		r := min(rtt, t)
		rsym := "R"
		if rtt >= t {
			rsym = "T"
		}
		// Warm: the reply before was up to L late, the renewal's 0 one
		// round trip after its send. Cold: two round trips (EVALSHA,
		// NOSCRIPT, EVAL), after a late reply only if the latency was in
		// force when that key was set.
		terms, why := []term{half, jit, late, {sym: rsym, d: r}}, "answered: "
		switch {
		case s.ColdAfterLateReply:
			terms, why = []term{half, jit, late, {sym: "2 × " + rsym, d: 2 * r}}, "answered, cold script cache after a late reply: "
		case s.ColdRenewal && r > late.d:
			terms, why = []term{half, jit, {sym: "2 × " + rsym, d: 2 * r}}, "answered, cold script cache: "
		}
		o, f := sum(append(terms, lease.minus())...)
		if !s.ColdRenewal && !s.ColdAfterLateReply && p.TTL/2+p.Jitter()+r+hop <= p.TTL {
			// The key can lapse only if a renewal lands after it: the
			// reply before it (late by its share of R) and its own request
			// (the rest) take at most R on top of TTL/2 + jitter.
			o, f = 0, fmt.Sprintf("0: TTL/2 + jitter + R + hop = %v <= TTL = %v: every renewal lands before the expiry (else %s)", p.TTL/2+p.Jitter()+r+hop, p.TTL, f)
		}
		pr.MaxOverlap = max(pr.MaxOverlap, o)
		overlaps = append(overlaps, why+f)
		if o > 0 { // the key can expire between renewals
			// The winner, possibly the slow instance whose SET NX landed
			// before a healthy follower's attempt, within Wait of the
			// expiry, is believed when its reply arrives, up to L later.
			g, gf := sum(retry, late)
			pr.MaxGap = max(pr.MaxGap, g)
			gaps = append(gaps, "answered, the slow instance may win, believed a late reply after: "+gf)
		} else {
			gaps = append(gaps, "0: answered, and every renewal lands before the expiry")
		}
		if call, ok := callDeadline(p, s); ok && (s.ColdRenewal || s.ColdAfterLateReply) && rtt < t && 2*rtt >= call.d {
			// A cold renewal's EVALSHA is answered (NOSCRIPT) and its EVAL,
			// sent up to R after the call began, lands up to L after that,
			// extending the key, while the call's own deadline cuts it:
			// the leader gave up on a key that lasts TTL from then (a
			// flush, then 792 ms latency under a 3 s deadline: a gap of
			// 9.27 s against the answered case's 6.79 s). A read timeout
			// alone times each round trip, not the call.
			g, gf := sum(lease, retry, term{sym: "R", d: rtt}, term{sym: "L", d: l}, call.minus())
			pr.MaxGap = max(pr.MaxGap, g)
			gaps = append(gaps, "cold, timed out after NOSCRIPT, the EVAL lands late: "+gf)
		}
	}
	if timedOut {
		call, f := latencyCall(p, rtt, minRTT)
		pr.Call, pr.CallFormula = call, f
		o, of := sum(half, jit, late, term{sym: "C", d: call}, lease.minus())
		pr.MaxOverlap = max(pr.MaxOverlap, o)
		overlaps = append(overlaps, "timed out: "+of)
		g, gf := sum(lease, retry, term{sym: "L", d: l}, cut.minus())
		pr.MaxGap = max(pr.MaxGap, g)
		gaps = append(gaps, "timed out, the last request lands late: "+gf)
	}
	if answered && timedOut {
		d := term{sym: "D", d: s.LatencyFor}
		if s.LatencyFor <= 0 {
			d.d = model.Unbounded
		}
		g, gf := sum(d, term{sym: "L", d: l}, lease, retry)
		pr.MaxGap = max(pr.MaxGap, g)
		gaps = append(gaps, "phantom leases while the latency lasts: "+gf)
	}
	pr.OverlapFormula = "max(" + strings.Join(overlaps, "; ") + ") = " + BoundText(pr.MaxOverlap)
	pr.GapFormula = "max(" + strings.Join(gaps, "; ") + ") = " + BoundText(pr.MaxGap)
	if len(overlaps) == 1 {
		pr.OverlapFormula = overlaps[0]
	}
	if len(gaps) == 1 {
		pr.GapFormula = gaps[0]
	}
	pr.Note = fmt.Sprintf("Round trips take %v to %v longer against the attempt timeout T = %v. ", minRTT, rtt, t) +
		"The key was last set when a renewal landed; the leader learned it up to L later and renews TTL/2 + " +
		"jitter after that. "
	switch {
	case answered && timedOut:
		pr.Note += "Some round trips come back in time and some do not, so both cases apply, and a handshake " +
			"that gets through before a SET NX that times out leaves phantom leases (the SET NX applies " +
			"unseen) while the latency lasts (D)."
		if s.LatencyFor <= 0 {
			pr.Note += " FaultSize.LatencyFor is not given: unbounded."
		}
	case answered:
		pr.Note += "Replies come back within T: a renewal that lands after the expiry returns 0 up to two " +
			"round trips after its send (a cold script cache: EVALSHA, NOSCRIPT, EVAL). The next winner may " +
			"be the slow instance, believed a round trip after its SET NX."
	default:
		pr.Note += "Every attempt times out like a blackhole (C), yet the requests still reach Redis up to " +
			"L after they were sent: the last can extend the key L - T after the leader gave up, a phantom " +
			"lease that nobody acts on, then a follower attempt within Wait. A new connection's handshake " +
			"never completes, so the demoted instance's own acquires never apply."
	}
}

// term is one symbol of a formula with its value; num overrides how the
// value is written when the symbol stands for an expression.
type term struct {
	sym string
	d   time.Duration
	num string
}

func (t term) minus() term { return term{t.sym, -t.d, t.num} }

// sum adds terms (saturating at Unbounded) and writes
// "symbols = numbers = result". When a term is subtracted the result is
// clamped at 0 and the formula says so:
// "max(0, TTL/2 + C - TTL) = max(0, 2.5s + 10s - 5s) = 7.5s".
func sum(terms ...term) (time.Duration, string) {
	var total time.Duration
	var syms, nums strings.Builder
	clamp := false
	for i, t := range terms {
		sign, v := " + ", t.d
		if v < 0 {
			sign, v, clamp = " - ", -v, true
		}
		if i == 0 {
			sign = strings.TrimSpace(sign)
			if sign == "+" {
				sign = ""
			}
		}
		num := t.num
		if num == "" {
			num = BoundText(v)
		}
		syms.WriteString(sign + t.sym)
		nums.WriteString(sign + num)
		switch {
		case total == model.Unbounded:
		case t.d == model.Unbounded:
			total = model.Unbounded
		default:
			total += t.d
		}
	}
	s, n := syms.String(), nums.String()
	if clamp {
		s, n = "max(0, "+s+")", "max(0, "+n+")"
		total = max(total, 0)
	}
	if len(terms) == 1 && !clamp && terms[0].num == "" {
		return total, s + " = " + BoundText(total)
	}
	return total, s + " = " + n + " = " + BoundText(total)
}

// leaderDelays is how much a failure mode delays the moment a leader learns
// that its key is gone, beyond the TTL/2 + jitter between renewals: timer
// (its renewal fires late: a pause's P, a slow clock's stretch), reply (the
// reply that set the key came back late: latency's L) and call (the
// renewal that finds the key gone takes this long to return or fail).
// ok is false for modes that do not delay the leader.
func leaderDelays(p model.Params, mode string, s model.FaultSize) (timer, reply, call time.Duration, ok bool) {
	p = p.WithDefaults()
	renew := p.TTL/2 + p.Jitter()
	switch mode {
	case model.ModePause, model.ModeSuspend:
		return s.Pause, 0, 0, s.Pause > 0
	case model.ModeClockDrift:
		if s.ClockRate <= 0 || s.ClockRate >= 1 {
			return 0, 0, 0, false
		}
		return time.Duration(float64(renew)/s.ClockRate) - renew, 0, 0, true
	case model.ModeLatency:
		if s.Latency <= 0 {
			return 0, 0, 0, false
		}
		rtt, minRTT := s.LatencyRTT, s.LatencyMinRTT
		if rtt <= 0 {
			rtt, minRTT = 2*s.Latency, 2*s.Latency
		}
		t := model.AttemptTimeout(p)
		if minRTT < t {
			call = min(rtt, t)
			if s.ColdRenewal || s.ColdAfterLateReply {
				call *= 2
			}
		}
		if rtt >= t {
			c, _ := latencyCall(p, rtt, minRTT)
			call = max(call, c)
		}
		return 0, min(s.Latency, t), call, true
	case model.ModePartitionBlackhole, model.ModePartitionReplies, model.ModePartitionRefuse, model.ModePartitionReset:
		return 0, 0, CallBound(p, mode), true
	case model.ModeRenewError:
		return 0, 0, 0, true
	case model.ModeRedisPause:
		// The renewal waits at Redis until the pause ends (or its call
		// gives up), and its reply comes a hop later.
		held := redisPauseHeld(p, s.RedisPause)
		if held != model.Unbounded {
			held += hop
		}
		return 0, 0, held, true
	}
	return 0, 0, 0, false
}

// cutsConnections reports whether the mode closes the leader's pooled
// connections, so that its next call dials and shakes hands anew (a
// redis-pause's attempt that times out closes its connection).
func cutsConnections(mode string) bool {
	switch mode {
	case model.ModePartitionRefuse, model.ModePartitionReset, model.ModePartitionBlackhole, model.ModePartitionReplies, model.ModeLeaseLoss, model.ModeFailover, model.ModeRedisPause:
		return true
	}
	return false
}

// answeredRTT is the longest round trip under latency that still comes
// back within the attempt timeout, 0 when none does.
func answeredRTT(p model.Params, s model.FaultSize) time.Duration {
	rtt, minRTT := s.LatencyRTT, s.LatencyMinRTT
	if rtt <= 0 {
		rtt, minRTT = 2*s.Latency, 2*s.Latency
	}
	t := model.AttemptTimeout(p)
	if s.Latency <= 0 || minRTT >= t {
		return 0
	}
	return min(rtt, t)
}

// stackedCall is the longest call caught by partitions that drop replies
// and overlap in time: the heal of one while another holds closes the
// connections it touched, and the read's EOF is retried, so every attempt
// can time out: (MaxRetries + 1) × T + the backoffs, and HELLO's own
// backoff(1) on the last.
func stackedCall(p model.Params) time.Duration {
	t := model.AttemptTimeout(p)
	if t == model.Unbounded {
		return model.Unbounded
	}
	retries := max(p.Client.MaxRetries, 0)
	d := time.Duration(retries+1)*t + clientBackoffs(p.Client, retries)
	if retries > 0 && p.Client.IsGoRedis() {
		d += retryBackoff(1)
	}
	return d
}

// ComposeOverlap is the overlap of faults that are in force together: the
// modes that delay the leader (leaderDelays) add up, since a renewal fired
// P late by a pause, after a reply L late, can then hang C in a partition,
// and one call can pass through each fault in turn (slow, then cut, then
// refused), so their call bounds add too. With a key lost behind the
// leader's back (a Redis restart, a lossy failover) among them, the key
// may vanish right after the last renewal, so the overlap is the whole
// delayed belief, TTL/2 + jitter + delays, instead of that minus the TTL.
// Partitions that drop replies and overlap stack (stackedCall). modes has
// one entry per fault; ok is false when fewer than two faults compose (the
// per-mode prediction stands).
func ComposeOverlap(p model.Params, modes []string, s model.FaultSize) (d time.Duration, formula string, ok bool) {
	p = p.WithDefaults()
	terms := []term{{sym: "TTL/2", d: p.TTL / 2}, {sym: "jitter", d: p.Jitter()}}
	var calls []string
	var call time.Duration
	lost, n, dropping := false, 0, 0
	for _, m := range modes {
		if m == model.ModePartitionBlackhole || m == model.ModePartitionReplies {
			dropping++
		}
	}
	if dropping > 1 {
		calls = append(calls, "stacked partitions")
		call = stackedCall(p)
	}
	if slices.Contains(modes, model.ModeLatency) && slices.ContainsFunc(modes, cutsConnections) {
		// A connection the other fault cut is replaced under the latency:
		// its handshake's round trips come before the command's.
		if rt := answeredRTT(p, s); rt > 0 {
			calls = append(calls, "a new connection's handshake under latency")
			call += time.Duration(handshakeTrips(p.Client)) * rt
		}
	}
	seen := map[string]bool{}
	for _, m := range modes {
		if seen[m] {
			n++
			continue
		}
		seen[m] = true
		if m == model.ModeLeaseLoss || m == model.ModeFailover {
			lost = true
			n++
			continue
		}
		timer, reply, c, ok := leaderDelays(p, m, s)
		if !ok {
			continue
		}
		n++
		if timer > 0 {
			terms = append(terms, term{sym: m + " timer", d: timer})
		}
		if reply > 0 {
			terms = append(terms, term{sym: m + " reply", d: reply})
		}
		if c > 0 {
			// One renewal's call can pass through each fault in turn
			// (slow, then cut, then refused): their call bounds add.
			calls = append(calls, m)
			if call != model.Unbounded && c != model.Unbounded {
				call += c
			} else {
				call = model.Unbounded
			}
		}
	}
	if n < 2 {
		return 0, "", false
	}
	if lost && call == 0 {
		call = clientBackoff(p.Client, 1)
		calls = append(calls, "backoff(1)")
	}
	if call > 0 {
		terms = append(terms, term{sym: "calls (" + strings.Join(calls, " + ") + ")", d: call})
	}
	if !lost {
		terms = append(terms, term{sym: "TTL", d: -p.TTL})
	}
	d, formula = sum(terms...)
	how := "composed, in force together: "
	if lost {
		how = "composed with a key lost behind the leader's back (it may vanish right after the last renewal): "
	}
	formula = how + formula
	if p.Guarded() {
		// The guard ends belief TTL - margin after the last successful send
		// by the leader's own clock: a pause stops that clock, a slow one
		// stretches it; hung, failed or slow calls do not delay it. The
		// key lives at least TTL after that send.
		margin := p.GuardMargin()
		guard := p.TTL - margin
		if s.ClockRate > 0 && s.ClockRate < 1 && slices.Contains(modes, model.ModeClockDrift) {
			guard = time.Duration(float64(guard) / s.ClockRate)
		}
		if slices.Contains(modes, model.ModePause) || slices.Contains(modes, model.ModeSuspend) {
			guard += s.Pause
		}
		g := guard
		if !lost {
			g = max(guard-p.TTL, 0)
		}
		if g < d {
			d = g
			who := "safe mode"
			if !p.Safe {
				who = "the client's validity guard"
			}
			formula = who + ", the guard by the leader's own clock ((TTL - margin)/k + P" + map[bool]string{true: "", false: " - TTL"}[lost] + ") = " + BoundText(g) + "; without it " + formula
		}
	}
	return d, formula, true
}

// ComposeGap is the gap of different failure modes in force together (one
// entry per fault; ok is false unless at least two distinct modes): each
// mode's gap bound assumes its own timing of the demotion, which another
// fault can move (a slow clock or a pause delays a renewal a reset then
// fails at once, a latency delays the landing of the last renewal a
// refusal then cuts). What holds for any of them: the leader demotes no
// sooner than the send of the last renewal that reached Redis, which
// landed at most L later (the requests' latency), so its key outlives the
// belief by at most TTL + L, and with a healthy follower the next attempt
// comes within Wait of the expiry: TTL + Wait + L, the crash bound plus a
// late landing.
func ComposeGap(p model.Params, modes []string, s model.FaultSize) (time.Duration, string, bool) {
	p = p.WithDefaults()
	if len(slices.Compact(slices.Sorted(slices.Values(modes)))) < 2 {
		return 0, "", false
	}
	if p.Client.Cluster && slices.ContainsFunc(modes, failingCall) {
		return model.Unbounded, "composed: a ClusterClient's failing calls are not modelled = unbounded", true
	}
	if !p.Safe && p.Guarded() {
		// A client whose guard lets its calls run on: where the calls of
		// faults in force together land is not modelled (clientGuard).
		return model.Unbounded, "composed: the client's validity guard lets a call it gave up on land late, which is not modelled for faults in force together = unbounded", true
	}
	terms := []term{{sym: "TTL", d: p.TTL}, {sym: "Wait", d: p.Wait}}
	if slices.Contains(modes, model.ModeLatency) && s.Latency > 0 {
		terms = append(terms, term{sym: "L", d: s.Latency})
	}
	why := "composed, in force together: the key outlives the belief by at most TTL (+ L of a late landing)"
	if slices.Contains(modes, model.ModeRedisPause) {
		// A redis-pause that starts before the follower's attempt wins
		// holds it to the pause's end, and the pause's own gap runs from
		// there (a leader crash, then a pause: 14.781 s of the pause's
		// 14.1 s alone).
		if pr, ok := PredictMode(p, model.ModeRedisPause, s); ok {
			terms = append(terms, term{sym: "the redis-pause's gap", d: pr.MaxGap})
			why += ", then the redis-pause's gap from its start (it holds the attempt that would have won)"
		}
	}
	d, f := sum(terms...)
	f = why + ": " + f
	if g, gf, ok := safeFreshAcquirePhantom(p, modes, s); ok && g > d {
		d, f = g, gf
	}
	return d, f, true
}

// safeFreshAcquirePhantom: in safe mode an acquire waits no longer than
// its deadline, TTL - margin. An instance whose connection another fault
// cut (or that restarted after a crash) acquires over a new one, whose
// handshake's round trips come first: under latency the whole call can
// outlast the deadline, and the abandoned SET NX still lands, a phantom
// lease nobody believes, again at each attempt while the latency lasts:
// D + L + TTL + Wait.
func safeFreshAcquirePhantom(p model.Params, modes []string, s model.FaultSize) (time.Duration, string, bool) {
	if !slices.Contains(modes, model.ModeLatency) || !(slices.Contains(modes, model.ModeLeaderCrash) || slices.ContainsFunc(modes, cutsConnections)) {
		return 0, "", false
	}
	return safeAcquirePhantom(p, s, handshakeTrips(p.Client)+1)
}

// safeAcquirePhantom is the phantom lease of a safe-mode acquire under
// latency whose trips round trips (1 on a pooled connection, the handshake's
// too on a new one) outlast its deadline, TTL - margin.
func safeAcquirePhantom(p model.Params, s model.FaultSize, trips int) (time.Duration, string, bool) {
	if !p.Guarded() || s.Latency <= 0 {
		return 0, "", false
	}
	rtt := s.LatencyRTT
	if rtt <= 0 {
		rtt = 2 * s.Latency
	}
	validity := p.TTL - p.GuardMargin()
	call := time.Duration(trips) * min(rtt, model.AttemptTimeout(p))
	if call <= validity {
		return 0, "", false
	}
	dur := term{sym: "D", d: s.LatencyFor}
	if s.LatencyFor <= 0 {
		dur.d = model.Unbounded
	}
	g, gf := sum(dur, term{sym: "L", d: s.Latency}, term{sym: "TTL", d: p.TTL}, term{sym: "Wait", d: p.Wait})
	return g, fmt.Sprintf("safe mode: an acquire under latency, %d round trip(s) of up to %v = %v, outlasts its deadline TTL - margin = %v and lands unseen, a phantom lease at each attempt while the latency lasts: %s",
		trips, min(rtt, model.AttemptTimeout(p)), call, validity, gf), true
}
