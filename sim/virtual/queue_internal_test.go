package virtual

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestQueueOrder: the queue hands events out by (at, seq) whatever mix of
// heap and same-instant FIFO it uses, as events are queued while others
// are handed out (never before the last one handed out, as world.at
// ensures).
func TestQueueOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var q queue
	var now time.Duration
	var want, got []event
	add := func() {
		d := time.Duration(0)
		if r.IntN(2) == 0 {
			d = time.Duration(r.IntN(5)) * time.Millisecond
		}
		q.add(event{at: now + d, a: int32(len(want))})
		want = append(want, event{at: now + d, seq: q.seq, a: int32(len(want))})
	}
	for range 50 {
		add()
	}
	for q.Len() > 0 {
		e := q.next()
		if e.at < now {
			t.Fatalf("event %d at %v handed out after %v", e.a, e.at, now)
		}
		now = e.at
		got = append(got, e)
		if len(want) < 20000 {
			for range r.IntN(3) {
				add()
			}
		}
	}
	slices.SortFunc(want, func(a, b event) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	if len(got) != len(want) {
		t.Fatalf("handed out %d events, queued %d", len(got), len(want))
	}
	for i := range want {
		if got[i].seq != want[i].seq {
			t.Fatalf("event %d: got seq %d at %v, want seq %d at %v", i, got[i].seq, got[i].at, want[i].seq, want[i].at)
		}
	}
}
