package observe_test

import (
	"fmt"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/observe"
	"github.com/leaselab/leaselab/publish"
)

// handovers is a recording of n transitions of a fleet of k instances,
// each its own publisher, handing the lease over in turn: instance i%k is
// promoted at i×period and demoted 0.9 period later — every tenth 1.05
// period later, after the next one's promotion (an overlap, and a stale
// window: the key moved on) — each written at once (a one-way trip of
// 250µs, round trips of 500µs), the key following.
func handovers(n, k int) *observe.Recording {
	start := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	const period, oneWay = 100 * time.Millisecond, 250 * time.Microsecond
	group := "bench"
	rec := &observe.Recording{Header: observe.Header{Group: group, Key: election.LeaderKey(group), Stream: publish.StreamKey(group),
		Source: "generated", Lane: observe.LaneNotify, Resolution: time.Millisecond, Start: start, RTT: 2 * oneWay}}
	seq := make([]uint64, k)
	rec.Entries = make([]publish.Entry, 0, n)
	for i := 0; len(rec.Entries) < n; i++ {
		inst := i % k
		id := fmt.Sprintf("instance-%03d", inst)
		for j, kind := range []election.TransitionKind{election.Promoted, election.Demoted} {
			if len(rec.Entries) == n {
				break
			}
			late := i%10 == 9
			at := time.Duration(i)*period + time.Duration(j)*period*9/10
			if j == 1 && late {
				at = time.Duration(i)*period + period*105/100
			}
			seq[inst]++
			e := publish.Entry{Kind: kind, Instance: id, Group: group, Term: uint64(i + 1), Token: int64(i + 1),
				Wall: start.Add(at), Mono: at, PubWall: start.Add(at + 50*time.Microsecond), PubMono: at + 50*time.Microsecond,
				Publisher: fmt.Sprintf("pub-%03d", inst), Seq: seq[inst], Redis: start.Add(at + 50*time.Microsecond + oneWay),
				TTL: time.Second, Wait: time.Second}
			if seq[inst] > 1 {
				e.RTT = 2 * oneWay
			}
			if kind == election.Demoted {
				e.Reason = election.ReasonStop
			}
			rec.Entries = append(rec.Entries, e)
			holder := ""
			if kind == election.Promoted {
				holder = id
			} else if late {
				continue // the key went to the next one already
			}
			rec.Holders = append(rec.Holders, observe.HolderChange{At: start.Add(at + oneWay), Holder: holder, Uncertainty: oneWay, Note: "set"})
		}
	}
	last := rec.Entries[len(rec.Entries)-1].Redis
	rec.End, rec.Ended = last.Add(time.Second), "complete"
	return rec
}
