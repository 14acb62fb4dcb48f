package observe_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/observe"
	"github.com/leaselab/leaselab/publish"
)

// TestBuildPlacesSuspendedOverlap: a leader's host is suspended for 2 s
// (its monotonic clock stops with it) while its lease expires and another
// instance takes over; at resume it demotes and writes that at once, its
// last entry. Its clock says the demotion came 300 ms after its promotion,
// Redis says 2.3 s: the write was held, or the clock stopped, and nothing
// settles which. The middle of that span lies before the other's
// promotion, so placing the demotion there hid the 0.6 s overlap; it is
// placed where its belief is longest, ± the whole span, and the overlap is
// shown with that uncertainty, covering the truth, and noted.
func TestBuildPlacesSuspendedOverlap(t *testing.T) {
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	const oneWay = 500 * time.Microsecond
	// entry is a transition at real time at, which the instance's clock
	// reads as mono, written at once.
	entry := func(kind election.TransitionKind, id string, seq uint64, at, mono time.Duration) publish.Entry {
		w := start.Add(at)
		return publish.Entry{Kind: kind, Instance: id, Group: "g", Term: seq, Wall: w, PubWall: w, Mono: mono, PubMono: mono,
			RTT: 2 * oneWay, Publisher: "p" + id, Seq: seq, Redis: w.Add(oneWay), TTL: time.Second, Wait: time.Second}
	}
	rec := &observe.Recording{
		Header: observe.Header{Group: "g", Key: election.LeaderKey("g"), Stream: publish.StreamKey("g"), Source: "test",
			Lane: observe.LanePoll, Resolution: 50 * time.Millisecond, Start: start, RTT: time.Millisecond},
		Entries: []publish.Entry{
			entry(election.Promoted, "a", 1, 100*time.Millisecond, 100*time.Millisecond),
			// suspended from 0.3 s to 2.3 s: its clock reads 0.4 s at 2.4 s
			entry(election.Demoted, "a", 2, 2400*time.Millisecond, 400*time.Millisecond),
			entry(election.Promoted, "b", 1, 1800*time.Millisecond, 1800*time.Millisecond),
			entry(election.Demoted, "b", 2, 3000*time.Millisecond, 3000*time.Millisecond),
		},
		End: start.Add(4 * time.Second), Ended: "complete",
	}
	res, err := observe.Build(context.Background(), rec, observe.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ovs := res.Analysis.Overlaps
	if len(ovs) != 1 {
		t.Fatalf("overlaps %+v: want the one the suspended leader's late demotion made", ovs)
	}
	const truth = 600 * time.Millisecond
	if o := ovs[0]; (o.Duration-truth).Abs() > o.Uncertainty || o.Uncertainty < 2*time.Second-10*time.Millisecond {
		t.Fatalf("overlap %v ± %v: want it to cover %v with the whole 2 s the clock may have lost", o.Duration, o.Uncertainty, truth)
	}
	noted := false
	for _, n := range res.Observed.Notes {
		noted = noted || strings.Contains(n, "the clock stopped")
	}
	if !noted {
		t.Fatalf("no note of the transition that could not be settled (notes %q)", res.Observed.Notes)
	}
}

// TestBuildHonoursCancel: Build of a long recording returns as soon as its
// context ends (Ctrl-C), with the context's error.
func TestBuildHonoursCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := observe.Build(ctx, handovers(100_000, 3), observe.Limits{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Build with its context ended: %v, want %v", err, context.Canceled)
	}
}
