package model

import "time"

// slowWinner reports whether fault f, on instances that were not leading
// at its injection, slowed one that then won while it lasted, and when that
// one first believed: from then on it is a leader's fault of f's mode. A
// follower under latency wins with its belief a reply late and renews late;
// one with a slow clock renews late (a fast one fires its safe-mode guard
// early): as a leader hit at that moment. Without it a follower slowed by
// 4.9 s replies that won after a leader's crash measured a gap of 12.9 s,
// an overlap of 3.3 s and stale leadership of 7.3 s of the crash's 11 s, 0
// and 0; one at 0.2× an overlap of 3.98 s. Pauses chain through
// StoppedAcquire, and a crashed or partitioned follower cannot win.
func slowWinner(f FaultOutcome, a Analysis) (time.Duration, bool) {
	if k := FaultKind(f.Kind); (k != FaultLatency && k != FaultClock) || f.Instant || f.LeaderHit {
		return 0, false
	}
	until := f.Healed
	if f.Open {
		until = a.End
	}
	for _, b := range a.Beliefs {
		if b.Start > until {
			break // beliefs are in order of start
		}
		if b.Start > f.Applied && f.hits(b.Instance) {
			return b.Start, true
		}
	}
	return 0, false
}
