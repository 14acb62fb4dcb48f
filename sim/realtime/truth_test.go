package realtime

import (
	"context"
	"testing"
	"time"

	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/model"
)

// TestFollowWaitsForASlowNode: the watcher follows the lease to a node
// that answers nothing for longer than its one-second timeout (a CLIENT
// PAUSE ALL of 1.5 s stands in for a node just promoted on a loaded
// machine) and reads the holder there once it answers. Before, the first
// timeout ended the failover with a harness error.
func TestFollowWaitsForASlowNode(t *testing.T) {
	ctx := context.Background()
	from, to := redistest.Start(t), redistest.Start(t)
	toc := redistest.ClientAt(t, to.Addr)
	if err := toc.Set(ctx, "lease", "holder-on-the-new-node", 0).Err(); err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(nil)
	truth, err := WatchTruth(ctx, from.Addr, "lease", rec)
	if err != nil {
		t.Fatal(err)
	}
	defer truth.Close()
	if err := toc.Do(ctx, "CLIENT", "PAUSE", 1500, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := truth.Follow(ctx, to.Addr, "failover"); err != nil {
		t.Fatalf("Follow: %v", err)
	}
	if took := time.Since(start); took < time.Second {
		t.Fatalf("Follow returned after %v: the node was paused for 1.5 s", took)
	}
	if h := truth.Holder(); h != "holder-on-the-new-node" {
		t.Fatalf("holder %q after following, want the new node's", h)
	}
	var moved bool
	for _, e := range rec.Timeline() {
		moved = moved || e.Kind == model.RedisHolder && e.Detail == "failover" && e.Holder == "holder-on-the-new-node"
	}
	if !moved {
		t.Errorf("no holder event for the move in %v", rec.Timeline())
	}
}
