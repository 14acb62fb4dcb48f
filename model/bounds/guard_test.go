package bounds

import (
	"github.com/leaselab/leaselab/model"

	"strings"
	"testing"
	"time"
)

// A declared client that steps down at its lease's validity (redsync's
// Until) was predicted as a client that believes until its call fails, and
// FAILed for being safer: partition-blackhole's gap 1.032 s (time scale
// 0.5) against 0.75 s, no stale leadership against the partition's 2.5 s
// minimum. Its guard's terms apply, with the late landing of the call it
// gave up on; where that landing is not modelled the bound is unbounded.
func TestClientGuardPredictions(t *testing.T) {
	size := model.FaultSize{Partition: 14 * time.Second, Pause: 8 * time.Second, Latency: 400 * time.Millisecond, LatencyFor: 10 * time.Second}
	spec := model.Params{}.WithDefaults()
	guarded := spec
	guarded.Client.ValidityMargin = 50 * time.Millisecond
	if !guarded.Guarded() || guarded.GuardMargin() != 50*time.Millisecond {
		t.Fatalf("Guarded %v, GuardMargin %v: want true, the declared 50ms", guarded.Guarded(), guarded.GuardMargin())
	}
	predict := func(p model.Params, mode string) Prediction {
		t.Helper()
		pr, ok := PredictMode(p, mode, size)
		if !ok {
			t.Fatalf("no prediction for %s", mode)
		}
		return pr
	}

	before, after := predict(spec, model.ModePartitionBlackhole), predict(guarded, model.ModePartitionBlackhole)
	if before.MaxOverlap <= 0 || before.MinStale <= 0 {
		t.Fatalf("spec client under a blackhole: overlap %v, min stale %v; the test expects both", before.MaxOverlap, before.MinStale)
	}
	if after.MaxOverlap != 0 || after.MinStale != 0 {
		t.Errorf("guarded client under a blackhole: overlap %v (%s), min stale %v: want 0 and 0, the guard demotes before the key expires",
			after.MaxOverlap, after.OverlapFormula, after.MinStale)
	}
	// A 14 s blackhole outlasts the call: only a renewal that reached Redis
	// before it lands, and the guard's own term covers that key.
	if after.MaxGap < 1032*time.Millisecond*2 || strings.Contains(after.GapFormula, "runs on") {
		t.Errorf("guarded client under a 14 s blackhole: gap %v (%s): want the guard's term, at least the measured 2.064 s (1.032 s at time scale 0.5)", after.MaxGap, after.GapFormula)
	}
	// A shorter one heals while the call still retries: its retry lands
	// as late as the call's end (C), the key lives TTL after that, and a
	// follower wins within Wait.
	short := size
	short.Partition = 4 * time.Second
	pr, _ := PredictMode(guarded, model.ModePartitionBlackhole, short)
	left := guardLeft(guarded, short)
	want := pr.Call + hop + guarded.TTL + guarded.Wait + hop - left
	if pr.MaxGap != want || !strings.Contains(pr.GapFormula, "validity guard") {
		t.Errorf("guarded client under a 4 s blackhole: gap %v (%s), want C + hop + TTL + Wait + hop - guardLeft = %v", pr.MaxGap, pr.GapFormula, want)
	}
	// The failover runs from the fault's start, not the demotion: with
	// Wait 3 s and a 12 s blackhole the renewal (2.505 s in) times out at
	// 7.505 s, its retry hangs until the heal's EOF at 12 s, lands then and
	// keeps the key to 17.05 s; a follower may win only at 20.05 s.
	w3 := guarded
	w3.Wait = 3 * time.Second
	twelve := size
	twelve.Partition = 12 * time.Second
	if pr, _ := PredictMode(w3, model.ModePartitionBlackhole, twelve); pr.MaxFailover < 20050*time.Millisecond || pr.MaxFailover < pr.MaxGap {
		t.Errorf("guarded client, Wait 3s, 12 s blackhole: failover %v (%s), gap %v: want at least 20.05 s and the gap", pr.MaxFailover, pr.FailoverFormula, pr.MaxGap)
	}
	// Such a client may renew TTL/2 + jitter after the last reply (the
	// spec's cadence), not the send: under latency its renewal goes out a
	// round trip later, closer to its guard.
	safeP := spec
	safeP.Safe, safeP.SafeMargin = true, guarded.Client.ValidityMargin
	if got, want := guardLeft(guarded, size), guardLeft(safeP, size)-2*size.Latency; got != want {
		t.Errorf("guardLeft under 400 ms latency: %v, want safe mode's less the round trip, %v", got, want)
	}
	// Replies dropped: every retry's request lands.
	if pr := predict(guarded, model.ModePartitionReplies); !strings.Contains(pr.GapFormula, "runs on") {
		t.Errorf("guarded client, replies dropped: gap %v (%s), want the late landing", pr.MaxGap, pr.GapFormula)
	}

	for _, mode := range []string{model.ModePause, model.ModeSuspend, model.ModeRedisPause, model.ModeFailover} {
		if pr := predict(guarded, mode); pr.MaxGap != model.Unbounded || pr.MaxFailover != model.Unbounded {
			t.Errorf("guarded client, %s: gap %v, failover %v; want unbounded (a late landing there is not modelled)", mode, pr.MaxGap, pr.MaxFailover)
		}
	}
	// The guard only shortens a belief: a leader's overlap is never above
	// the spec client's.
	for _, mode := range Modes {
		s, g := predict(spec, mode), predict(guarded, mode)
		if g.MaxOverlap > s.MaxOverlap {
			t.Errorf("%s: guarded overlap %v above the spec client's %v", mode, g.MaxOverlap, s.MaxOverlap)
		}
	}
	if d := guarded.Client.Describe(); !strings.Contains(d, "steps down at its lease's validity, margin 50ms") {
		t.Errorf("Describe = %q: does not say the client steps down at its validity", d)
	}
	// Safe mode keeps its own margin and abandons the call: no late landing.
	safe := spec
	safe.Safe = true
	if pr := predict(safe, model.ModePartitionBlackhole); strings.Contains(pr.GapFormula, "validity guard") {
		t.Errorf("safe mode explained as a client's validity guard: %s", pr.GapFormula)
	}
}
