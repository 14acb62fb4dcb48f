package virtual_test

import (
	"github.com/leaselab/leaselab/model/verdict"

	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/virtual"
)

// renewCall runs one leader whose second renewal (due at gain + 5 s, no
// jitter) meets the fault at 3 s, and returns how long that renewal took:
// from its send to the elector's error.
func renewCall(t *testing.T, seed int64, c model.ClientParams, op time.Duration, f model.Fault) (time.Duration, *verdict.Result) {
	t.Helper()
	f.At, f.Kind, f.Target = 3*time.Second, model.FaultPartition, model.Target{Role: model.RoleLeader}
	if f.For == 0 {
		f.For = 15 * time.Second
	}
	sc := model.Scenario{Name: "call", Seed: seed, Instances: 1, Duration: 20 * time.Second, Recovery: time.Second,
		Params: model.Params{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: -1, OpTimeout: op, Client: c},
		Faults: []model.Fault{f}}
	res := run(t, sc, virtual.Options{})
	var gained, lost time.Duration = -1, -1
	for _, e := range res.Timeline {
		if e.Kind == model.LeaderGained && gained < 0 {
			gained = e.At
		}
		if e.Kind == model.LeaderLost && lost < 0 {
			lost = e.At
		}
	}
	if gained < 0 || lost < 0 {
		t.Fatalf("no gain (%v) or no loss (%v)", gained, lost)
	}
	// The first renewal returned ~0.1 ms after gain + 2.5 s; the second was
	// sent 2.5 s later.
	return lost - (gained + 5*time.Second + 100*time.Microsecond), res
}

// The measured figures are those of model/bounds/bounds.go, checked by
// TestCallBoundMeasured in sim (go-redis v9.23.0 through Toxiproxy 2.12.0).
func TestCallDurations(t *testing.T) {
	rt300 := model.ClientParams{ReadTimeout: 300 * time.Millisecond}
	cases := []struct {
		name     string
		c        model.ClientParams
		op       time.Duration
		mode     string
		lo, hi   time.Duration // every seed
		mlo, mhi time.Duration // the mean over seeds (the measured range)
	}{
		// 2 × ReadTimeout + 2 × backoff(1): measured 629-658 ms.
		{"blackhole ReadTimeout 300ms", rt300, 0, model.PartitionBlackhole, 620 * ms, 660 * ms, 629 * ms, 658 * ms},
		{"blackhole-requests ReadTimeout 300ms", rt300, 0, model.PartitionBlackholeRequests, 620 * ms, 660 * ms, 629 * ms, 658 * ms},
		{"blackhole-replies ReadTimeout 300ms", rt300, 0, model.PartitionBlackholeReplies, 620 * ms, 660 * ms, 629 * ms, 658 * ms},
		// Defaults: ~10 s on a pooled connection.
		{"blackhole defaults", model.ClientParams{}, 0, model.PartitionBlackhole, 10020 * ms, 10060 * ms, 10020 * ms, 10060 * ms},
		// MaxRetries -1: one ReadTimeout.
		{"blackhole no retries", model.ClientParams{ReadTimeout: 500 * ms, MaxRetries: -1}, 0, model.PartitionBlackhole, 500 * ms, 501 * ms, 500 * ms, 501 * ms},
		// ContextTimeoutEnabled: OpTimeout cuts the read.
		{"blackhole OpTimeout+CTE", model.ClientParams{ContextTimeoutEnabled: true}, time.Second, model.PartitionBlackhole, 1000 * ms, 1001 * ms, 1000 * ms, 1001 * ms},
		// Without it the first read lasts ReadTimeout; the backoff sees the deadline.
		{"blackhole OpTimeout no CTE", model.ClientParams{}, time.Second, model.PartitionBlackhole, 5000 * ms, 5001 * ms, 5000 * ms, 5001 * ms},
		// Refused: the health check drops the closed pooled connection,
		// then 4 dial rounds of 4 × 100 ms + backoffs: measured 1.69-1.77 s
		// through the Gate, 1.69-1.81 s in agent processes.
		{"refuse defaults", model.ClientParams{}, 0, model.PartitionRefuse, 1630 * ms, 1770 * ms, 1680 * ms, 1770 * ms},
		// One dial round: measured 403-406 ms.
		{"refuse no retries", model.ClientParams{MaxRetries: -1}, 0, model.PartitionRefuse, 400 * ms, 401 * ms, 400 * ms, 406 * ms},
		// OpTimeout caps the dial-retry sleeps with or without CTE.
		{"refuse OpTimeout", model.ClientParams{}, 500 * ms, model.PartitionRefuse, 500 * ms, 501 * ms, 500 * ms, 501 * ms},
		// Reset: 12 backoffs: measured 0.37-0.45 s.
		{"reset defaults", model.ClientParams{}, 0, model.PartitionReset, 120 * ms, 680 * ms, 370 * ms, 450 * ms},
		{"reset no retries", model.ClientParams{MaxRetries: -1}, 0, model.PartitionReset, 0, ms, 0, ms},
	}
	for _, tc := range cases {
		var sum time.Duration
		const seeds = 40
		lo, hi := time.Duration(1<<62), time.Duration(0)
		for seed := int64(1); seed <= seeds; seed++ {
			d, _ := renewCall(t, seed, tc.c, tc.op, model.Fault{Mode: tc.mode})
			sum += d
			lo, hi = min(lo, d), max(hi, d)
		}
		mean := sum / seeds
		t.Logf("%-38s %v–%v mean %v", tc.name, lo.Round(ms), hi.Round(ms), mean.Round(ms))
		if lo < tc.lo || hi > tc.hi {
			t.Errorf("%s: calls took %v–%v, want within %v–%v", tc.name, lo, hi, tc.lo, tc.hi)
		}
		if mean < tc.mlo || mean > tc.mhi {
			t.Errorf("%s: mean %v, measured %v–%v", tc.name, mean, tc.mlo, tc.mhi)
		}
	}
}

// A replies-dropped partition: the renewal applies in Redis though the
// leader sees a timeout, so the key lives TTL past that renewal.
func TestRepliesDroppedRenewalApplies(t *testing.T) {
	d, res := renewCall(t, 1, model.ClientParams{ReadTimeout: 300 * ms}, 0, model.Fault{Mode: model.PartitionBlackholeReplies})
	if d <= 0 {
		t.Fatal("no failing renewal")
	}
	var gained, expired time.Duration
	for _, e := range res.Timeline {
		if e.Kind == model.LeaderGained && gained == 0 {
			gained = e.At
		}
		if e.Kind == model.RedisHolder && e.Holder == "" && expired == 0 {
			expired = e.At
		}
	}
	want := gained + 5*time.Second + 5*time.Second // the second renewal + TTL
	if expired < want-ms || expired > want+ms {
		t.Errorf("key expired at %v, want ~%v (the dropped-reply renewal applied)", expired, want)
	}
	// With requests dropped instead, it expires TTL after the first renewal.
	_, res = renewCall(t, 1, model.ClientParams{ReadTimeout: 300 * ms}, 0, model.Fault{Mode: model.PartitionBlackholeRequests})
	for _, e := range res.Timeline {
		if e.Kind == model.RedisHolder && e.Holder == "" {
			if w := gained + 7500*ms; e.At < w-ms || e.At > w+ms {
				t.Errorf("requests dropped: key expired at %v, want ~%v", e.At, w)
			}
			break
		}
	}
}

// A blackhole healed while a renewal hangs: removing the toxic closes the
// connection, the read gets EOF, the retry on a new connection succeeds.
func TestBlackholeHealedMidCall(t *testing.T) {
	sc := model.Scenario{Name: "heal", Instances: 1, Duration: 12 * time.Second, Recovery: time.Second,
		Params: model.Params{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: -1},
		Faults: []model.Fault{{At: 3 * time.Second, For: 3 * time.Second, Kind: model.FaultPartition, Mode: model.PartitionBlackhole, Target: model.Target{Role: model.RoleLeader}}}}
	res := run(t, sc, virtual.Options{})
	for _, e := range res.Timeline {
		if e.Kind == model.ElectorError || e.Kind == model.LeaderLost {
			t.Fatalf("%s (%s) at %v; the heal at 6 s should have let the renewal's retry through", e.Kind, e.Err, e.At)
		}
	}
	if s := res.Analysis.Summary; s.LeaderGains != 1 {
		t.Errorf("gains %d, want 1", s.LeaderGains)
	}
}

// SCRIPT FLUSH: EVALSHA answers NOSCRIPT, Script.Run reloads with EVAL, no error.
func TestScriptFlushReloads(t *testing.T) {
	res := run(t, builtin(t, "script-flush"), virtual.Options{})
	if s := res.Analysis.Summary; s.ElectorErrors != 0 || s.LeaderGains != 1 {
		t.Errorf("errors %d gains %d; want 0 and 1", s.ElectorErrors, s.LeaderGains)
	}
}

// Safe mode: the lease guard demotes a blackholed leader before its key
// expires, whatever the client's timeouts: no overlap, no stale leadership.
func TestSafeModeGuard(t *testing.T) {
	for _, name := range []string{"partition-blackhole", "partition-one-way", "slow-redis"} {
		sc := builtin(t, name)
		sc.Params.Safe = true
		res := run(t, sc, virtual.Options{})
		s := res.Analysis.Summary
		t.Logf("%s safe: overlap %v stale %v gap %v gains %d", name, s.MaxOverlap, s.MaxStale, s.MaxGap, s.LeaderGains)
		if s.MaxOverlap != 0 || s.MaxStale != 0 {
			t.Errorf("%s in safe mode: overlap %v, stale %v; want none", name, s.MaxOverlap, s.MaxStale)
		}
	}
}

// A graceful stop of a blackholed leader: it demotes at once; its hung
// renewal and then its release cannot reach Redis, and Stop gives up at its
// bound (StopTimeout = TTL), leaving the key to expire.
func TestStopDuringBlackhole(t *testing.T) {
	lh := model.Target{Role: model.RoleLeader}
	sc := model.Scenario{Name: "stop", Instances: 2, Duration: 20 * time.Second, Recovery: 2 * time.Second,
		Params: model.Params{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: -1},
		Faults: []model.Fault{
			{At: 6 * time.Second, For: 10 * time.Second, Kind: model.FaultPartition, Mode: model.PartitionBlackhole, Target: lh},
			{At: 8 * time.Second, Kind: model.FaultStop, Target: model.Target{Indexes: []int{0}}},
		}}
	res := run(t, sc, virtual.Options{})
	var lost, stopped time.Duration
	for _, e := range res.Timeline {
		switch {
		case e.Kind == model.LeaderLost && e.Instance == 0 && lost == 0:
			lost = e.At
		case e.Kind == model.InstanceStopped && e.Instance == 0:
			stopped = e.At
		}
	}
	if lost != 8*time.Second {
		t.Errorf("demoted at %v, want at the stop (8s)", lost)
	}
	if stopped != 13*time.Second {
		t.Errorf("stopped at %v, want at the StopTimeout bound (13s)", stopped)
	}
}

// A pause with a slow renewal in flight: the reply that lands during the
// pause is read only at resume, and the frozen clock delays the next
// renewal by the pause.
func TestPauseHoldsReply(t *testing.T) {
	lh := model.Target{Role: model.RoleLeader}
	sc := model.Scenario{Name: "pause", Instances: 1, Duration: 12 * time.Second, Recovery: time.Second,
		Params: model.Params{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: -1},
		Faults: []model.Fault{
			{At: 2 * time.Second, For: 8 * time.Second, Kind: model.FaultLatency, Latency: 400 * time.Millisecond, Target: lh},
			// The renewal sent at ~2.518 s returns at ~3.318 s: pause in between.
			{At: 2700 * time.Millisecond, For: time.Second, Kind: model.FaultPause, Target: lh},
		}}
	res := run(t, sc, virtual.Options{})
	for _, e := range res.Timeline {
		if e.Kind == model.LeaderLost || e.Kind == model.ElectorError {
			t.Fatalf("%s at %v: a held reply within the read timeout must still count", e.Kind, e.At)
		}
	}
	// The key: renewed at ~2.918 (request in flight before the pause), then
	// at resume (3.7) + 2.5 s + 0.4 s.
	var sets int
	for _, e := range res.Timeline {
		if e.Kind == model.RedisHolder {
			sets++
		}
	}
	if sets != 1 {
		t.Errorf("the key changed hands %d times, want 1 (never lost)", sets)
	}
}

// A long refused partition trips go-redis's dial breaker: after PoolSize
// failed dial rounds, dials fail at once until its once-a-second tryDial
// gets through, so the partitioned follower's acquires fail fast.
func TestDialBreaker(t *testing.T) {
	sc := model.Scenario{Name: "breaker", Instances: 2, Duration: 90 * time.Second, Recovery: 10 * time.Second,
		Params: model.Params{TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: -1, Client: model.ClientParams{PoolSize: 4}},
		Faults: []model.Fault{{At: 3 * time.Second, For: 60 * time.Second, Kind: model.FaultPartition, Mode: model.PartitionRefuse, Target: model.Target{Indexes: []int{0}}}}}
	res := run(t, sc, virtual.Options{})
	var errs []time.Duration
	for _, e := range res.Timeline {
		if e.Kind == model.ElectorError && e.Instance == 0 {
			errs = append(errs, e.At)
		}
	}
	// Renewal: 3 failed rounds; the next acquire trips the breaker at its
	// first dial (round 4) and fails fast afterwards: ~6 s apart from then.
	if len(errs) < 5 {
		t.Fatalf("errors at %v; want one per attempt", errs)
	}
	for i := 2; i < len(errs)-1; i++ {
		if d := errs[i+1] - errs[i]; d < 6*time.Second || d > 6*time.Second+200*ms {
			t.Errorf("attempts %d and %d %v apart; with the breaker tripped each fails at once (≈ Wait + backoffs)", i, i+1, d)
		}
	}
	if s := res.Analysis.Summary; s.LeaderGains < 2 {
		t.Errorf("no failover")
	}
}

// A redis-pause holds every elector script until its end: the key is set
// by nobody meanwhile, its expiry is read as it falls due (write) or at the
// end (all, the truth lane's GET blocks too), and at the end only the
// commands whose attempt still waits for its reply run: one an instance at
// most, though the instances sent many (a 1 s read timeout, no retries).
func TestRedisPauseHoldsWrites(t *testing.T) {
	for _, mode := range model.RedisPauseModes {
		t.Run(mode, func(t *testing.T) {
			at, end := 3*time.Second, 11*time.Second
			sc := model.Scenario{Name: "rp", Instances: 3, Duration: 20 * time.Second, Recovery: time.Second,
				Params: model.Params{TTL: 5 * time.Second, Wait: 2 * time.Second, JitterMS: -1,
					Client: model.ClientParams{ReadTimeout: time.Second, MaxRetries: -1}},
				Faults: []model.Fault{{At: at, For: end - at, Kind: model.FaultRedisPause, Mode: mode}}}
			var sent, arrivedAtEnd int
			res := run(t, sc, virtual.Options{OnCall: func(e virtual.CallEvent) {
				switch {
				case e.Step == virtual.CallSend && e.At > at && e.At < end:
					sent++
				case e.Step == virtual.CallArrive && e.At == end:
					arrivedAtEnd++
				}
			}})
			var expired, setAfter time.Duration
			for _, e := range res.Timeline {
				if e.Kind != model.RedisHolder || e.At <= at {
					continue
				}
				switch {
				case e.Holder == "" && expired == 0:
					expired = e.At
				case e.Holder != "" && e.At < end:
					t.Errorf("the key was set at %v, during the pause", e.At)
				case e.Holder != "" && setAfter == 0:
					setAfter = e.At
				}
			}
			// The renewal at 2.5 s (plus its hops) + TTL; under all, the end.
			if ok := expired > 7500*time.Millisecond && expired < 7600*time.Millisecond; mode == model.RedisPauseAll {
				if expired != end {
					t.Errorf("the key's expiry recorded at %v, want the pause's end %v", expired, end)
				}
			} else if !ok {
				t.Errorf("the key's expiry recorded at %v, want when it fell due (7.5 s and the renewal's hops)", expired)
			}
			if setAfter < end {
				t.Errorf("no new holder after the pause (%v)", setAfter)
			}
			if sent <= 3 || arrivedAtEnd > 3 || arrivedAtEnd == 0 {
				t.Errorf("%d commands sent during the pause, %d run at its end; want more than 3 sent, 1 to 3 run", sent, arrivedAtEnd)
			}
		})
	}
}
