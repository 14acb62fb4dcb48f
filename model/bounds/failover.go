package bounds

import (
	"github.com/leaselab/leaselab/model"

	"cmp"
	"fmt"
	"slices"
	"time"
)

// failoverBound fills pr.MaxFailover, the worst "failover" of one fault of
// pr's mode: from the fault's start to the first leader that then leads
// alone for a TTL, after the hit leader's demotion. It is not a gap: it
// also counts how long the old leader takes to demote, and how long the
// fault keeps the key out of the followers' reach.
//
// Let X be when the hit leader's key last expires after the fault's start
// (the last extension it made that reached Redis, plus TTL). Its belief ends
// at most the mode's stale bound O (MaxOverlap: belief after its key is
// gone) after X, or earlier; a healthy follower tries within Wait + jitter
// of X and wins. So the failover is at most X + max(O, Wait + jitter),
// where the mode's own timing does not give a closer demotion time:
//
//   - crash, stop, renew error, blackhole, refuse, reset, pause: the last
//     renewal that reached Redis was sent before the fault (a mid-call one
//     a hop after it): X = TTL + hop;
//   - replies dropped: the next renewal, TTL/2 + jitter after the last,
//     applies: X = TTL/2 + jitter + TTL + hop (cold script cache: nothing
//     applies, X = TTL + hop);
//   - latency: the next renewal lands L after its send (after a cold
//     EVALSHA's round trip, R + L): X = TTL/2 + jitter + L (+ R) + TTL; if
//     round trips vary (jitter, one direction) a later renewal may be the
//     one that lapses, so X = D + L + TTL; in safe mode the demoted slow
//     instance may win again and be demoted again while the latency lasts,
//     so also D + L + TTL + Wait + jitter;
//   - a slow clock (k < 1): the first renewal after the fault may still land
//     (it is due within TTL of the last), and the one after comes
//     (TTL/2 + jitter)/k later, cut short by the heal (ClockFor);
//   - a lost key (restart, lossy failover): nobody can win before Redis
//     serves again, so the gap bound, counted from the fault, with the stale
//     bound.
//
// The gap bound is a floor too: the failover contains the gap after the
// demotion.
func failoverBound(pr *Prediction, p model.Params, s model.FaultSize) {
	ttl, jitter := p.TTL, p.Jitter()
	lease, hopT := term{sym: "TTL", d: ttl}, term{sym: "hop", d: hop}
	renewI := []term{{sym: "TTL/2", d: ttl / 2}, {sym: "jitter", d: jitter}}
	follower, ff := sum(term{sym: "Wait", d: p.Wait}, term{sym: "jitter", d: jitter})
	stale := pr.MaxOverlap
	// key + max(O, Wait + jitter), with its formula.
	after := func(key []term, why string) (time.Duration, string) {
		x, xf := sum(key...)
		if x == model.Unbounded {
			return model.Unbounded, why + ": X = " + xf
		}
		tail, tf := follower, ff
		if stale > follower {
			tail, tf = stale, "O = "+BoundText(stale)
		}
		return x + tail, fmt.Sprintf("%s: X + max(O, Wait + jitter), X = %s; %s; = %s", why, xf, tf, BoundText(x+tail))
	}
	var d time.Duration
	var f string
	switch pr.Mode {
	case model.ModeLeaderCrash, model.ModeGracefulStop, model.ModeRenewError, model.ModePartitionBlackhole, model.ModePartitionRefuse, model.ModePartitionReset, model.ModePause, model.ModeSuspend:
		d, f = after([]term{lease, hopT}, "the key expires TTL after the last renewal that reached Redis, a hop after the fault at the latest")
		if r := s.ResetPartition; pr.Mode == model.ModePartitionReset && r > 0 && r != model.Unbounded && r <= p.Wait && ttl-ttl/2 <= p.Wait {
			// A reset shorter than Wait: the demoted leader's own next
			// attempt, Wait after its renewal failed, wins if nobody did.
			g, gf := sum(append(slices.Clone(renewI), term{sym: "C", d: pr.Call}, term{sym: "Wait", d: p.Wait}, hopT)...)
			if g < d {
				d, f = g, "the reset heals within Wait: the demoted leader's own next attempt wins at the latest: "+gf+" (else "+f+")"
			}
		}
	case model.ModePartitionReplies:
		d, f = after(append(slices.Clone(renewI), lease, hopT), "the renewal sent into the partition applies")
		if s.ColdRenewal || s.ColdAfterLateReply {
			d2, f2 := after([]term{lease, hopT}, "cold script cache, nothing applies")
			if d2 > d {
				d, f = d2, f2
			}
		}
	case model.ModeLatency:
		d, f = latencyFailover(pr, p, s, after)
	case model.ModeClockDrift:
		d, f = clockFailover(p, s, follower)
	case model.ModeLeaseLoss:
		d, f = max(pr.MaxGap, stale), fmt.Sprintf("the key is lost at the restart: nobody wins before the gap bound (%s) counted from it, and the old leader demotes within O = %s of it: max = %s", BoundText(pr.MaxGap), BoundText(stale), BoundText(max(pr.MaxGap, stale)))
	case model.ModeFailover:
		// The old primary serves the lease through the lag; the key is lost
		// at the switch, which the gap bound counts from.
		sw := s.FailoverSwitch
		if sw <= 0 {
			sw = max(s.Failover-s.FailoverLag, 0)
		}
		lag := s.FailoverLag
		d = lag + max(pr.MaxGap, sw+stale)
		f = fmt.Sprintf("the old primary keeps the lease through the lag, lost at the switch: lag + max(gap bound, S + O) = %v + max(%v, %v + %v) = %v", lag, pr.MaxGap, sw, stale, d)
		// The promoted replica may keep an older copy, the last renewal
		// replicated before the lag, which lives until TTL after it: a
		// follower's attempt just after the switch finds it and loses
		// (8.614 s of the 8.18 s above).
		if c, cf := after([]term{lease, hopT}, "the promoted replica's copy of the key, replicated before the lag, expires TTL after it"); c > d {
			d, f = c, cf+" (else "+f+")"
		}
	default:
		return
	}
	if pr.MaxGap > d {
		d, f = pr.MaxGap, "the gap bound: "+BoundText(pr.MaxGap)
	}
	pr.MaxFailover, pr.FailoverFormula = d, f
}

// latencyFailover is failoverBound's latency case.
func latencyFailover(pr *Prediction, p model.Params, s model.FaultSize, after func([]term, string) (time.Duration, string)) (time.Duration, string) {
	l := s.Latency
	if l <= 0 {
		return after([]term{{sym: "TTL", d: p.TTL}, {sym: "hop", d: hop}}, "no latency given")
	}
	rtt, minRTT := s.LatencyRTT, s.LatencyMinRTT
	if rtt <= 0 {
		rtt, minRTT = 2*l, 2*l
	}
	minRTT = min(minRTT, rtt)
	t := model.AttemptTimeout(p)
	lease, late := term{sym: "TTL", d: p.TTL}, term{sym: "L", d: l}
	dur := term{sym: "D", d: s.LatencyFor}
	if s.LatencyFor <= 0 {
		dur.d = model.Unbounded
	}
	i := p.TTL/2 + p.Jitter()
	answered, timedOut := minRTT < t, rtt >= t
	// A warm renewal lets the key lapse when the reply before it and its
	// own request take longer than TTL - (TTL/2 + jitter), or when it can
	// time out (then it demotes, and its request lands L after its send).
	warm := timedOut || i+min(rtt, t)+hop > p.TTL
	key, why := []term{late, lease, {sym: "hop", d: hop}}, "no renewal under the latency lets the key lapse but a cold one, whose key was set before the fault (a request already on its way lands up to L late)"
	switch {
	case warm && (minRTT < rtt || (answered && timedOut)):
		key, why = []term{dur, late, lease, {sym: "hop", d: hop}}, "round trips vary, so any renewal while the latency lasts may be the one that lapses or times out"
	case warm && (s.ColdRenewal || s.ColdAfterLateReply):
		key = []term{{sym: "TTL/2", d: p.TTL / 2}, {sym: "jitter", d: p.Jitter()}, {sym: "R", d: min(rtt, t)}, late, lease, {sym: "hop", d: hop}}
		why = "the next renewal's EVAL lands a round trip (EVALSHA, NOSCRIPT) and L after its send, and the one after lapses"
	case warm:
		key = []term{{sym: "TTL/2", d: p.TTL / 2}, {sym: "jitter", d: p.Jitter()}, late, lease, {sym: "hop", d: hop}}
		why = "the next renewal lands L after its send, and the one after lapses"
	case s.ColdAfterLateReply:
		// The cache emptied while the latency was in force: its cold
		// renewal may come at any time while it lasts.
		key, why = []term{dur, late, lease, {sym: "hop", d: hop}}, "a cold renewal (the cache emptied under the latency) may lapse at any time while the latency lasts"
	}
	d, f := after(key, why)
	if p.Guarded() {
		g, gf := sum(dur, late, lease, term{sym: "Wait", d: p.Wait}, term{sym: "jitter", d: p.Jitter()})
		if g > d {
			d, f = g, "safe mode: the guard demotes the slow leader, which may win again (its acquire lands before a follower's attempt) and be demoted again while the latency lasts: "+gf
		}
	}
	return d, f
}

// clockFailover is failoverBound's slow-clock case. The last renewal
// before the fault was x before it (0 ≤ x ≤ I', I' its interval, TTL/2 to
// TTL/2 + jitter = I); the next fires (I' − x)/k after the fault and still
// lands if that is within TTL − x, so at most t1 = TTL − x* after it,
// x* = max(0, (TTL/2 − k·TTL)/(1 − k)) (where both are equal, at the
// shortest interval). The renewal after that one comes I/k later,
// or, if the clock heals first (after F), F + I − k(F − t1): its timer
// counts the rest in real time. It finds the key gone and demotes; the key
// expired TTL after t1, and a follower tried within Wait + jitter.
func clockFailover(p model.Params, s model.FaultSize, follower time.Duration) (time.Duration, string) {
	k := s.ClockRate
	i := p.TTL/2 + p.Jitter()
	if k <= 0 || k >= 1 || time.Duration(float64(i)/k)+hop <= p.TTL {
		d, f := sum(term{sym: "TTL", d: p.TTL}, term{sym: "hop", d: hop}, term{sym: "Wait", d: p.Wait}, term{sym: "jitter", d: p.Jitter()})
		return d, "the renewals keep the key alive: the key expires TTL after the last one: " + f
	}
	// The first interval may have drawn no jitter (TTL/2), which lets it
	// land latest; the second draws the most.
	xs := time.Duration((float64(p.TTL/2) - k*float64(p.TTL)) / (1 - k))
	t1 := max(p.TTL-xs, 0)
	slow := time.Duration(float64(i) / k)
	demote := t1 + slow
	capped := ""
	if fr := s.ClockFor; fr > 0 && fr != model.Unbounded && fr >= t1 {
		if c := fr + i - time.Duration(k*float64(fr-t1)); c < demote {
			demote = c
			capped = fmt.Sprintf("; the clock heals at F = %v first: F + I - k(F - t1) = %v", fr, c)
		}
	}
	demote += hop
	key := t1 + p.TTL + hop + follower
	d := max(demote, key)
	return d, fmt.Sprintf("a slow clock: t1 = TTL - max(0, (TTL/2 - k·TTL)/(1 - k)) = %v (the last renewal that lands, I = TTL/2 + jitter = %v, k = %g); demotion t1 + I/k = %v%s, + hop; a follower within TTL + hop + Wait + jitter of t1 = %v; max = %v",
		t1, i, k, t1+slow, capped, key, d)
}

// FailoverChain is the failover bound of a run's faults, given each
// fault's start (at), the end of its reach (FaultSpan.Reach: a demotion
// up to then counts as its own) and its own bound (Prediction.MaxFailover,
// or a composed one). A later fault that starts before the failover the
// earlier one could end was stable (its bound plus a TTL, the stability
// window), or while the earlier one still reaches, may demote the leader or
// hit the new one first: the earlier fault's bound then reaches the later
// one's end. Faults in any order.
func FailoverChain(p model.Params, at, reach, bound []time.Duration) time.Duration {
	idx := make([]int, len(at))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(at[a], at[b]) })
	b := slices.Clone(bound)
	var worst time.Duration
	for n := len(idx) - 1; n >= 0; n-- {
		i := idx[n]
		for _, j := range idx[n+1:] {
			if b[i] == model.Unbounded || (at[j]-at[i] > b[i]+p.TTL && at[j] > reach[i]) {
				continue
			}
			if b[j] == model.Unbounded {
				b[i] = model.Unbounded
				continue
			}
			b[i] = max(b[i], at[j]-at[i]+b[j])
		}
		worst = max(worst, b[i])
	}
	return worst
}
