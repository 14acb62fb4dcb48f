package election_test

import (
	"errors"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
)

// checkMerged: what the late reader did not receive was merged, and counted.
func checkMerged(t *testing.T, e *election.Elector, got int) {
	t.Helper()
	if e.MergedSignals() < 100 {
		t.Errorf("MergedSignals = %d after ~200 unread signals", e.MergedSignals())
	}
	if l := e.Leadership(); l.Leader || l.Term < 50 || l.Safe || l.Token != 0 {
		t.Errorf("Leadership = %+v; want a follower after many terms, spec mode, no token", l)
	}
}

// checkStopFromReaderError: the error says what happened, and the lease
// was left to expire rather than released under a reader that never saw the
// demotion.
func checkStopFromReaderError(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, election.ErrDemotionNotDelivered) {
		t.Fatalf("Stop from the reader: %v; want ErrDemotionNotDelivered", err)
	}
}

// The documented pattern for stopping from the reader: go e.Stop(), keep
// reading until Done. It delivers the demotion and releases at once.
func TestStopFromTheSignalReaderPattern(t *testing.T) {
	rdb := redistest.Client(t)
	e, promote, demote, _ := election.NewElector(election.Opts{Redis: rdb, Key: t.Name(), TTL: 2 * time.Second, Wait: 3 * time.Second})
	e.Start()
	start := time.Time{}
	demoted := false
	for done := false; !done; {
		select {
		case <-promote:
			start = time.Now()
			go e.Stop()
		case <-demote:
			demoted = true
		case <-e.Done():
			done = true
		case <-time.After(5 * time.Second):
			t.Fatal("stuck")
		}
	}
	took := time.Since(start)
	if err := e.Stop(); err != nil || !demoted {
		t.Fatalf("Stop = %v, demotion received %v", err, demoted)
	}
	if took > time.Second {
		t.Fatalf("the stop took %v; want well within StopTimeout (2s)", took)
	}
	if n := rdb.Exists(t.Context(), e.Key()).Val(); n != 0 {
		t.Fatal("lease not released")
	}
	t.Logf("stopped from the reader in %v", took)
}
