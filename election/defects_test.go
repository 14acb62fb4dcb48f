package election_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
)

// fakeLease answers the lease scripts without Redis, so a test can make an
// elector flap as fast as its timers allow, then stop flapping.
type fakeLease struct {
	redis.Scripter // a real client, never reached: only EvalSha is called
	mode           atomic.Int32
	calls          atomic.Int64
}

const (
	flap  = iota // odd calls (acquires) win, even calls (renews) fail
	quiet        // every call returns 0: a follower stays one
)

var errFlap = errors.New("flap")

func (f *fakeLease) EvalSha(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	n := f.calls.Add(1)
	switch {
	case f.mode.Load() == quiet:
		cmd.SetVal(int64(0))
	case n%2 == 1:
		cmd.SetVal(int64(1))
	default:
		cmd.SetErr(errFlap)
	}
	return cmd
}

func newFake(t *testing.T) *fakeLease {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = rdb.Close() })
	return &fakeLease{Scripter: rdb}
}

// Defect 2: with nobody reading, a flapping elector used to queue every
// promote/demote pair, and a late reader replayed them all.
func TestUnreadSignalsAreCoalesced(t *testing.T) {
	f := newFake(t)
	e, promote, demote, _ := election.NewElector(election.Opts{Redis: f, Key: t.Name(), TTL: 4 * time.Millisecond, Wait: time.Millisecond, StopTimeout: 5 * time.Second})
	e.Start()
	waitFor(t, 10*time.Second, "the unread elector to flap 100 times", func() bool { return f.calls.Load() > 200 })
	f.mode.Store(quiet)
	waitFor(t, 5*time.Second, "the elector to settle as a follower", func() bool { n := f.calls.Load(); return !e.IsLeader() && n > 0 })

	var got []string
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-promote:
				got = append(got, "promote")
			case <-demote:
				got = append(got, "demote")
			case <-stop:
				return
			}
		}
	}()
	if err := e.Stop(); err != nil { // delivers what is still queued, then returns
		t.Logf("Stop: %v", err)
	}
	close(stop)
	<-done
	t.Logf("a late reader received %d signals after %d script calls", len(got), f.calls.Load())
	if len(got) > 4 {
		t.Fatalf("a late reader replayed %d old signals; want the pending one and the latest (at most 3, +1 decided meanwhile)", len(got))
	}
	for i, s := range got {
		if want := []string{"promote", "demote"}[i%2]; s != want {
			t.Fatalf("signal %d is %s, want %s (signals must alternate, starting with promote): %v", i, s, want, got)
		}
	}
	checkMerged(t, e, len(got))
}

// Defect 3: Stop must not delete the lease before the reader has received
// the demotion, or another instance leads while this one still acts.
func TestStopReleasesOnlyAfterTheDemotionWasDelivered(t *testing.T) {
	srv := redistest.Start(t) // keyspace notifications on
	admin := redistest.ClientAt(t, srv.Addr)
	rdb := redistest.ClientAt(t, srv.Addr)
	key := t.Name()
	lk := election.LeaderKey(key)
	ctx := context.Background()
	sub := admin.Subscribe(ctx, "__keyspace@0__:"+lk)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	deleted := make(chan time.Time, 1)
	go func() {
		for m := range sub.Channel() {
			if m.Payload == "del" {
				deleted <- time.Now()
				return
			}
		}
	}()
	e, promote, demote, _ := election.NewElector(election.Opts{Redis: rdb, Key: key, TTL: 2 * time.Second, Wait: 3 * time.Second})
	e.Start()
	select {
	case <-promote:
	case <-time.After(2 * time.Second):
		t.Fatal("no promotion")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- e.Stop() }()
	time.Sleep(200 * time.Millisecond) // a slow reader: it gets to the demotion 200ms late
	// The time is taken before the receive: the hand-over happens after it,
	// and the elector may release the lease (and Redis announce it) before
	// this goroutine runs again, so a time taken after the receive can be
	// later than a correct release.
	received := time.Now()
	<-demote
	if err := <-stopped; err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case at := <-deleted:
		if at.Before(received) {
			t.Fatalf("the lease was deleted %v before the reader came to receive the demotion", received.Sub(at))
		}
		t.Logf("lease deleted %v after the reader came to receive the demotion", at.Sub(received))
	case <-time.After(2 * time.Second):
		t.Fatal("the lease was never released")
	}
}

// Defect 4: Stop called from the goroutine that reads the signals cannot
// hand the demotion over; it used to wait for StopTimeout and return nil.
func TestStopFromTheSignalReader(t *testing.T) {
	rdb := redistest.Client(t)
	e, promote, _, _ := election.NewElector(election.Opts{Redis: rdb, Key: t.Name(), TTL: ttl, Wait: wait})
	e.Start()
	select {
	case <-promote:
	case <-time.After(2 * time.Second):
		t.Fatal("no promotion")
	}
	start := time.Now()
	err := e.Stop() // from the reader: nobody can receive the demotion now
	t.Logf("Stop from the reader: %v after %v", err, time.Since(start))
	if err == nil {
		t.Fatal("Stop from the signal reader returned nil although the demotion was never delivered")
	}
	checkStopFromReaderError(t, err)
}

// Defect 5: a huge JitterMS overflowed the check and passed Validate.
func TestValidateHugeJitter(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	for _, j := range []int{math.MaxInt, math.MaxInt / 1000, 1 << 40, 2500} {
		o := election.Opts{Redis: rdb, Key: "k", TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: j}
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "JitterMS") {
			t.Errorf("Validate(JitterMS %d) = %v; want an error about JitterMS", j, err)
		}
	}
	o := election.Opts{Redis: rdb, Key: "k", TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: 2499}
	if err := o.Validate(); err != nil {
		t.Errorf("Validate(JitterMS 2499, TTL 5s) = %v; want nil", err)
	}
}
