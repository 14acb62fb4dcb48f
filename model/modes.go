package model

import (
	"math"
	"time"
)

// Failure modes a prediction is made for. The strings are stable: they appear
// in reports next to the measurement.
const (
	ModeLeaderCrash        = "leader-crash"
	ModeRenewError         = "renew-error"
	ModePartitionBlackhole = "partition-blackhole"
	ModePartitionRefuse    = "partition-refuse"
	ModePartitionReset     = "partition-reset"
	ModePartitionReplies   = "partition-replies"
	ModeLatency            = "latency"
	ModePause              = "pause"
	ModeSuspend            = "suspend"
	ModeClockDrift         = "clock-drift"
	ModeLeaseLoss          = "lease-loss"
	ModeGracefulStop       = "graceful-stop"
	ModeFailover           = "redis-failover"
	ModeRedisPause         = "redis-pause"
)

// Unbounded stands for a bound that does not exist: a call that never times
// out, a fault of unlimited size. Within treats it as infinity.
const Unbounded = time.Duration(math.MaxInt64)

// FaultSize is the size of the faults whose effect depends on it. A zero
// field means that fault is absent, and its mode predicts nothing.
type FaultSize struct {
	// Latency is the largest one-way latency added to the leader's
	// connection (with its jitter), in either direction.
	Latency time.Duration `json:"latency,omitempty"`
	// LatencyRTT and LatencyMinRTT are the largest and the smallest round
	// trip the latency adds (requests plus replies, jitter included: 2 ×
	// Latency both ways, Latency one way). 0: not given, and both are 2 ×
	// Latency.
	LatencyRTT    time.Duration `json:"latency_rtt,omitempty"`
	LatencyMinRTT time.Duration `json:"latency_min_rtt,omitempty"`
	// ColdRenewal: a renewal under the latency may be the first after an
	// empty script cache (the run's first renewal, or the first after a
	// SCRIPT FLUSH, restart or failover): EVALSHA, NOSCRIPT, EVAL, two round
	// trips. ColdAfterLateReply: and the reply before it came back late too
	// (the latency was in force when that key was set). Both false: every
	// renewal under latency finds its script cached.
	ColdRenewal        bool `json:"cold_renewal,omitempty"`
	ColdAfterLateReply bool `json:"cold_after_late_reply,omitempty"`
	// LatencyFor is how long the longest latency fault lasted (Unbounded if
	// it never healed). It bounds the phantom leases of a latency whose
	// round trips straddle the attempt timeout. 0: not given.
	LatencyFor time.Duration `json:"latency_for,omitempty"`
	// Pause is how long the leader is paused or suspended (traffic held;
	// its clock runs on in a pause and stops in a suspend).
	Pause time.Duration `json:"pause,omitempty"`
	// PauseMin is the shortest of the pauses or suspends that hit a leader
	// (0: Pause is the only one). The gap bounds shrink as a pause grows,
	// so they take the shortest, where the overlap bounds take the
	// longest. A pause of an instance that was not leading is no leader's
	// failure: its own term chains onto the gap (StoppedAcquire).
	PauseMin time.Duration `json:"pause_min,omitempty"`
	// PauseShortMax is the longest of the pauses or suspends that hit a
	// leader and lasted no longer than the TTL (0: none). In safe mode such
	// a pause that ends past the guard demotes the leader before its key
	// expires (the gap Wait + hop), however short the others are.
	PauseShortMax time.Duration `json:"pause_short_max,omitempty"`
	// ClockRate is the leader's clock speed relative to real time: 0.5 runs
	// at half speed. 0 means 1 (no drift).
	ClockRate float64 `json:"clock_rate,omitempty"`
	// ClockRateMax is the fastest clock rate above 1 (0: none). A fast clock
	// fires the safe-mode guard early, (TTL - margin)/k after the send, so
	// the key outlives it longer.
	ClockRateMax float64 `json:"clock_rate_max,omitempty"`
	// ReplyPartition is how long the longest blackhole-replies partition
	// lasts (Unbounded if it never heals). It matters only with a shared
	// pool (runner mode), where the demoted leader's acquires can leave
	// phantom leases; 0: not given, and the gap bound then assumes none.
	ReplyPartition time.Duration `json:"reply_partition,omitempty"`
	// RedisDowntime is how long the longest redis-restart kept Redis
	// unreachable, measured from above (from the fault until Redis answers
	// again). 0: not given, and the gap bound then takes the restart as
	// instant.
	RedisDowntime time.Duration `json:"redis_downtime,omitempty"`
	// RedisPause is how long the longest redis-pause lasted (Unbounded if
	// it never healed). 0: not given, and the gap bound takes TTL.
	RedisPause time.Duration `json:"redis_pause,omitempty"`
	// Failover is how long the longest redis-failover took: from the
	// moment writes stopped reaching the replica (the fault's start) until
	// the switch (the promoted node serves; a cluster's clients then follow
	// its MOVED). 0: not given, and the prediction assumes the lease was
	// lost.
	Failover time.Duration `json:"failover,omitempty"`
	// ClockFor is how long the slowest clock fault (ClockRate < 1) lasted
	// (Unbounded if it never healed): after the heal the leader's renewal
	// timer runs in real time again, which caps its late renewal. 0: not
	// given, and the bound takes the clock as slow for good.
	ClockFor time.Duration `json:"clock_for,omitempty"`
	// FailoverLag is the longest lag of the failovers (model.Fault.Lag): 0
	// when every one was clean.
	FailoverLag time.Duration `json:"failover_lag,omitempty"`
	// FailoverSwitch is the longest switch of the failovers (its span minus
	// its lag): the stretch in which writes were held or refused. 0: not
	// given, and Failover - FailoverLag stands in.
	FailoverSwitch time.Duration `json:"failover_switch,omitempty"`
	// Partition is how long the shortest partition that drops replies
	// (blackhole, blackhole-replies) lasted. A
	// partition that starts just after a renewal reached Redis and heals
	// before the call's timeout ends that call at the heal (EOF): the
	// shorter the partition, the longer its key outlives the leader's
	// belief. 0: not given, and the bound assumes it outlasts the call.
	Partition time.Duration `json:"partition,omitempty"`
	// ResetPartition is how long the longest reset partition lasted
	// (Unbounded if it never healed). One that heals within Wait lets the
	// demoted leader's own next attempt through. 0: not given.
	ResetPartition time.Duration `json:"reset_partition,omitempty"`
	// Refusals is how many refuse partitions were applied. After more than
	// one, an instance's pool may keep failed dial rounds from the earlier
	// one (go-redis resets its dial breaker only when PoolSize rounds have
	// failed), so a refused call may dial a single round. 0 or 1: a fresh
	// pool.
	Refusals int `json:"refusals,omitempty"`
}

// AttemptTimeout is how long one attempt waits for a reply before giving up.
func AttemptTimeout(p Params) time.Duration {
	t := p.Client.ReadTimeout
	if t < 0 {
		t = Unbounded
	}
	if p.Client.ContextTimeoutEnabled && p.OpTimeout > 0 {
		t = min(t, p.OpTimeout)
	}
	return t
}

// ModeOf maps a fault of the schedule (its kind, and its partition mode for
// partitions) to the failure mode whose prediction applies, "" when none
// does (a SCRIPT FLUSH costs one EVAL, not a lease). Dropping only the
// requests is a blackhole to the elector: nothing reaches Redis and nothing
// comes back. Dropping only the replies is not: the call fails the same way,
// but its writes apply (partition-replies).
func ModeOf(kind FaultKind, partition string) string {
	return Fault{Kind: kind, Mode: partition}.FailureMode()
}

// Gives says whether s gives the size mode's bound is of: a latency for
// the latency mode, a pause for pause and suspend, a clock rate for clock
// drift. Every other mode's bound needs no size from the caller (a
// partition's or a failover's is a scenario's, and its absence a fault
// that does not happen).
func (s FaultSize) Gives(mode string) bool {
	switch mode {
	case ModeLatency:
		return s.Latency != 0
	case ModePause, ModeSuspend:
		return s.Pause != 0
	case ModeClockDrift:
		return s.ClockRate != 0
	}
	return true
}
