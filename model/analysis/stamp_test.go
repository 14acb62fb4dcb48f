package analysis

import (
	"github.com/leaselab/leaselab/model"

	"testing"
	"time"
)

// TestStampLateness: the stamping lateness of agents' events is collected;
// a delayed task's lateness and the Redis lane's are not.
func TestStampLateness(t *testing.T) {
	ms := time.Millisecond
	tl := model.Timeline{
		{At: 0, Kind: model.InstanceStarted, Instance: 0, ID: "a"},
		{At: 1 * ms, Kind: model.LeaderGained, Instance: 0, ID: "a", Lateness: 3 * ms},
		{At: 2 * ms, Kind: model.RedisHolder, Instance: -1, Holder: "a", Lateness: 50 * ms},
		{At: 3 * ms, Kind: model.DelayedDue, Instance: 0, ID: "a", Lateness: 900 * ms},
		{At: 4 * ms, Kind: model.ChoreRan, Instance: 0, ID: "a", Chore: "scheduler", Lateness: 1 * ms},
		{At: 10 * ms, Kind: model.RunEnded, Instance: -1},
	}
	got := Analyze(tl, model.Params{TTL: time.Second, Wait: time.Second}.WithDefaults()).StampLateness
	if got.Count != 2 || got.Max != 3*ms || got.Min != 1*ms {
		t.Fatalf("stamp lateness %+v, want 2 stamps, 1 ms to 3 ms", got)
	}
}
