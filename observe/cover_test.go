package observe_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/observe"
	"github.com/leaselab/leaselab/publish"
)

// troubled is a recording of k publishers of n transitions each, every
// one a truth the test knows: with losses, its instance's monotonic clock
// now and then loses up to 2 s (a suspended host); a write is now and then held up to
// 3 s (a partition), round trips are 0.1–1 ms and a quarter unknown, a
// sequence number is now and then skipped (a drop) and an entry now and
// then read twice. truth maps instance and term to the real offset from
// the watch's start.
func troubled(seed int64, k, n int, losses bool) (*observe.Recording, map[string]time.Duration) {
	r := rand.New(rand.NewSource(seed))
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	rec := &observe.Recording{Header: observe.Header{Group: "g", Key: election.LeaderKey("g"), Stream: publish.StreamKey("g"), Source: "generated",
		Lane: observe.LanePoll, Resolution: time.Millisecond, Start: start.Add(-time.Minute), RTT: time.Millisecond}}
	truth := map[string]time.Duration{}
	for p := range k {
		id := fmt.Sprintf("inst-%d", p)
		var lost, at, prevRTT time.Duration
		var seq uint64
		for range n {
			at += time.Duration(1+r.Intn(300)) * time.Millisecond
			if losses && r.Intn(15) == 0 {
				lost += time.Duration(r.Intn(2000)) * time.Millisecond
			}
			// The write is sent after the transition (held, now and then)
			// and lands one way later, at most its round trip.
			hold := time.Duration(r.Intn(200)) * time.Microsecond
			if r.Intn(10) == 0 {
				hold += time.Duration(r.Intn(3000)) * time.Millisecond
			}
			rtt := time.Duration(100+r.Intn(900)) * time.Microsecond
			seq++
			if r.Intn(20) == 0 {
				seq++
			}
			kind := []election.TransitionKind{election.Promoted, election.Demoted}[r.Intn(2)]
			e := publish.Entry{Kind: kind, Instance: id, Group: "g", Term: seq, Wall: start.Add(at), Mono: at - lost,
				PubWall: start.Add(at + hold), PubMono: at - lost + hold, Publisher: "p" + id, Seq: seq,
				Redis: start.Add(at + hold + time.Duration(r.Int63n(int64(rtt)))), TTL: time.Second, Wait: time.Second}
			if r.Intn(4) != 0 {
				e.RTT = prevRTT // the previous write's round trip, a quarter unknown
			}
			prevRTT = rtt
			rec.Entries = append(rec.Entries, e)
			if r.Intn(8) == 0 {
				rec.Entries = append(rec.Entries, e)
			}
			truth[fmt.Sprint(id, "/", seq)] = at + time.Minute
		}
	}
	r.Shuffle(len(rec.Entries), func(i, j int) { rec.Entries[i], rec.Entries[j] = rec.Entries[j], rec.Entries[i] })
	rec.End, rec.Ended = start.Add(time.Duration(n)*time.Second), "complete"
	return rec, truth
}

// TestBuildPlacementCoversTruth: every transition of publishers with
// hundreds of writes, writes held for seconds, drops, repeats and unknown
// round trips, is placed within its stated uncertainty of when it really
// happened: the writes far from it that Build no longer weighs
// (tieWindow) took nothing from the placement. (With clocks that lose
// time too, a transition before a loss is placed too late by up to its
// write's delay, weighing every write or the window's alike: 16,734 and
// 16,678 of 24,000 on these seeds.)
func TestBuildPlacementCoversTruth(t *testing.T) {
	for seed := range int64(20) {
		rec, truth := troubled(seed, 3, 400, false)
		res, err := observe.Build(context.Background(), rec, observe.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range res.Timeline {
			if e.Kind != model.LeaderGained && e.Kind != model.LeaderLost {
				continue
			}
			want, ok := truth[fmt.Sprint(e.ID, "/", e.Term)]
			if !ok {
				t.Fatalf("seed %d: %s term %d: no such transition", seed, e.ID, e.Term)
			}
			n++
			if d := (e.At - want).Abs(); d > e.Uncertainty {
				t.Errorf("seed %d: %s term %d placed at %v ± %v, happened at %v (off by %v)", seed, e.ID, e.Term, e.At, e.Uncertainty, want, d)
			}
		}
		if n < 1000 {
			t.Fatalf("seed %d: %d transitions checked", seed, n)
		}
	}
}
