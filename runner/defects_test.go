package runner

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"
)

// crc16 is Redis Cluster's key hash (CRC16-XMODEM).
func crc16(b string) uint16 {
	var crc uint16
	for i := 0; i < len(b); i++ {
		crc ^= uint16(b[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// slot is the Redis Cluster hash slot of key, hash tags included.
func slot(key string) uint16 {
	if s := indexByte(key, '{'); s >= 0 {
		if e := indexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	return crc16(key) % 16384
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// Defect 6: a group name with a brace used to split the group's keys over
// several Cluster slots (CROSSSLOT on every multi-key script). Every key of
// a group, the lease and the fencing token included, must share one slot.
func TestGroupKeysShareOneSlot(t *testing.T) {
	if got := slot("{user1000}.following"); got != slot("{user1000}.followers") || crc16("123456789") != 0x31C3 {
		t.Fatal("the test's own slot function is wrong")
	}
	for _, g := range []string{"emails", "}x", "{", "}", "a}b", "{a}", "x{y}z", "日本"} {
		k := keysFor(g)
		want := slot(k.stream)
		for name, key := range map[string]string{"delayed": k.delayed, "dead": k.dead, "metrics:n": k.metricsN,
			"metrics:us": k.metricsUS, "instances": k.instances, "capacity": k.capacity, "lease": k.lease, "token": k.token} {
			if s := slot(key); s != want {
				t.Errorf("group %q: key %s (%s) in slot %d, stream %s in slot %d", g, name, key, s, k.stream, want)
			}
		}
	}
}

// Defect 7: queued × average overflowed int64 for a large queue.
func TestPredictWaitNoOverflow(t *testing.T) {
	for _, c := range []struct {
		queued              int64
		avg                 time.Duration
		instances, capacity int
		want                time.Duration
	}{
		{10, time.Second, 1, 2, 5 * time.Second},
		{0, time.Second, 1, 1, 0},
		{1 << 40, time.Hour, 1, 1, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, 1, 1, math.MaxInt64},
		{1 << 40, time.Hour, 1 << 20, 1 << 10, 1 << 10 * time.Hour},
	} {
		if got := predictWait(c.queued, c.avg, c.instances, c.capacity); got != c.want {
			t.Errorf("predictWait(%d, %v, %d, %d) = %v; want %v", c.queued, c.avg, c.instances, c.capacity, got, c.want)
		}
	}
}

// Defect 1: a leader kept running its chores after the elector demoted it,
// while an OnEvent hook was blocked on a leadership event. Chores follow the
// elector's own state, whatever the hook does.
func TestChoresStopAtDemotionWhileHookBlocks(t *testing.T) {
	f := newFleet(t)
	admin := dial(t, f.addr)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	defer unblock()
	cfg := f.config(map[string]Task{"noop": {Handler: func(context.Context, []byte) error { return nil }}})
	cfg.Election.Wait = time.Hour // no re-election after the demotion
	cfg.OnEvent = func(e Event) {
		f.rec.add(e)
		if e.Kind == EventLeadership && e.Leader {
			<-release // a hook stuck on the promotion
		}
	}
	r := f.start(cfg)
	t.Cleanup(unblock) // before the fleet's Stop (cleanups run last-in first-out)
	eventually(t, 5*time.Second, "the leader's first chore", func() bool { return len(f.rec.all(EventChore)) > 0 })
	// Take the lease away: the next renewal returns 0 and the elector demotes.
	if err := admin.Del(context.Background(), r.keys.lease).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the elector to demote", func() bool { return !r.elector.IsLeader() })
	n := len(f.rec.all(EventChore))
	// Three more chore ticks: every instance heartbeats on each.
	beats := 0
	last := admin.ZScore(context.Background(), r.keys.instances, r.id).Val()
	eventually(t, 5*time.Second, "three more chore ticks", func() bool {
		if s := admin.ZScore(context.Background(), r.keys.instances, r.id).Val(); s != last {
			beats, last = beats+1, s
		}
		return beats >= 3
	})
	if extra := len(f.rec.all(EventChore)) - n; extra > 1 { // one may have been under way
		t.Errorf("%d leader chores ran after the elector demoted this instance", extra)
	}
	if r.IsLeader() {
		t.Error("IsLeader still true after the elector demoted")
	}
}
