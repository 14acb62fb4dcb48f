package election_test

import (
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
)

// An elector whose signals nobody reads (its user polls IsLeader) releases
// the lease at Stop at once: no reader ever received the promotion, so none
// can be acting on it.
func TestStopWithNoReaderReleases(t *testing.T) {
	for _, safe := range []bool{false, true} {
		t.Run(map[bool]string{false: "spec", true: "safe"}[safe], func(t *testing.T) {
			rdb := redistest.Client(t)
			e, _, _, _ := election.NewElector(election.Opts{Redis: rdb, Key: t.Name(), TTL: 2 * time.Second, Wait: time.Hour, Safe: safe})
			e.Start()
			waitFor(t, 2*time.Second, "leads", e.IsLeader)
			start := time.Now()
			err := e.Stop()
			took := time.Since(start)
			if err != nil {
				t.Fatalf("Stop = %v after %v", err, took)
			}
			if n := rdb.Exists(t.Context(), e.Key()).Val(); n != 0 {
				t.Fatalf("lease not released (Stop took %v)", took)
			}
			t.Logf("stopped and released in %v", took)
		})
	}
}
