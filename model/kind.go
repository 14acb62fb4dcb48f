package model

import (
	"slices"
	"strings"
	"time"
)

// KindSpec is everything leaselab knows about one fault kind, in one place.
// Each kind has a file of its own, kind_<name>.go, that declares its
// constant and fills in its KindSpec: what it acts on, its parameters and
// its validation rules, its failure mode and its share of the applied fault
// size, its colour in plots, and its entries in the starter suite, sweep
// grids and advise (or why it has none). Everything else looks the kind up
// (SpecOf) rather than switching on its constant; how the fault is driven
// is the kind's file in package sim/faults. The unexported hooks are
// model's own; nil means the kind has no such rule.
type KindSpec struct {
	// Kind is the kind's name, as scenario files write it.
	Kind FaultKind
	// Doc says in a line what the fault does, for listings.
	Doc string

	// OnRedis: the kind acts on Redis itself; it takes no target and is
	// never skipped.
	OnRedis bool
	// Spans: a kind on Redis that lasts its For (until its heal) rather
	// than being a single action.
	Spans bool
	// OnProcess: the kind acts on the instance's process (so it cannot hit
	// an instance that is down), not on its link to Redis.
	OnProcess bool
	// Downs: the kind takes its targets down (a crash, a stop) until a
	// restart starts them again.
	Downs bool
	// Stops: the kind stops its targets' process until its heal resumes it
	// (a pause, a suspend); two such faults on one instance at once are
	// refused.
	Stops bool
	// EmptiesScripts: Redis forgets the elector's scripts (the NOSCRIPT
	// path follows).
	EmptiesScripts bool
	// Params are the kind's own fields as a scenario file names them
	// ("mode", "latency"); a fault of the kind takes no other parameter.
	Params []string
	// ModeValues are the values of the kind's parameter mode, the first
	// its default (nil: the kind takes no mode).
	ModeValues []string

	// Modes are the failure modes (Mode…) a fault of the kind puts the
	// election in, whose bounds predict it; none: the bounds take it as no
	// failure of their own.
	Modes []string

	// Colour is the kind's colour in timeline plots, as 0xRRGGBB: distinct
	// from every other kind's, and not red (red is a gap).
	Colour uint32

	// Starter gives the kind's scenarios of a starter suite (chaos init),
	// sized by sz; nil: NoStarter says why it has none.
	Starter   func(sz StarterSizes) []StarterEntry
	NoStarter string
	// Axes are the sizes of the kind's faults a sweep grid can vary; none:
	// NoAxes says why.
	Axes   []SizeAxis
	NoAxes string
	// ModeFault is the fault that exercises failure mode (one of the
	// kind's) on the leader with the timings p, sized by s (long: a span
	// for the worst case to happen within), for chaos advise's confirming
	// search; false: s gives that mode no size. nil: NoModeFault says why.
	ModeFault   func(mode string, p Params, s FaultSize, long time.Duration) (Fault, bool)
	NoModeFault string

	// Text lists the kind's own parameters as a report shows them
	// ("latency 200ms ± 20ms"), durations written by dur (which scales and
	// rounds them); nil: none beside its mode (ParamsText).
	Text func(f Fault, dur func(time.Duration) string) []string

	// Needs are what the kind asks of the environment and the instances,
	// beside what Validate checks.
	Needs KindNeeds

	// defaults fills the kind's parameters left at zero.
	defaults func(f *Fault)
	// describe adds the kind's parameters to Describe's text.
	describe func(f Fault, add func(k string, v any))
	// instant reports whether a fault of a kind that otherwise lasts is a
	// single action (a clock jump); forProblem says why it then takes no
	// for.
	instant    func(f Fault) bool
	forProblem string
	// TopologyProblem says why the kind cannot run on redis, a topology
	// not among Needs.Topologies.
	TopologyProblem func(redis Topology) string
	// problems checks a fault of the kind on its own (its values).
	problems func(c faultCheck)
	// scaledProblems checks the fault as it will run, scaled.
	scaledProblems func(c faultCheck, scaled string)
	// scenarioProblems checks fault i of the kind against the others.
	scenarioProblems func(s Scenario, i int, ok []bool, ps *problems)
	// mode picks f's failure mode among Modes, where there are several.
	mode func(f Fault) string
	// PlanEnd is when a scheduled fault of the kind stops acting, if not
	// at its heal (a failover switches after its lag).
	PlanEnd func(f Fault) time.Duration
	// Size adds an applied fault of the kind to the run's fault size.
	Size func(z *Sizing, f FaultOutcome, sf Fault)
	// SlowsReplies: while the fault is in force a renewal's reply may come
	// late or not at all (a NOSCRIPT's second round trip with it).
	SlowsReplies func(sf Fault) bool
	// SparesTakeover: an instance the fault hits can still take over on
	// schedule (a clock jump or a fast clock: its timers keep real time).
	SparesTakeover func(sf Fault) bool
	// HitsAllUntargeted: an applied fault of the kind recorded without
	// targets is taken to cut every instance off.
	HitsAllUntargeted bool
	// SlowWinner: a follower the fault slowed may win while it lasts
	// (slowWinner).
	SlowWinner bool
	// Phantoms is how many unseen acquires one follower a fault of the
	// kind hit can leave (phantomsPerFollower; -1: no bound); nil: none.
	// perTTL counts one per TTL while the fault lasted, plus extra.
	Phantoms func(p Params, sf Fault, g FaultOutcome, perTTL func(extra time.Duration) int) int
	// PhantomAtInjection: the unseen acquire is the one on the wire when
	// the fault struck (a crash), not one sent while it lasts.
	PhantomAtInjection bool
	// StretchesCalls: a fault of the kind can stretch every round trip of
	// a call to just inside the attempt timeout (longestLatencyCall).
	StretchesCalls bool
	// HoldsRequests is how long a fault of the kind holds a request on its
	// way to Redis (forwarded even after its client gave up).
	HoldsRequests func(sf Fault) time.Duration
}

// KindNeeds are what a kind asks of the environment and the instances.
type KindNeeds struct {
	// Topologies are the Redis topologies the kind runs on; nil: any.
	// Validate refuses the others.
	Topologies []Topology
	// OwnedRedis: the kind needs a Redis the harness owns (it restarts
	// it); an external Redis cannot take it.
	OwnedRedis bool
	// AgentCapability is the capability an agent must announce for the
	// process backend to drive the kind ("": none).
	AgentCapability string
	// NotOnProcess says why the process backend cannot drive the kind
	// ("": it can).
	NotOnProcess string
}

// StarterSizes are the sizes a starter suite gives its faults.
type StarterSizes struct {
	// Long is long enough for the leader's hung renewal to end inside the
	// fault and for the followers to take over: the worst case can happen.
	Long time.Duration
	// Latency, Pause: the latency and pause scenarios' sizes (always
	// given). Suspend, RedisPause: 0 for no such scenario.
	Latency, Pause, Suspend, RedisPause time.Duration
}

// StarterEntry is one scenario of a starter suite: its name, what happens
// in it, and its fault (the suite sets At).
type StarterEntry struct {
	Name, What string
	Fault      Fault
}

// SizeAxis is a size of a kind's faults that a sweep grid varies, every
// fault of the kind in the base scenario taking each value in turn.
type SizeAxis struct {
	// Param names the axis, as a sweep file writes it (sweep.Params lists
	// it, and reads its values).
	Param string
	// Qualifier narrows the faults it sizes, in a message ("with a rate").
	Qualifier string
	// Sizes reports whether the axis sizes f (nil: every fault of the kind).
	Sizes func(f Fault) bool
	// Set gives f the axis's value: d for a duration, rate for a rate.
	Set func(f *Fault, d time.Duration, rate float64)
}

// Applies reports whether the axis sizes f, a fault of its kind.
func (x SizeAxis) Applies(f Fault) bool { return x.Sizes == nil || x.Sizes(f) }

// kinds are the registered kinds, in the order documentation shows them.
var kinds []*KindSpec

// FaultKinds lists every kind, in the order documentation shows them.
var FaultKinds []FaultKind

// unknownKind is the spec of a kind that is not registered: no rules, no
// traits.
var unknownKind = &KindSpec{}

// The registry: a new kind is one more entry here and its own file.
func init() {
	register(&crashKind, &stopKind, &partitionKind, &latencyKind, &pauseKind, &suspendKind, &clockKind,
		&redisRestartKind, &scriptFlushKind, &redisFailoverKind, &slotMigrationKind, &redisPauseKind)
}

func register(specs ...*KindSpec) {
	for _, s := range specs {
		if s.Kind == "" || slices.Contains(FaultKinds, s.Kind) {
			panic("model: fault kind registered twice or without a name: " + string(s.Kind))
		}
		kinds = append(kinds, s)
		FaultKinds = append(FaultKinds, s.Kind)
	}
}

// Kinds returns every registered kind's spec, in the order of FaultKinds.
func Kinds() []KindSpec {
	out := make([]KindSpec, len(kinds))
	for i, s := range kinds {
		out[i] = *s
	}
	return out
}

// SpecOf returns the spec of kind k, and false if k is not a kind.
func SpecOf(k FaultKind) (KindSpec, bool) {
	s := KindSpecOf(k)
	return *s, s != unknownKind
}

// KindSpecOf is the registered spec of k, or the empty one if k is not a
// kind: the stages read its hooks through it (SpecOf is a copy, for
// everyone else); nothing may change it.
func KindSpecOf(k FaultKind) *KindSpec {
	for _, s := range kinds {
		if s.Kind == k {
			return s
		}
	}
	return unknownKind
}

// OnRedis reports whether the kind acts on Redis itself: it takes no target
// and is never skipped.
func (k FaultKind) OnRedis() bool { return KindSpecOf(k).OnRedis }

// Spans reports whether a kind that acts on Redis lasts its For (until its
// heal) rather than being a single action.
func (k FaultKind) Spans() bool { return KindSpecOf(k).Spans }

func kindList() string {
	s := make([]string, len(FaultKinds))
	for i, k := range FaultKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// faultCheck is a kind's view of one fault under validation: the scenario
// (defaults filled), the fault, and where its problems go.
type faultCheck struct {
	s     Scenario
	f     Fault
	where string // "faults[2]"
	ps    *problems
}

// bad records a problem of the fault's field (".mode"; "" for the fault).
func (c faultCheck) bad(field, format string, a ...any) { c.ps.bad(c.where+field, format, a...) }

// badRef records a problem found by reading refs too.
func (c faultCheck) badRef(field string, refs []string, format string, a ...any) {
	c.ps.badRef(c.where+field, refs, format, a...)
}

// inPhase reports whether the fault starts within the fault phase (its own
// problem otherwise), so that a time after its start can be judged.
func (c faultCheck) inPhase() bool { return c.f.At >= 0 && c.f.At < c.s.Duration }

// Sizing is what the kinds' size hooks add to: the size being built, the
// effective scenario the fault IDs index, the run's analysis, and the
// stops of each instance (a pause's and a suspend's add up).
type Sizing struct {
	Size     *FaultSize
	Scenario Scenario
	Faults   []FaultOutcome // every fault the run applied
	Stopped  map[int][]StopSpan
}

// StopSpan is one stop of an instance (a pause or a suspend).
type StopSpan struct {
	From, To time.Duration
	Leader   bool // the stop hit a leader (not a follower mid-acquire)
}

// lasted is how long an applied fault lasted (Unbounded if it never
// healed).
func lasted(f FaultOutcome) time.Duration {
	if f.Open {
		return Unbounded
	}
	return f.Healed - f.Applied
}

// FaultOf is fault id of sc, or the zero fault if id indexes none.
func FaultOf(sc Scenario, id int) Fault {
	if id < 0 || id >= len(sc.Faults) {
		return Fault{}
	}
	return sc.Faults[id]
}

// ParamsText lists the fault's parameters as a report shows them: its
// mode (the default if unset), its kind's Text, and a restart; durations
// written by dur.
func (f Fault) ParamsText(dur func(time.Duration) string) []string {
	k := KindSpecOf(f.Kind)
	var p []string
	if len(k.ModeValues) > 0 {
		m := f.Mode
		if m == "" {
			m = k.ModeValues[0]
		}
		p = append(p, "mode "+m)
	}
	if k.Text != nil {
		p = append(p, k.Text(f, dur)...)
	}
	if f.Restart {
		p = append(p, "restart at heal")
	}
	return p
}

// FailureMode is the failure mode fault f puts the election in, whose bounds
// predict it: "" for a kind the bounds take as no failure of their own.
func (f Fault) FailureMode() string {
	k := KindSpecOf(f.Kind)
	switch {
	case k.mode != nil:
		return k.mode(f)
	case len(k.Modes) > 0:
		return k.Modes[0]
	}
	return ""
}
