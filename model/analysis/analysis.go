package analysis

import (
	"github.com/leaselab/leaselab/model"

	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"
)

// ClaimSlack is the measurement tolerance added to a bound before a claim is
// marked "not held". Believed leadership is timestamped when the harness sees
// the signal, one Redis round trip and a goroutine hand-off after the elector
// decided, and a loaded 2-core CI machine under -race adds tens of
// milliseconds of scheduling delay; 50 ms covers that without hiding a real
// violation of a bound measured in seconds.
const ClaimSlack = 50 * time.Millisecond

// ClaimVerdict is the outcome of checking one of the spec's claims.
type ClaimVerdict string

// Claim verdicts. "Not exercised" means the run never created the situation
// the claim talks about, so it says nothing either way.
const (
	Held         ClaimVerdict = "held"
	NotHeld      ClaimVerdict = "not held"
	NotExercised ClaimVerdict = "not exercised"
	// ClaimUnknown: the bound lies within the measurement's uncertainty
	// (an observed fleet's estimates, an agent's lines stamped late), so
	// the claim is neither held nor not held, as a check of the same
	// windows is unknown (see WithinUncertainty).
	ClaimUnknown ClaimVerdict = "unknown"
)

// NewWindow is the window [start, end), open if it ran to the run's end.
func NewWindow(start, end time.Duration, open bool) model.Window {
	return model.Window{Start: start, End: end, Duration: end - start, Open: open}
}

// Belief is one stretch during which an incarnation acted as leader.
type Belief struct {
	model.Member
	model.Window
	// EndedBy is the event that ended the belief: LeaderLost,
	// InstanceCrashed, InstanceStopped, InstanceStarted (the index restarted
	// under a new id without a crash being recorded) or RunEnded (Open).
	EndedBy model.Kind `json:"ended_by"`
}

// Overlap is a window in which two or more incarnations believed they led:
// the split brain the spec says the TTL bounds.
type Overlap struct {
	model.Window
	// Leaders is everyone who believed at some point of the window, ordered by
	// instance index then id.
	Leaders []model.Member `json:"leaders"`
}

// FaultRef names a fault from the schedule.
type FaultRef struct {
	ID      int           `json:"id"`
	Kind    string        `json:"kind"`
	Applied time.Duration `json:"applied"`
}

// Gap is a window with no believed leader, after the first leader appeared.
type Gap struct {
	model.Window
	// After is the fault applied most recently at or before the gap began, if
	// any: the likeliest cause.
	After *FaultRef `json:"after,omitempty"`
	// Excuse is set when for part of the gap no instance could have led (all
	// crashed, stopped, paused or partitioned).
	Excuse string `json:"excuse,omitempty"`
	// Counted is what the spec's gap claim measures: the whole gap, or for
	// an excused one its longest part in which some instance could have led
	// (the claim presumes a surviving instance that can reach Redis).
	Counted time.Duration `json:"counted"`
}

// Stale is a window in which an incarnation believed it led while the Redis
// key did not hold its id.
type Stale struct {
	model.Member
	model.Window
	Holder string `json:"holder"` // what the key held when the window began ("" = no key)
}

// Phantom is a window in which the Redis key held an id whose incarnation did
// not believe it led (demoted, crashed, or never told).
type Phantom struct {
	model.Member // Instance is -1 when the id belongs to no known incarnation
	model.Window
}

// RedisLane is the comparison of believed leadership with Redis truth.
type RedisLane struct {
	// Observed is false when the timeline has no RedisHolder event at all;
	// then Stale and Phantom are not computed rather than reporting every
	// belief as stale.
	Observed bool      `json:"observed"`
	Stale    []Stale   `json:"stale,omitempty"`
	Phantom  []Phantom `json:"phantom,omitempty"`
	// NotificationLateness is the lateness of keyspace notifications that
	// carried one (Lateness > 0): the measurement error of this lane.
	NotificationLateness DurationStats `json:"notification_lateness"`
	// BelowResolution counts the stale and phantom windows dropped as
	// shorter than TruthResolution.
	BelowResolution int `json:"below_resolution,omitempty"`
	// ShortStale are the stale windows dropped as shorter than
	// TruthResolution, kept for whoever derives stale leadership from the
	// windows' lengths (chaos prove: the drop is a comparison of a length
	// with TruthResolution, which decides the metric like any other).
	ShortStale []Stale `json:"-"`
	// Holders is what the key held, from the first observation to the end
	// of the run: one entry per stretch with the same holder (cut where
	// the holder's value becomes or stops being shared: Holding.Shared).
	Holders []Holding `json:"holders,omitempty"`
	// Unknown are the parts of beliefs where the key held a value that
	// cannot be told to be the believer's own or another's: its own value
	// while a live twin announced it too (Identity.Shared), or a value no
	// incarnation announced (Identity.Unannounced). Neither stale nor
	// not: the stale_leadership check is unknown unless it fails anyway.
	Unknown []Stale `json:"unknown,omitempty"`
}

// Holding is a stretch in which the lease key held one value.
type Holding struct {
	model.Window
	// Holder is the id in the key, "" for no key.
	Holder string `json:"holder"`
	// Instance is the index whose incarnation has that id, -1 for none,
	// an unknown id or a shared one.
	Instance int `json:"instance"`
	// Shared: two or more live incarnations announced the value then, so
	// which of them held the key cannot be told (Identity.Shared).
	Shared bool `json:"shared,omitempty"`
	// Unannounced: no incarnation announced the value (Identity.Unannounced).
	Unannounced bool `json:"unannounced,omitempty"`
}

// reachOf computes FaultSpan.Reach; sole are the sole-leader stretches,
// next is nextOnLeader's for f (-1: none).
func reachOf(f model.FaultSpan, next time.Duration, sole []stretch, p model.Params, end time.Duration, c compared) time.Duration {
	if f.Open {
		return end
	}
	settled := f.Healed + p.TTL + p.Wait
	if f.Instant {
		if at, _, ok := stableFrom(sole, f.Healed, p.TTL, c); ok {
			settled = c.min(settled, at)
		}
		if c.lt(f.Applied, next) {
			// The instant before the next fault's: a belief it ends, or a
			// window it opens, at its own moment is its doing.
			settled = c.min(settled, next-1)
		}
	}
	return c.min(settled, end)
}

// nextOnLeader is when the first fault after spans[i] was applied to an
// instance that believed it led at spans[i]'s action; -1 if none was.
func nextOnLeader(spans []model.FaultSpan, i int, beliefs []Belief, c compared) time.Duration {
	f := spans[i]
	next := time.Duration(-1)
	for _, g := range spans {
		if c.le(g.Applied, f.Applied) || (next >= 0 && c.le(next, g.Applied)) {
			continue
		}
		for _, b := range beliefs {
			if c.lt(b.Start, f.Applied) && c.le(f.Applied, b.End) && g.Hits(b.Instance) {
				next = g.Applied
				break
			}
		}
	}
	return next
}

// SkippedFault is a fault of the schedule that was not applied: its target
// role matched no live instance at its moment (no leader to hit).
type SkippedFault struct {
	ID     int           `json:"id"`
	Kind   string        `json:"kind"`
	At     time.Duration `json:"at"`
	Detail string        `json:"detail,omitempty"`
}

// Handover is leadership changing from one incarnation to another.
type Handover struct {
	At   time.Duration `json:"at"`
	From model.Member  `json:"from"`
	To   model.Member  `json:"to"`
}

// ChoreRun is one run of a leader-only chore.
type ChoreRun struct {
	model.Member
	At time.Duration `json:"at"`
}

// DuplicateChore is the same chore run by two different instances less than
// one ChoreInterval apart: work the spec promises only one leader does.
type DuplicateChore struct {
	Chore  string        `json:"chore"`
	First  ChoreRun      `json:"first"`
	Second ChoreRun      `json:"second"`
	Apart  time.Duration `json:"apart"`
}

// RepeatedTask is a task reported completed more than once (metric
// duplicate_tasks).
type RepeatedTask struct {
	Task        string `json:"task"`
	Completions int    `json:"completions"`
	// By are the incarnations that reported the completions, in order.
	By []model.Member `json:"by,omitempty"`
	// Reclaims counts the completions that followed a reclaim of the task
	// (TaskReclaimed) by the incarnation that completed it, with no failure
	// of the task by that incarnation between them: a run that began by
	// taking over an entry left pending, unacknowledged, for the runner's
	// ClaimIdle. Each reclaim credits one completion.
	Reclaims int `json:"reclaims,omitempty"`
}

// Redelivered reports whether the repeat may be at-least-once redelivery:
// every completion but one followed a reclaim by its incarnation, so each
// extra run may have taken over an entry that another run still held
// unacknowledged after ClaimIdle, and no incarnation completed the task
// twice (an instance never runs an entry it holds a second time, so that is
// a runner bug). A crashed instance never reports a completion it did not
// see acknowledged, so such a repeat means a live instance was slower than
// ClaimIdle from delivery to acknowledgement (a stalled process, a machine
// too loaded for the run's timings, a slow Redis). Any other repeat means
// the task was delivered twice without a reclaim (in the stream twice), run
// twice by one instance, or reported twice.
//
// It is necessary, not sufficient: the events carry no stream entry and no
// time bound on the reclaim (the analysis does not know ClaimIdle), so a
// reclaim of a second copy of the task in the stream, or one long after the
// other run's acknowledgement was answered, is credited too.
func (r RepeatedTask) Redelivered() bool {
	seen := map[model.Member]bool{}
	for _, m := range r.By {
		if seen[m] {
			return false
		}
		seen[m] = true
	}
	return r.Reclaims >= r.Completions-1
}

// DurationStats summarises a set of durations. Median is the mean of the two
// middle values when Count is even.
type DurationStats struct {
	Count  int           `json:"count"`
	Min    time.Duration `json:"min"`
	Median time.Duration `json:"median"`
	Max    time.Duration `json:"max"`
}

func durationStats(ds []time.Duration) DurationStats {
	if len(ds) == 0 {
		return DurationStats{}
	}
	slices.Sort(ds)
	n := len(ds)
	return DurationStats{
		Count:  n,
		Min:    ds[0],
		Median: (ds[(n-1)/2] + ds[n/2]) / 2,
		Max:    ds[n-1],
	}
}

// Claim is one of the spec's timing claims checked against the run.
type Claim struct {
	Name      string        `json:"name"`
	Statement string        `json:"statement"`
	Verdict   ClaimVerdict  `json:"verdict"`
	Measured  time.Duration `json:"measured"`
	Bound     time.Duration `json:"bound"`
	Slack     time.Duration `json:"slack"`
	Detail    string        `json:"detail"`
}

// Claim names.
const (
	ClaimGap              = "gap"                // worst-case leadership gap <= TTL + Wait
	ClaimSplitBrain       = "split-brain"        // overlap window <= TTL
	ClaimNoFaultlessSplit = "no-faultless-split" // no overlap away from faults
)

// Summary is the headline numbers of a run.
type Summary struct {
	LeaderGains     int           `json:"leader_gains"` // LeaderGained events ("flaps")
	Handovers       int           `json:"handovers"`
	ElectorErrors   int           `json:"elector_errors"`
	RunnerErrors    int           `json:"runner_errors,omitempty"` // runner errors other than the elector's
	Overlaps        int           `json:"overlaps"`
	MaxOverlap      time.Duration `json:"max_overlap"`
	TotalOverlap    time.Duration `json:"total_overlap"`
	Gaps            int           `json:"gaps"`
	MaxGap          time.Duration `json:"max_gap"`
	Failover        DurationStats `json:"failover"` // over faults with a measured Failover
	Faults          int           `json:"faults"`
	StaleWindows    int           `json:"stale_windows"`
	MaxStale        time.Duration `json:"max_stale"`
	PhantomWindows  int           `json:"phantom_windows"`
	MaxPhantom      time.Duration `json:"max_phantom"`
	DuplicateChores int           `json:"duplicate_chores"`
	StaleChores     int           `json:"stale_chores"`
	FencedChores    int           `json:"fenced_chores,omitempty"`
	TasksDispatched int           `json:"tasks_dispatched"`
	TasksLost       int           `json:"tasks_lost"`
	TasksRepeated   int           `json:"tasks_repeated"`
	TasksUnfinished int           `json:"tasks_unfinished,omitempty"`
	TasksUnreported int           `json:"tasks_unreported,omitempty"`
	TasksDead       int           `json:"tasks_dead,omitempty"`
	DelayedLateness DurationStats `json:"delayed_lateness"`

	// MaxOverlapUncertainty, MaxGapUncertainty and MaxStaleUncertainty are
	// how far the longest windows may be off either way at most
	// (Window.Spread), for reports; a verdict reads every window's Least and
	// Most (an observed fleet's estimates) or, with agents' lines read
	// late, the extreme timings (Analysis.LateRange).
	MaxOverlapUncertainty time.Duration `json:"max_overlap_uncertainty,omitempty"`
	MaxGapUncertainty     time.Duration `json:"max_gap_uncertainty,omitempty"`
	MaxStaleUncertainty   time.Duration `json:"max_stale_uncertainty,omitempty"`
}

// Analysis is everything Analyze measures in one timeline.
type Analysis struct {
	Params model.Params  `json:"params"` // effective (WithDefaults) parameters
	End    time.Duration `json:"end"`    // At of the last event
	Ended  string        `json:"ended,omitempty"`
	// StabilityWindow is how long a sole leader must keep leading to count
	// as "stable" in failover and recovery times: one TTL. A leader that
	// lasts a TTL has renewed at least once (the first renewal comes
	// TTL/2 + jitter after it won), so a leader that wins and falls over at
	// its first renewal is not taken for the end of a failover. There is no
	// floor: sub-second TTLs are what short test runs use.
	StabilityWindow time.Duration `json:"stability_window"`
	// StampLateness is how late the harness stamped the lines of agent
	// processes (the process backend): receipt time minus the time the
	// agent wrote each line, on the machine's wall clock. The measurement
	// error of the belief lane there; empty on the other backends.
	StampLateness DurationStats `json:"stamp_lateness,omitzero"`
	// Stalls are the moments the harness measured itself late, by at
	// least MinStall: instances' timers fired late, its wake-up probe woke
	// late (a loaded machine). A check a window fails by no more than the
	// lateness inside it is unknown, not a fail.
	Stalls []Stall `json:"stalls,omitempty"`

	Beliefs []Belief `json:"beliefs,omitempty"`
	// LeaderCount is how many incarnations believed they led, as a step
	// function over [0, End].
	LeaderCount []CountStep `json:"leader_count,omitempty"`
	Overlaps    []Overlap   `json:"overlaps,omitempty"`
	Gaps        []Gap       `json:"gaps,omitempty"`
	Handovers   []Handover  `json:"handovers,omitempty"`
	Redis       RedisLane   `json:"redis"`
	// Identity names the lease values that leave the key's holder unknown:
	// one announced by two live incarnations at once, one nobody announced.
	Identity        Identity             `json:"identity,omitzero"`
	Faults          []model.FaultOutcome `json:"faults,omitempty"`
	Skipped         []SkippedFault       `json:"skipped,omitempty"`
	DuplicateChores []DuplicateChore     `json:"duplicate_chores,omitempty"`
	// StaleChores are chore runs that landed while the lease key held
	// another id (or none): a stale leader's writes, which safe mode's
	// fencing exists to refuse. Needs the Redis lane; runs within
	// TruthResolution of a change of holder are not judged.
	StaleChores []ChoreRun `json:"stale_chores,omitempty"`
	// FencedChores are chores whose script refused to write (safe mode).
	FencedChores  []ChoreRun     `json:"fenced_chores,omitempty"`
	LostTasks     []string       `json:"lost_tasks,omitempty"`     // dispatched, never completed, and gone from Redis at the end, in dispatch order
	RepeatedTasks []RepeatedTask `json:"repeated_tasks,omitempty"` // completed more than once, in first-dispatch order
	// UnfinishedTasks were dispatched and not completed, but Redis still
	// held them at the end of the run (TaskHeld): late, not lost.
	UnfinishedTasks []string `json:"unfinished_tasks,omitempty"`
	// UnreportedTasks were dispatched, never reported completed, yet their
	// handler finished and their acknowledgement was sent
	// (TaskAcknowledging), and Redis no longer held them at the end: the
	// instance never learned the outcome (it crashed before the reply, or
	// gave up re-sending and reported it unknown), and the entry is gone,
	// which, barring Redis's own data loss (a restart without persistence,
	// a lossy failover), means the acknowledgement applied. They ran; they
	// are not lost.
	UnreportedTasks []string `json:"unreported_tasks,omitempty"`
	// DeadTasks were dispatched, not completed, and dead-lettered: in the
	// dead-letter stream at the end of the run (TaskHeld, Detail "dead").
	DeadTasks []string `json:"dead_tasks,omitempty"`
	Claims    []Claim  `json:"claims"`
	Summary   Summary  `json:"summary"`
	// LateRange is what the run's figures may really have been, where
	// agents' lines were stamped late (Event.Late, the process backend):
	// each figure on the timing that makes it least and on the one that
	// makes it most. nil when no event has Late (every in-process and
	// virtual run).
	LateRange *LateRange `json:"late_range,omitempty"`

	// timings are the extreme timings LateRange and the verdicts are
	// taken on (nil with LateRange). Not serialized: Evaluate needs the
	// Analysis that Analyze returned, not one read back from JSON.
	timings *timings
}

// Analyze measures a timeline against the parameters it ran with. It is pure:
// it reads nothing but its arguments, so every backend (real Redis, virtual
// time) and every hand-built test timeline goes through the same code.
//
// Same-instant events: the timeline is sorted stably by At, so events at one
// instant keep their recorded order for per-instance bookkeeping, but windows
// (overlaps, gaps, stale, phantom) are built from the state after ALL events
// of an instant are applied. A LeaderLost and another instance's LeaderGained
// at the same instant therefore make neither an overlap nor a gap, and no
// window ever has zero length.
func Analyze(t model.Timeline, p model.Params) Analysis {
	return AnalyzeWith(t, p, Options{})
}

// AnalyzeWith is Analyze with o's settings: o.OnCompare is told the
// comparisons that decide each fault's failover.
func AnalyzeWith(t model.Timeline, p model.Params, o Options) Analysis {
	c := compared(o.OnCompare)
	p = p.WithDefaults()
	ev := InOrder(t)

	a := Analysis{Params: p, StabilityWindow: p.TTL}
	if len(ev) > 0 {
		a.End = ev[len(ev)-1].At
	}
	for _, e := range ev {
		if e.Kind == model.RunEnded {
			a.Ended = e.Detail
		}
	}

	var lates []beliefLate
	a.Beliefs, lates = beliefsOf(ev, a.End)
	var sole []stretch
	a.Overlaps, a.Gaps, sole, a.LeaderCount = sweep(a.Beliefs, nil, a.End)
	a.Handovers = handoversOf(a.Beliefs)

	spans := faultSpans(ev, a.End)
	faults := slices.Clone(spans)
	for i := range faults {
		faults[i].Reach = reachOf(faults[i], nextOnLeader(spans, i, a.Beliefs, c), sole, p, a.End, c)
	}
	a.Skipped = skippedFaults(ev)
	blocked := leaderless(ev, faults, a.End)
	explainGaps(a.Gaps, faults, blocked)
	for _, f := range faults {
		o := outcome(f, a.Beliefs, sole, p, c)
		for i, g := range a.Gaps {
			if f.Touches(g.Window) {
				o.Gaps = append(o.Gaps, i)
				if g.Excuse == "" {
					o.MaxGap = max(o.MaxGap, g.Duration)
				}
			}
		}
		for i, w := range a.Overlaps {
			if f.Touches(w.Window) {
				o.Overlaps = append(o.Overlaps, i)
				o.MaxOverlap = max(o.MaxOverlap, w.Duration)
			}
		}
		a.Faults = append(a.Faults, o)
	}

	shared := sharedIDs(incarnationsOf(ev, a.End))
	a.Redis = redisLane(ev, a.Beliefs, shared, a.End)
	a.Identity = identityOf(shared, a.Redis, a.Overlaps)
	faultEffects(a.Faults, ev, a.Redis)
	a.StampLateness = stampLateness(ev)
	a.Stalls = stallsOf(ev, a.Beliefs)
	a.DuplicateChores = duplicateChores(ev, p.ChoreInterval)
	a.StaleChores, a.FencedChores = choreFences(ev, a.Redis)
	a.LostTasks, a.UnfinishedTasks, a.UnreportedTasks, a.DeadTasks, a.RepeatedTasks = taskFates(ev)
	a.Summary = summarize(a, ev)
	attachUncertainty(&a, ev, lates)
	if x := timingsOf(a, ev, lates, spans, blocked); x != nil {
		a.timings, a.LateRange = x, x.ranges(&a)
	}
	a.Claims = claims(a, faults, p)
	return a
}

// explainGaps sets each gap's likeliest cause (the fault applied last
// before it) and what the gap claim counts of it: all of it, or, where for
// a while nobody could lead (blocked), its longest part outside that.
func explainGaps(gaps []Gap, faults []model.FaultSpan, blocked []model.Window) {
	for i := range gaps {
		g := &gaps[i]
		if f := lastAppliedBy(faults, g.Start); f != nil {
			g.After = &FaultRef{ID: f.ID, Kind: f.Kind, Applied: f.Applied}
		}
		g.Counted = g.Duration
		if intersects(blocked, g.Window) {
			g.Excuse = "for part of it no instance could lead (all crashed, stopped, paused or partitioned)"
			g.Counted = longestOutside(g.Window, blocked)
		}
	}
}

// InOrder returns the events sorted stably by At without touching t. The
// recorder appends in order, so t itself is usually returned. Otherwise
// (At, position) keys are sorted, which is stable because positions differ,
// and cheaper than moving the large events around.
func InOrder(t model.Timeline) []model.Event {
	if slices.IsSortedFunc(t, func(a, b model.Event) int { return cmp.Compare(a.At, b.At) }) {
		return t
	}
	type key struct {
		at  time.Duration
		pos int
	}
	keys := make([]key, len(t))
	for i, e := range t {
		keys[i] = key{e.At, i}
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.pos, b.pos)) })
	ev := make([]model.Event, len(t))
	for i, k := range keys {
		ev[i] = t[k.pos]
	}
	return ev
}

// beliefsOf turns promotion, demotion and lifecycle events into belief
// windows, in order of start. Events that name an id other than the belief's
// (a late event of an earlier incarnation) do not end it. It also returns
// how early each belief's ends may really have come (beliefLate).
func beliefsOf(ev []model.Event, end time.Duration) ([]Belief, []beliefLate) {
	var out []Belief
	var lates []beliefLate
	current := map[int]string{}            // instance index → id of its live incarnation
	open := map[int]int{}                  // instance index → position in out of its open belief
	closed := map[model.Member]int{}       // incarnation → position in out of its last ended belief
	gone := map[model.Member]model.Event{} // incarnation → the crash or stop that ended it
	member := func(i int, id string) model.Member {
		if id == "" {
			id = current[i]
		}
		return model.Member{Instance: i, ID: id}
	}
	finish := func(i int, id string, e model.Event, by model.Kind) {
		k, ok := open[i]
		if !ok || (id != "" && id != out[k].ID) {
			// A demotion read after the belief ended (a crash the harness
			// recorded before it read the agent's last line, perhaps after
			// a restart's promotion) may really have come before that end.
			if c, had := closed[member(i, id)]; had && e.Late > 0 {
				lates[c].end = max(lates[c].end, out[c].End-(e.At-e.Late))
			}
			return
		}
		out[k].Window = NewWindow(out[k].Start, e.At, false)
		out[k].EndedBy = by
		lates[k].end = e.Late
		delete(open, i)
		closed[out[k].Member] = k
	}
	for _, e := range ev {
		if e.Instance < 0 {
			continue
		}
		switch e.Kind {
		case model.InstanceStarted:
			if k, ok := open[e.Instance]; ok && out[k].ID != e.ID {
				finish(e.Instance, "", e, model.InstanceStarted)
			}
			current[e.Instance] = e.ID
			delete(gone, model.Member{Instance: e.Instance, ID: e.ID}) // restarted under the same id
		case model.LeaderGained:
			m := member(e.Instance, e.ID)
			if g, dead := gone[m]; dead {
				// Read after the harness recorded its agent's crash or
				// stop (it records, then kills; buffered lines follow):
				// written before it, so it led at most from its earliest
				// time to that end, and not at all if that is later.
				if e.At-e.Late < g.At {
					closed[m] = len(out)
					out = append(out, Belief{Member: m, Window: NewWindow(g.At, g.At, false), EndedBy: g.Kind})
					lates = append(lates, beliefLate{start: g.At - (e.At - e.Late)})
				}
				continue
			}
			if k, ok := open[e.Instance]; ok {
				if out[k].ID == m.ID {
					continue // a repeated promotion is the same belief
				}
				finish(e.Instance, "", e, model.InstanceStarted)
			}
			open[e.Instance] = len(out)
			delete(closed, m)
			out = append(out, Belief{Member: m, Window: model.Window{Start: e.At}})
			lates = append(lates, beliefLate{start: e.Late})
		case model.LeaderLost, model.InstanceCrashed, model.InstanceStopped:
			if e.Kind != model.LeaderLost {
				if m := member(e.Instance, e.ID); m.ID != "" {
					if _, seen := gone[m]; !seen {
						gone[m] = e
					}
				}
			}
			finish(e.Instance, e.ID, e, e.Kind)
		}
	}
	for _, k := range open {
		out[k].Window = NewWindow(out[k].Start, end, true)
		out[k].EndedBy = model.RunEnded
	}
	return out, lates
}

// beliefLate is how much earlier than stamped a belief's start and end may
// really have come: the Late of the agent's lines that began and ended it
// (Event.Late). 0 for the harness's own events and every in-process run.
type beliefLate struct {
	start, end time.Duration
}

// stretch is a window with exactly one believed leader.
type stretch struct {
	model.Member
	model.Window
}

// sweep walks belief boundaries in time order and cuts the run into overlaps
// (2+ believers), gaps (none, after the first leader) and sole-leader
// stretches. All boundaries at one instant are applied before the state is
// read, which is what drops zero-length windows. marks are further
// instants at which a gap may begin if nobody leads then: where a belief
// too short to keep on a timing (timingsOf) may have ended.
func sweep(beliefs []Belief, marks []time.Duration, end time.Duration) (overlaps []Overlap, gaps []Gap, sole []stretch, steps []CountStep) {
	type edge struct {
		at    time.Duration
		m     model.Member
		delta int
	}
	var edges []edge
	for _, b := range beliefs {
		if b.Duration == 0 {
			continue
		}
		edges = append(edges, edge{b.Start, b.Member, +1})
		if !b.Open {
			edges = append(edges, edge{b.End, b.Member, -1})
		}
	}
	for _, at := range marks {
		edges = append(edges, edge{at, model.Member{Instance: -1}, 0})
	}
	slices.SortFunc(edges, func(x, y edge) int { return cmp.Compare(x.at, y.at) })

	// Counts, not a set: an incarnation's belief may end and restart at the
	// same instant, and must then stay active throughout.
	active := map[model.Member]int{}
	var (
		ov   *Overlap
		seen map[model.Member]bool // everyone who believed during ov
		gap  *Gap
		solo *stretch
	)
	// Each finish closes its window at `at`. A window that opened at the
	// same instant has no length and is dropped; that only happens at the
	// end of the run, as every other boundary instant is visited once.
	finishOverlap := func(at time.Duration, open bool) {
		if ov != nil && at > ov.Start {
			ov.Window = NewWindow(ov.Start, at, open)
			for m := range seen {
				ov.Leaders = append(ov.Leaders, m)
			}
			slices.SortFunc(ov.Leaders, func(x, y model.Member) int {
				return cmp.Or(cmp.Compare(x.Instance, y.Instance), cmp.Compare(x.ID, y.ID))
			})
			overlaps = append(overlaps, *ov)
		}
		ov, seen = nil, nil
	}
	finishGap := func(at time.Duration, open bool) {
		if gap != nil && at > gap.Start {
			gap.Window = NewWindow(gap.Start, at, open)
			gaps = append(gaps, *gap)
		}
		gap = nil
	}
	finishStretch := func(at time.Duration, open bool) {
		if solo != nil && at > solo.Start {
			solo.Window = NewWindow(solo.Start, at, open)
			sole = append(sole, *solo)
		}
		solo = nil
	}

	// The step function of the leader count, from 0 to end.
	stepFrom, stepN := time.Duration(0), 0
	step := func(at time.Duration, n int) {
		if n == stepN {
			return
		}
		if at > stepFrom {
			steps = append(steps, CountStep{Window: NewWindow(stepFrom, at, false), Leaders: stepN})
		}
		stepFrom, stepN = at, n
	}
	for i := 0; i < len(edges); {
		at := edges[i].at
		for ; i < len(edges) && edges[i].at == at; i++ {
			e := edges[i]
			if active[e.m] += e.delta; active[e.m] == 0 {
				delete(active, e.m)
			}
		}
		step(at, len(active))
		switch len(active) {
		case 0:
			finishOverlap(at, false)
			finishStretch(at, false)
			// Nobody leads, and as beliefs of zero length were left out,
			// somebody led before: a gap.
			if gap == nil {
				gap = &Gap{Window: model.Window{Start: at}}
			}
		case 1:
			finishOverlap(at, false)
			finishGap(at, false)
			var m model.Member
			for m = range active {
			}
			if solo != nil && solo.Member != m {
				finishStretch(at, false)
			}
			if solo == nil {
				solo = &stretch{Member: m, Window: model.Window{Start: at}}
			}
		default:
			finishGap(at, false)
			finishStretch(at, false)
			if ov == nil {
				ov, seen = &Overlap{Window: model.Window{Start: at}}, map[model.Member]bool{}
			}
			for m := range active {
				seen[m] = true
			}
		}
	}
	// Whatever is still open ran into the end of the run.
	finishOverlap(end, true)
	finishGap(end, true)
	finishStretch(end, true)
	if end > stepFrom {
		steps = append(steps, CountStep{Window: NewWindow(stepFrom, end, true), Leaders: stepN})
	}
	return overlaps, gaps, sole, steps
}

// CountStep is a stretch of the run with a constant number of believed
// leaders: the leader-count strip of a report. Before the first election
// the count is 0 but it is not a gap (Gaps say which are).
type CountStep struct {
	model.Window
	Leaders int `json:"leaders"`
}

// handoversOf lists leadership changing hands: a belief starting whose
// incarnation differs from the one that started before it. Regaining
// leadership after a gap is not a handover.
func handoversOf(beliefs []Belief) []Handover {
	var out []Handover
	for i := 1; i < len(beliefs); i++ {
		prev, b := beliefs[i-1], beliefs[i]
		// One id after its crash or stop is a restart under that id (a
		// pod name): a new incarnation, unless the belief is a late line
		// of the ended one (it starts at the end).
		restarted := (prev.EndedBy == model.InstanceCrashed || prev.EndedBy == model.InstanceStopped) && b.Start > prev.End
		if prev.Member != b.Member || restarted {
			out = append(out, Handover{At: b.Start, From: prev.Member, To: b.Member})
		}
	}
	return out
}

// faultSpans pairs FaultApplied with the next FaultHealed of the same
// FaultID, in order of injection.
func faultSpans(ev []model.Event, end time.Duration) []model.FaultSpan {
	var out []model.FaultSpan
	open := map[int]int{} // FaultID → position in out
	for _, e := range ev {
		switch e.Kind {
		case model.FaultApplied:
			open[e.FaultID] = len(out)
			out = append(out, model.FaultSpan{
				ID: e.FaultID, Kind: e.Fault, Mode: model.ModeOf(model.FaultKind(e.Fault), e.Mode),
				Target: e.Target, Detail: e.Detail, Applied: e.At,
				// Older timelines do not mark instant faults; their kinds do.
				Instant: e.Instant || model.FaultKind(e.Fault).OnRedis(),
			})
		case model.FaultHealed:
			if k, ok := open[e.FaultID]; ok {
				out[k].Healed = e.At
				delete(open, e.FaultID)
			}
		}
	}
	for _, k := range open {
		if out[k].Instant {
			// Recorded before instant faults had a FaultHealed: the
			// action took no time that the timeline shows.
			out[k].Healed = out[k].Applied
			continue
		}
		out[k].Healed, out[k].Open = end, true
	}
	return out
}

// skippedFaults lists the FaultSkipped events.
func skippedFaults(ev []model.Event) []SkippedFault {
	var out []SkippedFault
	for _, e := range ev {
		if e.Kind == model.FaultSkipped {
			out = append(out, SkippedFault{ID: e.FaultID, Kind: e.Fault, At: e.At, Detail: e.Detail})
		}
	}
	return out
}

// lastAppliedBy is the fault applied most recently at or before t.
func lastAppliedBy(faults []model.FaultSpan, t time.Duration) *model.FaultSpan {
	i := sort.Search(len(faults), func(i int) bool { return faults[i].Applied > t })
	if i == 0 {
		return nil
	}
	return &faults[i-1]
}

// intersects reports whether w shares a positive length with any of ws.
// longestOutside is the longest part of w that no window of ws covers.
func longestOutside(w model.Window, ws []model.Window) time.Duration {
	var longest time.Duration
	cursor := w.Start
	for _, x := range ws { // ws are sorted and disjoint
		if x.End <= cursor || x.Start >= w.End {
			continue
		}
		longest = max(longest, min(x.Start, w.End)-cursor)
		cursor = max(cursor, x.End)
	}
	return max(longest, w.End-cursor)
}

func intersects(ws []model.Window, w model.Window) bool {
	for _, x := range ws {
		if x.Start < w.End && w.Start < x.End {
			return true
		}
	}
	return false
}

// leaderless returns the windows in which no instance could have led: every
// known instance was crashed, stopped, paused or cut off by a partition
// fault. Instances are known from any event naming them; one whose first
// lifecycle event is InstanceStarted is down before it, any other is up from
// the start (hand-built timelines often have no lifecycle events).
func leaderless(ev []model.Event, faults []model.FaultSpan, end time.Duration) []model.Window {
	type state struct {
		down, paused bool
		cut          int
	}
	inst := map[int]*state{}
	note := func(i int) {
		if i >= 0 && inst[i] == nil {
			inst[i] = &state{}
		}
	}
	lifecycle := map[int]bool{} // instances whose first lifecycle event was seen
	type change struct {
		at time.Duration
		do func()
	}
	var changes []change
	for _, e := range ev {
		note(e.Instance)
		for _, i := range e.Target {
			note(i)
		}
		if e.Instance < 0 {
			continue
		}
		switch e.Kind {
		case model.InstanceStarted, model.InstanceCrashed, model.InstanceStopped:
			s := inst[e.Instance]
			if !lifecycle[e.Instance] {
				lifecycle[e.Instance] = true
				s.down = e.Kind == model.InstanceStarted
			}
			up := e.Kind == model.InstanceStarted
			changes = append(changes, change{e.At, func() { s.down, s.paused = !up, false }})
		case model.InstancePaused, model.InstanceResumed:
			s, paused := inst[e.Instance], e.Kind == model.InstancePaused
			changes = append(changes, change{e.At, func() { s.paused = paused }})
		}
	}
	for _, f := range faults {
		if f.Mode != model.ModePartitionBlackhole && f.Mode != model.ModePartitionRefuse && f.Mode != model.ModePartitionReset && f.Mode != model.ModePartitionReplies {
			continue
		}
		for i, s := range inst {
			if f.Hits(i) {
				changes = append(changes,
					change{f.Applied, func() { s.cut++ }},
					change{f.Healed, func() { s.cut-- }})
			}
		}
	}
	if len(inst) == 0 {
		return nil
	}
	slices.SortStableFunc(changes, func(x, y change) int { return cmp.Compare(x.at, y.at) })

	var out []model.Window
	blockedSince := time.Duration(-1)
	check := func(at time.Duration) {
		able := 0
		for _, s := range inst {
			if !s.down && !s.paused && s.cut <= 0 {
				able++
			}
		}
		switch {
		case able == 0 && blockedSince < 0:
			blockedSince = at
		case able > 0 && blockedSince >= 0:
			if at > blockedSince {
				out = append(out, NewWindow(blockedSince, at, false))
			}
			blockedSince = -1
		}
	}
	check(0)
	for i := 0; i < len(changes); {
		at := changes[i].at
		for ; i < len(changes) && changes[i].at == at; i++ {
			changes[i].do()
		}
		check(at)
	}
	if blockedSince >= 0 && end > blockedSince {
		out = append(out, NewWindow(blockedSince, end, true))
	}
	return out
}

// outcome measures what one fault did to leadership. c is told the
// comparisons its failover rests on (the recovery's are not).
func outcome(f model.FaultSpan, beliefs []Belief, sole []stretch, p model.Params, c compared) model.FaultOutcome {
	o := model.FaultOutcome{FaultSpan: f}
	reach := f.Reach
	var demotedAt time.Duration
	kept := false
	for _, b := range beliefs {
		if c.le(f.Applied, b.Start) {
			break // beliefs are in order of start
		}
		if c.lt(b.End, f.Applied) || c.le(b.Duration, 0) {
			continue
		}
		o.LeadersAtInjection = append(o.LeadersAtInjection, b.Member)
		if !f.Hits(b.Instance) {
			continue
		}
		o.LeaderHit = true
		if b.Open || c.lt(reach, b.End) {
			kept = true
			continue
		}
		demotedAt = c.max(demotedAt, b.End)
	}

	if !f.Open {
		if at, _, ok := stableFrom(sole, f.Healed, p.TTL, nil); ok {
			o.Recovery = durationOf(at - f.Healed)
		}
	}
	switch {
	case len(o.LeadersAtInjection) == 0:
		o.Note = "no leader at injection"
		return o
	case !o.LeaderHit:
		o.Note = "the fault did not hit the leader"
		return o
	case kept:
		o.Note = "the hit leader kept believing it led through the fault"
		return o
	}
	o.Demotion = durationOf(demotedAt - f.Applied)
	at, m, ok := stableFrom(sole, demotedAt, p.TTL, c)
	if !ok {
		o.Note = "no stable leader before the run ended"
		return o
	}
	o.Failover, o.NewLeader = durationOf(at-f.Applied), &m
	return o
}

func durationOf(d time.Duration) *time.Duration { return &d }

// stableFrom finds the first moment at or after t from which one incarnation
// led alone for at least w. A stretch cut short by the end of the run is not
// known to be stable.
func stableFrom(sole []stretch, t, w time.Duration, c compared) (time.Duration, model.Member, bool) {
	i := sort.Search(len(sole), func(i int) bool { return c.lt(t, sole[i].End) })
	for ; i < len(sole); i++ {
		s := sole[i]
		from := c.max(s.Start, t)
		if c.le(w, s.End-from) {
			return from, s.Member, true
		}
	}
	return 0, model.Member{}, false
}

// stampLateness collects the stamping lateness agents' events carry (a
// DelayedDue's Lateness is the task's, not the stamp's).
func stampLateness(ev []model.Event) DurationStats {
	var late []time.Duration
	for _, e := range ev {
		if e.Instance >= 0 && e.Lateness > 0 && e.Kind != model.DelayedDue && e.Kind != model.RedisHolder && e.Kind != model.StallKind {
			late = append(late, e.Lateness)
		}
	}
	return durationStats(late)
}

// redisLane compares beliefs with the key's holder as Redis reported it.
// shared are the values incarnations of two or more instances announced
// while live at once (sharedIDs): where the key held one of those, which
// of them held it cannot be told, nor whose lease a value nobody announced
// was; a belief there is unknown (RedisLane.Unknown), not stale.
func redisLane(ev []model.Event, beliefs []Belief, shared []SharedID, end time.Duration) RedisLane {
	var segs []segment
	var late []time.Duration
	holder, since, observed := "", time.Duration(0), false
	add := func(h string, from, to time.Duration) {
		if to <= from {
			return
		}
		if n := len(segs); n > 0 && segs[n-1].holder == h && segs[n-1].End == from {
			segs[n-1].Window = NewWindow(segs[n-1].Start, to, false)
			return
		}
		segs = append(segs, segment{h, false, NewWindow(from, to, false)})
	}
	owner := map[string]int{}
	for _, e := range ev {
		if e.ID != "" && e.Instance >= 0 {
			owner[e.ID] = e.Instance
		}
		if e.Kind != model.RedisHolder {
			continue
		}
		observed = true
		if e.Lateness > 0 {
			late = append(late, e.Lateness)
		}
		add(holder, since, e.At)
		holder, since = e.Holder, e.At
	}
	lane := RedisLane{Observed: observed, NotificationLateness: durationStats(late)}
	if !observed {
		return lane
	}
	add(holder, since, end)
	if len(shared) > 0 {
		segs = splitShared(segs, shared)
	}
	announced := func(h string) bool { _, ok := owner[h]; return ok || h == "" }
	for _, sg := range segs {
		h := Holding{Window: sg.Window, Holder: sg.holder, Instance: -1, Shared: sg.shared, Unannounced: !announced(sg.holder)}
		if i, ok := owner[sg.holder]; ok && sg.holder != "" && !sg.shared {
			h.Instance = i
		}
		lane.Holders = append(lane.Holders, h)
	}
	if n := len(lane.Holders); n > 0 {
		lane.Holders[n-1].Open = true
	}

	// Stale: the parts of each belief where the key held another id;
	// unknown where the value held cannot be told to be the belief's own
	// or another's (its own value shared with a live twin, or a value
	// nobody announced).
	extend := func(to *[]Stale, m model.Member, from, until time.Duration, h string) {
		if n := len(*to); n > 0 && (*to)[n-1].Member == m && (*to)[n-1].End == from {
			(*to)[n-1].Window = NewWindow((*to)[n-1].Start, until, false)
			return
		}
		*to = append(*to, Stale{Member: m, Window: NewWindow(from, until, false), Holder: h})
	}
	byID := map[string][]model.Window{}
	for _, b := range beliefs {
		if b.Duration == 0 {
			continue
		}
		byID[b.ID] = append(byID[b.ID], b.Window)
		i := sort.Search(len(segs), func(i int) bool { return segs[i].End > b.Start })
		for ; i < len(segs) && segs[i].Start < b.End; i++ {
			s := segs[i]
			if s.holder == b.ID && !s.shared {
				continue
			}
			from, to := max(s.Start, b.Start), min(s.End, b.End)
			if (s.holder == b.ID && s.shared) || !announced(s.holder) {
				extend(&lane.Unknown, b.Member, from, to, s.holder)
				continue
			}
			extend(&lane.Stale, b.Member, from, to, s.holder)
		}
	}
	for i := range lane.Stale {
		lane.Stale[i].Open = lane.Stale[i].End == end
	}
	for i := range lane.Unknown {
		lane.Unknown[i].Open = lane.Unknown[i].End == end
	}

	// Phantom: the parts of each holder segment its owner did not believe
	// (none of its owners, for a shared value). A value nobody announced
	// may be any believer's: phantom only where nobody believed.
	var anyone []model.Window
	for _, s := range segs {
		if s.holder == "" {
			continue
		}
		m := model.Member{Instance: -1, ID: s.holder}
		if i, ok := owner[s.holder]; ok && !s.shared {
			m.Instance = i
		}
		piece := func(from, to time.Duration) {
			if to > from {
				lane.Phantom = append(lane.Phantom, Phantom{Member: m, Window: NewWindow(from, to, to == end)})
			}
		}
		own := byID[s.holder]
		switch {
		case !announced(s.holder):
			if anyone == nil {
				for _, b := range beliefs {
					anyone = append(anyone, b.Window)
				}
				anyone = union(anyone)
			}
			own = anyone
		case len(shared) > 0:
			own = union(own) // twins' beliefs interleave
		}
		cursor := s.Start
		for i := sort.Search(len(own), func(i int) bool { return own[i].End > s.Start }); i < len(own) && own[i].Start < s.End; i++ {
			piece(cursor, own[i].Start)
			cursor = max(cursor, own[i].End)
		}
		piece(cursor, s.End)
	}
	lane.Stale = slices.DeleteFunc(lane.Stale, func(w Stale) bool {
		if lane.belowResolution(w.Window) {
			lane.ShortStale = append(lane.ShortStale, w)
			return true
		}
		return false
	})
	lane.Phantom = slices.DeleteFunc(lane.Phantom, func(w Phantom) bool { return lane.belowResolution(w.Window) })
	lane.Unknown = slices.DeleteFunc(lane.Unknown, func(w Stale) bool { return !w.Open && w.Duration < TruthResolution })
	return lane
}

// segment is a stretch in which the key held one value.
type segment struct {
	holder string
	shared bool // the value was announced by two or more live incarnations
	model.Window
}

// splitShared cuts each segment where the windows in which its value's
// sharers were live together begin and end, marking the pieces inside.
func splitShared(segs []segment, shared []SharedID) []segment {
	live := map[string][]model.Window{}
	for _, s := range shared {
		live[s.Value] = s.Live
	}
	var out []segment
	for _, sg := range segs {
		cursor := sg.Start
		for _, l := range live[sg.holder] {
			from, to := max(l.Start, sg.Start), min(l.End, sg.End)
			if to <= from {
				continue
			}
			if from > cursor {
				out = append(out, segment{sg.holder, false, NewWindow(cursor, from, false)})
			}
			out = append(out, segment{sg.holder, true, NewWindow(from, to, false)})
			cursor = to
		}
		if cursor < sg.End {
			out = append(out, segment{sg.holder, false, NewWindow(cursor, sg.End, false)})
		}
	}
	return out
}

// TruthResolution is the shortest stale or phantom window the analysis
// reports. The belief lane and the Redis lane are observed by different
// means (an instance's signal; a keyspace notification followed by a GET),
// so at every acquire, release and expiry they disagree for the time one
// observation takes: microseconds for set/del, up to ~12 ms for an expiry at
// hz 100 (measured on redis-server 7.0). Closed windows shorter than this are that measurement
// error, not stale leadership; they are counted in BelowResolution.
const TruthResolution = 20 * time.Millisecond

func (l *RedisLane) belowResolution(w model.Window) bool {
	if w.Open || w.Duration >= TruthResolution {
		return false
	}
	l.BelowResolution++
	return true
}

// duplicateChores finds a chore run by one instance less than one
// ChoreInterval after the same chore ran on a different instance (the latest
// run of each). Equal spacing is the normal cadence of a clean handover, so
// it is not a duplicate.
func duplicateChores(ev []model.Event, interval time.Duration) []DuplicateChore {
	var out []DuplicateChore
	// Per chore, the latest run of each instance within the last interval,
	// oldest first: short, as only leaders run chores.
	recent := map[string][]ChoreRun{}
	for _, e := range ev {
		if e.Kind != model.ChoreRan {
			continue
		}
		run := ChoreRun{Member: model.Member{Instance: e.Instance, ID: e.ID}, At: e.At}
		kept := recent[e.Chore][:0]
		for _, prev := range recent[e.Chore] {
			switch {
			case e.At-prev.At >= interval:
				// too old to clash with this or any later run
			case prev.Instance == e.Instance:
				// superseded by this run
			default:
				out = append(out, DuplicateChore{Chore: e.Chore, First: prev, Second: run, Apart: e.At - prev.At})
				kept = append(kept, prev)
			}
		}
		recent[e.Chore] = append(kept, run)
	}
	return out
}

// choreFences sorts chore runs against the Redis lane: those that landed
// while the key held another id (stale) and those the fence refused.
func choreFences(ev []model.Event, lane RedisLane) (stale, fenced []ChoreRun) {
	for _, e := range ev {
		switch e.Kind {
		case model.ChoreFenced:
			fenced = append(fenced, ChoreRun{Member: model.Member{Instance: e.Instance, ID: e.ID}, At: e.At})
		case model.ChoreRan:
			if !lane.Observed || e.ID == "" {
				continue
			}
			// Its writes landed somewhere in [At - Took, At] (a reply can
			// come late: a paused process reads it on resume), give or take
			// the lanes' observation skew: stale only if no holder interval
			// in that window is its own, and the lane saw the key then.
			from, to := e.At-e.Took-TruthResolution, e.At+TruthResolution
			i := sort.Search(len(lane.Holders), func(i int) bool { return lane.Holders[i].End > from })
			seen, own := false, false
			for ; i < len(lane.Holders) && lane.Holders[i].Start <= to; i++ {
				seen = true
				// A value nobody announced may be its own (Identity).
				own = own || lane.Holders[i].Holder == e.ID || lane.Holders[i].Unannounced
			}
			if !seen || own {
				continue
			}
			stale = append(stale, ChoreRun{Member: model.Member{Instance: e.Instance, ID: e.ID}, At: e.At})
		}
	}
	return stale, fenced
}

// taskFates lists tasks dispatched but never completed (lost when Redis no
// longer held them at the end, unfinished when it held them to run, dead
// when they were in the dead-letter stream), and tasks completed
// more than once, all in order of first dispatch (completions of tasks
// never dispatched follow, in order of first completion).
func taskFates(ev []model.Event) (lost, unfinished, unreported, dead []string, repeated []RepeatedTask) {
	// One record per task, found by one map lookup per event: a runner-mode
	// run has hundreds of tasks, and a map per fact was a tenth of a
	// virtual run's time (BenchmarkLeaderCrashModes).
	type life struct {
		model.Member
		starts int
	}
	type fate struct {
		task       string
		dispatched bool
		held, dead bool
		acking     bool
		done       int
		first      model.Member   // the first completion's incarnation
		by         []model.Member // every completion's, once there are two
		reclaims   int
		// reclaimedBy: incarnation -> its reclaims of the task not yet
		// followed by an outcome of its own: a reclaim takes over one
		// delivery, and only the run that delivery began can be credited
		// to it, not a later copy's (a reclaimed attempt that failed was
		// retried as a new entry). Keyed by incarnation: its id and its
		// index's starts so far, as an id may repeat across restarts (a
		// pod name) and across instances.
		reclaimedBy map[life]int
	}
	n := 0
	for i := range ev {
		if ev[i].Kind == model.TaskDispatched {
			n++
		}
	}
	idx := make(map[string]int32, n)
	// fates are in the order of each task's first dispatch or completion.
	fates := make([]fate, 0, n)
	get := func(task string, add bool) *fate {
		if i, ok := idx[task]; ok {
			return &fates[i]
		}
		if !add {
			return nil
		}
		idx[task] = int32(len(fates))
		fates = append(fates, fate{task: task})
		return &fates[len(fates)-1]
	}
	var rest map[string]*fate // facts of tasks neither dispatched nor completed yet
	other := func(task string) *fate {
		if f := get(task, false); f != nil {
			return f
		}
		if rest == nil {
			rest = map[string]*fate{}
		}
		f := rest[task]
		if f == nil {
			f = &fate{task: task}
			rest[task] = f
		}
		return f
	}
	// first returns the task's record, listed now if this is its first
	// dispatch or completion (with what was known of it before).
	first := func(task string) *fate {
		if f := get(task, false); f != nil {
			return f
		}
		f := get(task, true)
		if r, ok := rest[task]; ok {
			*f = *r
			delete(rest, task)
		}
		return f
	}
	starts := map[int]int{}
	of := func(e *model.Event) life {
		return life{model.Member{Instance: e.Instance, ID: e.ID}, starts[e.Instance]}
	}
	for i := range ev {
		e := &ev[i]
		switch e.Kind {
		case model.InstanceStarted:
			starts[e.Instance]++
		case model.TaskReclaimed:
			f := other(e.Task)
			if f.reclaimedBy == nil {
				f.reclaimedBy = map[life]int{}
			}
			f.reclaimedBy[of(e)]++
		case model.TaskFailed:
			if f := other(e.Task); f.reclaimedBy[of(e)] > 0 {
				f.reclaimedBy[of(e)]--
			}
		case model.TaskAcknowledging:
			other(e.Task).acking = true
		case model.TaskHeld:
			if e.Detail == "dead" {
				other(e.Task).dead = true
			} else {
				other(e.Task).held = true
			}
		case model.TaskDispatched:
			first(e.Task).dispatched = true
		case model.TaskCompleted:
			f := first(e.Task)
			f.done++
			m := model.Member{Instance: e.Instance, ID: e.ID}
			switch f.done {
			case 1:
				f.first = m
			case 2:
				f.by = []model.Member{f.first, m}
			default:
				f.by = append(f.by, m)
			}
			if f.reclaimedBy[of(e)] > 0 {
				f.reclaimedBy[of(e)]--
				f.reclaims++
			}
		}
	}
	for i := range fates {
		f := &fates[i]
		switch n := f.done; {
		case n == 0 && f.held:
			unfinished = append(unfinished, f.task)
		case n == 0 && f.dead:
			dead = append(dead, f.task)
		case n == 0 && f.acking:
			unreported = append(unreported, f.task)
		case n == 0:
			lost = append(lost, f.task)
		case n > 1:
			repeated = append(repeated, RepeatedTask{Task: f.task, Completions: n, By: f.by, Reclaims: f.reclaims})
		}
	}
	return lost, unfinished, unreported, dead, repeated
}

func summarize(a Analysis, ev []model.Event) Summary {
	s := Summary{
		Handovers:       len(a.Handovers),
		Overlaps:        len(a.Overlaps),
		Gaps:            len(a.Gaps),
		Faults:          len(a.Faults),
		StaleWindows:    len(a.Redis.Stale),
		PhantomWindows:  len(a.Redis.Phantom),
		DuplicateChores: len(a.DuplicateChores),
		StaleChores:     len(a.StaleChores),
		FencedChores:    len(a.FencedChores),
		TasksLost:       len(a.LostTasks),
		TasksRepeated:   len(a.RepeatedTasks),
		TasksUnfinished: len(a.UnfinishedTasks),
		TasksUnreported: len(a.UnreportedTasks),
		TasksDead:       len(a.DeadTasks),
	}
	var delayed []time.Duration
	n := 0
	for i := range ev {
		if ev[i].Kind == model.TaskDispatched {
			n++
		}
	}
	tasks := make(map[string]struct{}, n)
	for _, e := range ev {
		switch e.Kind {
		case model.LeaderGained:
			s.LeaderGains++
		case model.ElectorError:
			s.ElectorErrors++
		case model.RunnerError:
			s.RunnerErrors++
		case model.DelayedDue:
			delayed = append(delayed, e.Lateness)
		case model.TaskDispatched:
			tasks[e.Task] = struct{}{}
		}
	}
	s.TasksDispatched = len(tasks)
	s.DelayedLateness = durationStats(delayed)
	for _, o := range a.Overlaps {
		s.MaxOverlap = max(s.MaxOverlap, o.Duration)
		s.TotalOverlap += o.Duration
	}
	for _, g := range a.Gaps {
		s.MaxGap = max(s.MaxGap, g.Duration)
	}
	for _, x := range a.Redis.Stale {
		s.MaxStale = max(s.MaxStale, x.Duration)
	}
	for _, x := range a.Redis.Phantom {
		s.MaxPhantom = max(s.MaxPhantom, x.Duration)
	}
	var failovers []time.Duration
	for _, f := range a.Faults {
		if f.Failover != nil {
			failovers = append(failovers, *f.Failover)
		}
	}
	s.Failover = durationStats(failovers)
	return s
}

// claims checks the spec's three timing claims.
func claims(a Analysis, faults []model.FaultSpan, p model.Params) []Claim {
	// (1) Worst-case gap <= TTL + Wait. Exercised once leadership was lost or
	// changed hands; excused gaps (nobody could lead) do not count.
	gapBound, splitBound := model.ClaimBounds(p)
	gap := Claim{
		Name: ClaimGap, Statement: "worst-case leadership gap <= TTL + Wait",
		Bound: gapBound, Slack: ClaimSlack,
	}
	// An excused gap counts only by its longest part in which some instance
	// could have led: a moment with everyone down must not excuse the rest.
	var longest *Gap
	excused := 0
	for i, g := range a.Gaps {
		if g.Excuse != "" {
			excused++
		}
		if g.Counted > 0 && (longest == nil || g.Counted > longest.Counted) {
			longest = &a.Gaps[i]
		}
	}
	x := a.timings
	// judge is claimVerdict, or over every timing when agents' lines were
	// read late (timings.claimVerdict): best and worst give the windows on
	// the timings with the least and the most of them.
	judge := func(measured []model.Window, best, worst func() []model.Window, bound, slack time.Duration) ClaimVerdict {
		if x == nil {
			return claimVerdict(measured, bound, slack)
		}
		return x.claimVerdict(measured, best(), worst(), bound, slack)
	}
	counted := func(gs []Gap) []model.Window {
		var out []model.Window
		for _, g := range gs {
			if g.Counted > 0 {
				w := g.Window
				w.Duration = g.Counted
				out = append(out, w)
			}
		}
		return out
	}
	mostGaps := func() []model.Window { return counted(x.least.Gaps) }
	leastGaps := func() []model.Window { return counted(x.most.Gaps) }
	switch {
	case longest == nil && (x == nil || len(mostGaps()) == 0) && len(a.Handovers) == 0:
		gap.Verdict, gap.Detail = NotExercised, "leadership was never lost or handed over"
	case longest == nil:
		gap.Verdict, gap.Detail = Held, fmt.Sprintf("no counted gap in %d handovers", len(a.Handovers))
		if x != nil {
			gap.Verdict = judge(nil, leastGaps, mostGaps, gap.Bound, gap.Slack)
		}
	default:
		gap.Measured = longest.Counted
		gap.Verdict = judge(counted(a.Gaps), leastGaps, mostGaps, gap.Bound, gap.Slack)
		gap.Detail = fmt.Sprintf("longest gap %v from %v", ms(longest.Counted), ms(longest.Start))
		if longest.Counted != longest.Duration {
			gap.Detail += fmt.Sprintf(" (of %v; the rest nobody could lead)", ms(longest.Duration))
		}
		if longest.After != nil {
			gap.Detail += fmt.Sprintf(", after fault %d (%s)", longest.After.ID, longest.After.Kind)
		}
		if longest.Open {
			gap.Detail += ", still open at the end of the run"
		}
	}
	if excused > 0 {
		gap.Detail += fmt.Sprintf("; %d gaps partly excused: for a while no instance could lead", excused)
	}

	// (2) The split-brain window is bounded by the TTL.
	split := Claim{
		Name: ClaimSplitBrain, Statement: "split-brain (overlap) window <= TTL",
		Bound: splitBound, Slack: ClaimSlack, Measured: a.Summary.MaxOverlap,
	}
	switch {
	case len(faults) == 0 && len(a.Overlaps) == 0 && (x == nil || len(x.most.Overlaps) == 0):
		split.Verdict, split.Detail = NotExercised, "no fault and no overlap"
	default:
		split.Verdict = judge(windowsOf(a.Overlaps),
			func() []model.Window { return windowsOf(x.least.Overlaps) }, func() []model.Window { return windowsOf(x.most.Overlaps) },
			split.Bound, split.Slack)
		split.Detail = fmt.Sprintf("overlap windows: %d, longest %v, total %v", len(a.Overlaps), ms(a.Summary.MaxOverlap), ms(a.Summary.TotalOverlap))
	}

	// (3) No overlap away from faults: an overlap that intersects no fault's
	// span [applied, reach] has no excuse at all.
	calm := Claim{
		Name: ClaimNoFaultlessSplit, Statement: "no overlap without a fault",
		Slack: ClaimSlack,
	}
	unexplained := unexplainedOverlaps(a.Overlaps, faults)
	var total time.Duration
	for _, o := range unexplained {
		calm.Measured = max(calm.Measured, o.Duration)
		total += o.Duration
	}
	switch {
	case len(a.Beliefs) == 0:
		calm.Verdict, calm.Detail = NotExercised, "no instance ever led"
	default:
		calm.Verdict = judge(windowsOf(unexplained), x.unexplainedLeast, x.unexplainedMost, 0, calm.Slack)
		calm.Detail = fmt.Sprintf("overlap windows away from any fault: %d, total %v", len(unexplained), ms(total))
		if len(unexplained) > 0 {
			calm.Detail += fmt.Sprintf(", first at %v", ms(unexplained[0].Start))
		}
	}
	return []Claim{gap, split, calm}
}

// unexplainedOverlaps are the overlaps that touch no fault's reach.
func unexplainedOverlaps(overlaps []Overlap, faults []model.FaultSpan) []Overlap {
	var out []Overlap
	for _, o := range overlaps {
		if !slices.ContainsFunc(faults, func(f model.FaultSpan) bool { return f.Touches(o.Window) }) {
			out = append(out, o)
		}
	}
	return out
}

// claimVerdict judges a claim that the longest of ws is within bound +
// slack by the checks' rule (LongestWithin): not held only if some window
// is over it however its ends really came, held only if every window is
// within it however they came, unknown otherwise, so that one measurement
// has one verdict; and, like a check, unknown rather than held when one of
// its windows' ends was stamped more than MaxStampUncertainty late.
func claimVerdict(ws []model.Window, bound, slack time.Duration) ClaimVerdict {
	if bound == model.Unbounded || bound > model.Unbounded-slack {
		return Held
	}
	switch v, _ := LongestWithin(ws, bound+slack); {
	case v == model.Fail:
		return NotHeld
	case v == model.Unknown || tooLate(ws):
		return ClaimUnknown
	}
	return Held
}

// ms rounds a duration for reading: claim details are prose, the measured
// values keep their full precision in the Claim's fields.
func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
