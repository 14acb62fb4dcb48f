package election

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestIsLeaderNoFlickerAtDemotion: after the guard deadline IsLeader is false,
// and stays false while the loop publishes the demotion (it used to store
// guard=nil before leading=false, and IsLeader read true in between).
func TestIsLeaderNoFlickerAtDemotion(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled: the loop is not started
	defer rdb.Close()
	e, _, _, _ := NewElector(Opts{Redis: rdb, Key: "k", TTL: time.Second, Wait: time.Second, Safe: true})
	m := NewMachine(MachineOptions{TTL: time.Second, Wait: time.Second, Safe: true})
	m.Start()
	var stop, seen atomic.Bool
	var phase atomic.Int64 // odd: guard expired, loop demoting
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			p := phase.Load()
			if p%2 == 1 && e.IsLeader() {
				seen.Store(true)
			}
		}
	}()
	expired := &guard{base: time.Now().Add(-time.Hour), in: time.Second}
	for i := 0; i < 2000000 && !seen.Load(); i++ {
		m.Finish(Outcome{Op: OpAcquire, OK: true, Token: 1})
		e.publish(m, time.Now(), expired) // leading, guard already passed: IsLeader false
		phase.Add(1)
		m.Expired()
		e.publish(m, time.Now(), nil) // the loop acting on the guard
		phase.Add(1)
		m.Timer()
	}
	stop.Store(true)
	<-done
	if seen.Load() {
		t.Fatal("IsLeader returned true after the guard deadline, while the loop published the demotion")
	}
}
