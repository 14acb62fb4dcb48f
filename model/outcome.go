package model

import (
	"slices"
	"time"
)

// Member identifies one incarnation of an instance: its index and the elector
// id it runs with. A restart at the same index gets a new id, so it is a new
// Member and its leadership is not confused with its predecessor's.
type Member struct {
	Instance int    `json:"instance"`
	ID       string `json:"id"`
}

// Window is the half-open interval [Start, End) of the run's clock.
type Window struct {
	Start    time.Duration `json:"start"`
	End      time.Duration `json:"end"`
	Duration time.Duration `json:"duration"`
	// Open means the window was still going when the run ended: End is the
	// run's end and Duration only a lower bound.
	Open bool `json:"open,omitempty"`
	// Uncertainty is how far Duration may be off either way: the sum of the
	// uncertainties of the events at its two ends (Event.Uncertainty; only
	// the start's for an open window). 0 for the harness's own timelines.
	Uncertainty time.Duration `json:"uncertainty,omitempty"`
	// Longer and Shorter are how much longer and shorter than Duration ±
	// Uncertainty the window may be, from its ends' one-sided lateness
	// (Event.Late): a start that came earlier makes it longer (Longer, the
	// start's Late), an end that came earlier shorter (Shorter, the end's;
	// none for an open window). They bound this window alone: the other
	// events may move too, so the verdicts of a timeline with Late are
	// taken on its extreme timings (Analysis.LateRange).
	Longer  time.Duration `json:"longer,omitempty"`
	Shorter time.Duration `json:"shorter,omitempty"`
}

// Least is the shortest the window may really have been.
func (w Window) Least() time.Duration { return w.Duration - w.Uncertainty - w.Shorter }

// Most is the longest the window may really have been.
func (w Window) Most() time.Duration { return w.Duration + w.Uncertainty + w.Longer }

// Spread is how far the window may be off either way at most: what a report
// shows as its "±".
func (w Window) Spread() time.Duration { return w.Uncertainty + max(w.Longer, w.Shorter) }

// FaultSpan is one fault of the schedule from injection to heal, derived from
// its FaultApplied and FaultHealed events (matched by FaultID).
type FaultSpan struct {
	ID     int    `json:"id"`
	Kind   string `json:"kind"`
	Mode   string `json:"mode,omitempty"` // ModeOf(Kind, partition mode); "" when none applies
	Target []int  `json:"target,omitempty"`
	Detail string `json:"detail,omitempty"`

	Applied time.Duration `json:"applied"`
	// Healed is when the fault was undone; for an instant fault, when its
	// action finished (a restarted Redis answering again).
	Healed time.Duration `json:"healed"`
	// Open means no FaultHealed was recorded: Healed is the run's end.
	Open bool `json:"open,omitempty"`
	// Instant marks a single action with nothing to undo (redis-restart,
	// script-flush, a clock jump).
	Instant bool `json:"instant,omitempty"`
	// Reach is the end of the fault's influence as the analysis counts it:
	// an overlap or a demotion before Reach may be the fault's doing, one
	// after it is not. A fault that lasts reaches to its heal plus one lease
	// and one retry period (TTL + Wait, the worst-case crash gap), after
	// which leadership must have settled. An instant fault reaches to the
	// first stable leader after its action (a sole leader that lasts a
	// TTL), at most TTL + Wait after it: once leadership is settled, the
	// fault explains nothing that comes later. An unhealed fault reaches to
	// the end of the run. An instant fault also reaches no further than
	// just before the next fault to hit an instance that led at its action:
	// from then on that fault explains what its action does (a script
	// flush 5 s before a leader crash was taken for the crash's demotion,
	// its failover measured from the flush: 13.787 s against the crash's
	// 11.006 s, in the combination corpus).
	Reach time.Duration `json:"reach"`
}

// Hits reports whether the fault touched instance i. An empty Target means a
// fault on Redis or the network as a whole, which touches every instance.
func (f FaultSpan) Hits(i int) bool {
	return len(f.Target) == 0 || slices.Contains(f.Target, i)
}

// Touches reports whether w shares time with the fault's reach.
func (f FaultSpan) Touches(w Window) bool {
	return w.Start < f.Reach && w.End > f.Applied
}

// FaultOutcome is what one fault did to leadership. Pointer fields are nil
// when the value could not be measured; Note says why.
type FaultOutcome struct {
	FaultSpan
	// LeadersAtInjection believed just before the fault (Start < Applied <= End),
	// so a leader the fault itself crashed at that instant is included.
	LeadersAtInjection []Member `json:"leaders_at_injection,omitempty"`
	// LeaderHit is true when a leader at injection was in the fault's Target.
	LeaderHit bool `json:"leader_hit"`
	// Effect is what the fault caused on a hit leader that kept believing
	// through its reach (EffectError, EffectLapse; model/analysis/missed.go); "" when it
	// caused neither, or Demotion says what it caused.
	Effect string `json:"effect,omitempty"`
	// Demotion is injection → the last hit leader stopped believing, counted
	// only if that happened within the fault's Reach.
	Demotion *time.Duration `json:"demotion,omitempty"`
	// Failover is injection → the first stable leader after that demotion.
	Failover  *time.Duration `json:"failover,omitempty"`
	NewLeader *Member        `json:"new_leader,omitempty"`
	// Recovery is heal → a stable leader (0 when one was already leading).
	Recovery *time.Duration `json:"recovery,omitempty"`
	// FailoverShorter and RecoveryShorter are how much earlier than
	// measured the stable leader may have taken over (the Late of the line
	// that stamped it), FailoverUncertainty and RecoveryUncertainty how far
	// off it may be either way: both run from a harness event, exact, so
	// they are one window's Shorter and Uncertainty (faultWindow).
	FailoverShorter     time.Duration `json:"failover_shorter,omitempty"`
	FailoverUncertainty time.Duration `json:"failover_uncertainty,omitempty"`
	RecoveryShorter     time.Duration `json:"recovery_shorter,omitempty"`
	RecoveryUncertainty time.Duration `json:"recovery_uncertainty,omitempty"`
	Note                string        `json:"note,omitempty"`
	// Gaps and Overlaps index the windows of Analysis.Gaps and
	// Analysis.Overlaps that touched the fault's reach; MaxGap is the
	// longest of those gaps not excused, MaxOverlap the longest overlap.
	Gaps       []int         `json:"gaps,omitempty"`
	Overlaps   []int         `json:"overlaps,omitempty"`
	MaxGap     time.Duration `json:"max_gap,omitempty"`
	MaxOverlap time.Duration `json:"max_overlap,omitempty"`
}
