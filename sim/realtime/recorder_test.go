package realtime

import (
	"fmt"
	"slices"
	"strings"
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

// An incarnation is its index and its start, not its id: a crashed
// instance's later lines are dropped, but a restart under the same id (a
// pod or host name) is a new incarnation whose events count, and another
// instance announcing the crashed one's id (a shared id) loses nothing.
func TestRecorderKeysIncarnationsNotIDs(t *testing.T) {
	r := NewRecorder(nil)
	rec := func(k model.Kind, i int, id string) { r.Record(model.Event{Kind: k, Instance: i, ID: id}) }
	rec(model.InstanceStarted, 0, "pod-a")
	rec(model.InstanceStarted, 1, "pod-a") // a twin: the same id at another index
	rec(model.LeaderGained, 0, "pod-a")
	rec(model.InstanceCrashed, 0, "pod-a")
	rec(model.LeaderLost, 0, "pod-a")      // the crashed shell winding down: dropped
	rec(model.LeaderGained, 1, "pod-a")    // the twin's promotion: kept
	rec(model.InstanceStarted, 0, "pod-a") // the restart, under the same id: kept
	rec(model.LeaderGained, 0, "pod-a")    // and its promotion
	rec(model.InstanceCrashed, 1, "pod-a")
	rec(model.LeaderGained, 0, "pod-a") // index 0 is live: kept
	var got []string
	for _, e := range r.Timeline() {
		got = append(got, fmt.Sprintf("%s %d", e.Kind, e.Instance))
	}
	want := []string{"instance-started 0", "instance-started 1", "leader-gained 0", "instance-crashed 0",
		"leader-gained 1", "instance-started 0", "leader-gained 0", "instance-crashed 1", "leader-gained 0"}
	if !slices.Equal(got, want) {
		t.Errorf("recorded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
