package realtime

import (
	"context"
	"testing"
	"time"

	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/env"
)

// TestRedisPauseEndsAtItsHeal: an all pause injected late (1.5 s into a
// span planned to end at 2 s) asks Redis for what is left of the span, so
// Redis answers again at the planned heal, as the run records it. Before,
// it asked for the whole planned span from the late injection: Redis
// stayed paused past the recorded heal by the injection's lateness, and
// the bounds, computed from the recorded span, were too low.
func TestRedisPauseEndsAtItsHeal(t *testing.T) {
	admin := redistest.ClientAt(t, redistest.Start(t).Addr)
	rec := NewRecorder(nil)
	const end, late = 2 * time.Second, 1500 * time.Millisecond
	rec.Rebase(time.Now().Add(-late))
	fw := &faultWorld{env: &env.Environment{}, admin: admin, rec: rec}
	ctx := context.Background()
	if err := fw.PauseRedis(ctx, model.RedisPauseAll, end, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// Redis's timer started after the request was sized: the answer comes
	// at the planned end or after it, and well before the end plus the
	// lateness (Redis's own timer, a loopback round trip, the scheduler).
	at := rec.Since()
	t.Logf("planned end %v, Redis answered again at %v", end, at)
	if at < end-5*time.Millisecond || at >= end+late {
		t.Errorf("Redis answered again at %v: want at the planned end %v, not its end plus the lateness (%v)", at, end, end+late)
	}
}
