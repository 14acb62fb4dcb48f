package bounds

import (
	"github.com/leaselab/leaselab/model"

	"testing"
	"time"
)

// TestRedisPauseBound: the leader believes past its key for the pause less
// TTL/2 (its renewal waits at Redis), capped by its call; the overlap is
// the leader's retry backoff at the end; explore found 11.006 s stale of
// 11.008 s predicted, 38 ms overlap of 95 ms (2026-12-02).
func TestRedisPauseBound(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		name         string
		c            model.ClientParams
		pause, stale time.Duration
	}{
		{"defaults: the call (20.17 s) outlasts an 8 s pause", model.ClientParams{}, 8 * time.Second, 8*time.Second - 2500*ms + 5*ms + hop},
		{"a 1 s read timeout: the call (4.17 s) gives up first", model.ClientParams{ReadTimeout: time.Second}, 8 * time.Second, 4170*ms - 2500*ms + 5*ms + hop},
	} {
		pr, ok := PredictMode(model.Params{Client: tt.c}, model.ModeRedisPause, model.FaultSize{RedisPause: tt.pause})
		if !ok {
			t.Fatalf("%s: no prediction", tt.name)
		}
		if pr.MaxStale != tt.stale {
			t.Errorf("%s: stale %v (%s), want %v", tt.name, pr.MaxStale, pr.StaleFormula, tt.stale)
		}
		if pr.MaxOverlap != 95*ms {
			t.Errorf("%s: overlap %v (%s), want backoff(3) + 5 hops = 95ms", tt.name, pr.MaxOverlap, pr.OverlapFormula)
		}
	}
	if model.ModeOf(model.FaultRedisPause, "") != model.ModeRedisPause {
		t.Errorf("redis-pause has mode %q", model.ModeOf(model.FaultRedisPause, ""))
	}
}

// TestRedisPauseComposes: a renewal a redis-pause holds delays the leader's
// learning by min(P, C) + hop, on top of the other faults' delays; with a
// key lost behind the leader's back, without the - TTL. The bounds took the
// largest single bound, and explore broke them by 4× (a restart then a
// redis-pause: 10.287 s of 2.535 s).
func TestRedisPauseComposes(t *testing.T) {
	ms := time.Millisecond
	size := model.FaultSize{RedisPause: 8 * time.Second, Pause: 4 * time.Second, RedisDowntime: 680 * ms}
	for _, tt := range []struct {
		name  string
		modes []string
		want  time.Duration
	}{
		{"a lost key, then a held renewal", []string{model.ModeLeaseLoss, model.ModeRedisPause}, 2500*ms + 5*ms + 8*time.Second + hop},
		{"a held renewal, then a pause of the leader", []string{model.ModeRedisPause, model.ModePause}, 2500*ms + 5*ms + 4*time.Second + 8*time.Second + hop - 5*time.Second},
	} {
		d, f, ok := ComposeOverlap(model.Params{}, tt.modes, size)
		if !ok || d != tt.want {
			t.Errorf("%s: %v (%s, ok %v), want %v", tt.name, d, f, ok, tt.want)
		}
	}
}
