package bounds

import (
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/analysis"
)

// winnerStampSlack is how late after a heal (and its hop) slowWinner still
// takes a belief for one the fault's held reply made: the stamping of a
// belief seen as the reply lands. Counting a clean win that soon after only
// loosens the bound.
const winnerStampSlack = 10 * time.Millisecond

// laneStampSlack is how late after a heal (and its hop) a belief may be
// stamped and still be told by the Redis lane for one the fault's held
// reply made (lastLanding): the slack predicted limits take for
// measurement error, or the harness's largest measured stall when the
// machine was later than that. Past it, a landing the lane puts before the
// heal is taken for something else than the reply the belief read (a lane
// stretch the watcher merged), and only the time rule decides.
func laneStampSlack(a analysis.Analysis) time.Duration {
	s := DefaultSlack
	for _, st := range a.Stalls {
		s = max(s, st.Late)
	}
	return s
}

// slowWinner reports whether fault f, on instances that were not leading
// at its injection, slowed one that then won while it lasted, and when that
// one first believed: from then on it is a leader's fault of f's mode. A
// follower under latency wins with its belief a reply late and renews late;
// one with a slow clock renews late (a fast one fires its safe-mode guard
// early): as a leader hit at that moment. Without it a follower slowed by
// 4.9 s replies that won after a leader's crash measured a gap of 12.9 s,
// an overlap of 3.3 s and stale leadership of 7.3 s of the crash's 11 s, 0
// and 0; one at 0.2× an overlap of 3.98 s. Pauses chain through
// StoppedAcquire, and a crashed follower cannot win. A partitioned one can
// win only with a reply already on its way when the cut came: its SET NX
// landed, the reply left Redis, and the follower believes a hop later, a
// leader under the cut from then (a replies-dropped partition 10 µs after
// the landing: the winner believed 10 s, an overlap of 3.711 s and stale
// leadership of 5.049 s against the crash's 0 and 0). Under latency, a
// belief stamped past that window (within laneStampSlack) still counts
// when the Redis lane saw its SET NX land while the fault lasted
// (lastLanding): a loaded machine stamps a released reply's belief late,
// and the window's 10 ms alone would judge the win a clean one. Not for a
// partition: a reply in flight at the cut landed microseconds before it,
// closer than the lane's own stamps tell.
func slowWinner(f model.FaultOutcome, a analysis.Analysis) (time.Duration, bool) {
	spec := model.KindSpecOf(model.FaultKind(f.Kind))
	if spec.Downs || f.Instant || f.LeaderHit {
		return 0, false
	}
	// A reply on its way when the fault came, and the harness's stamping
	// of the belief it makes.
	until := f.Applied + hop + winnerStampSlack
	if spec.SlowWinner {
		// The heal releases a reply the latency held: a winner whose SET
		// NX landed while the fault lasted believes a hop after the heal,
		// and the harness may stamp that a little later still (a follower
		// under 4.5 s replies healed 50 ms before its winning reply was
		// due believed 50 µs after the heal: uncounted, it measured an
		// overlap of 1.54 s and a failover of 12.15 s against 0.25 s and
		// 11.26 s).
		until = f.Healed + hop + winnerStampSlack
		if f.Open {
			until = a.End
		}
	}
	for _, b := range a.Beliefs {
		if b.Start <= f.Applied || !f.Hits(b.Instance) {
			continue
		}
		// The first belief of a hit instance after the injection: the
		// fault's winner if it came in time, or (on a loaded machine that
		// stamped it late) if the Redis lane saw its SET NX land in time.
		if b.Start <= until {
			return b.Start, true
		}
		if spec.SlowWinner && b.Start <= f.Healed+hop+laneStampSlack(a) {
			if landed, ok := lastLanding(a.Redis.Holders, b); ok && landed > f.Applied && landed <= f.Healed {
				return b.Start, true
			}
		}
		return 0, false
	}
	return 0, false
}
