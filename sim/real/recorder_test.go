package real

import (
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// Rebase restarts the run's clock where the instances began: what was
// recorded before moves with it, none before zero, and the clock (Since)
// counts from the new origin.
func TestRecorderRebase(t *testing.T) {
	r := NewRecorder(nil)
	r.Record(model.Event{Kind: model.RedisHolder, Instance: -1}) // before the instances began
	began := time.Now()
	r.Record(model.Event{Kind: model.InstanceStarted, Instance: 0})
	before := r.Timeline()
	r.Rebase(began)
	after := r.Timeline()
	shift := before[1].At - after[1].At
	if after[0].At != 0 {
		t.Errorf("an event before the new origin is at %v, want 0", after[0].At)
	}
	if shift <= 0 || shift > before[1].At {
		t.Errorf("the instance's start moved by %v (from %v to %v), want by the time before its start", shift, before[1].At, after[1].At)
	}
	if s := r.Since(); s < after[1].At {
		t.Errorf("Since %v after the rebase: before the instance's start at %v", s, after[1].At)
	}
	r.Rebase(began.Add(-time.Hour)) // before the origin: nothing moves
	if got := r.Timeline(); got[1].At != after[1].At {
		t.Errorf("a rebase before the origin moved an event from %v to %v", after[1].At, got[1].At)
	}
}
