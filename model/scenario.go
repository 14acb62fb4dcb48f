package model

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// Scenario describes one run: the instances, their timings, what load they
// carry, the faults to inject and when. Package scenarios reads it from
// YAML; a Go test can build one directly. Zero values mean the defaults named
// on each field.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Seed drives every random choice of the run (fault targets, jitter,
	// latency jitter). Default 1.
	Seed int64 `json:"seed"`
	// Instances is how many instances run. Default 3.
	Instances int `json:"instances"`
	// Mode is "elector" (bare electors) or "runner" (full task runners).
	// Default "elector".
	Mode Mode `json:"mode"`
	// Params are the timings; see Params for their defaults.
	Params Params `json:"params"`
	// Duration is how long the fault phase lasts, from the start of the run.
	// Every fault still active at its end is healed. Default 30s.
	Duration time.Duration `json:"duration"`
	// Recovery is how long the run goes on after the heal, to measure the
	// time to a stable leader. Default TTL + Wait + 2s.
	Recovery time.Duration `json:"recovery"`
	// TimeScale multiplies every duration of the run (timings, client
	// timeouts, faults, duration, recovery, workload); 0.2 runs 5× faster.
	// Default 1.
	TimeScale float64 `json:"time_scale"`
	// Starts delays the instances' starts: instance i starts Starts[i]
	// after the run begins (an instance with no entry: at once). It sets
	// the followers' phases, where their acquire attempts (one every Wait
	// from their start) fall against the leader's renewals, which decides
	// how soon a follower takes a lost lease. Default: all at once.
	Starts []time.Duration `json:"starts,omitempty"`
	// Faults is the fault schedule.
	Faults []Fault `json:"faults,omitempty"`
	// Redis is the Redis the instances share: "single" (one redis-server,
	// the default), "replicated" (a primary and a replica; the instances
	// reach the primary through an address that follows it across a
	// failover, as a managed Redis's primary endpoint does) or "cluster"
	// (a Redis Cluster of 3 primaries and 3 replicas, reached with
	// go-redis's ClusterClient). Only the real backend runs the last two.
	Redis Topology `json:"redis,omitempty"`
	// Backend is the backend the scenario is written for: "real",
	// "virtual" or "process"; "" leaves the choice to the caller (a CLI run
	// without --backend uses it).
	Backend string `json:"backend,omitempty"`
	// Agent is what every instance runs on the process backend (nil: the
	// caller's choice; the CLI's is its own `chaos agent`).
	Agent *Agent `json:"agent,omitempty"`
	// Workload is the load of runner-mode instances.
	Workload Workload `json:"workload"`
	// Expect are the limits the run must keep to pass.
	Expect []Expectation `json:"expect,omitempty"`
	// StrictClaims makes the spec's timing claims expectations too: a claim
	// the run exercised and did not hold fails it (by default a claim not
	// held is a finding beside the verdict).
	StrictClaims bool `json:"strict_claims,omitempty"`
	// Source is the file the scenario was read from, as the caller named
	// it (scenarios.Load); "" for a built-in or one made in code. A
	// report's reproduce line reruns this file, not a built-in of the
	// same name.
	Source string `json:"source,omitempty"`
}

// Agent is a process-backend agent: the program every instance runs.
type Agent struct {
	// Command is the program and its arguments. Required.
	Command []string `json:"command"`
	// Env is added to the agent's environment.
	Env map[string]string `json:"env,omitempty"`
}

// Backends a scenario may name.
var Backends = []string{"real", "virtual", "process"}

// SharedBackend is the backend every scenario of a suite names, which runs
// them when the caller names none; "" when one names none or they differ
// (the caller's default then).
func SharedBackend(scs []Scenario) string {
	b := ""
	for i, sc := range scs {
		if i > 0 && sc.Backend != b {
			return ""
		}
		b = sc.Backend
	}
	return b
}

// Mode selects what an instance is.
type Mode string

// Instance modes.
const (
	ModeElector Mode = "elector"
	ModeRunner  Mode = "runner"
)

// Topology is the shape of the Redis a scenario runs against.
type Topology string

// Topologies.
const (
	RedisSingle     Topology = "single"
	RedisReplicated Topology = "replicated"
	RedisCluster    Topology = "cluster"
)

// Topologies lists the topologies.
var Topologies = []Topology{RedisSingle, RedisReplicated, RedisCluster}

// Workload is what runner-mode instances are given to do.
type Workload struct {
	// DispatchRate is tasks dispatched per second (spread over the
	// instances). 0: none.
	DispatchRate float64 `json:"dispatch_rate,omitempty"`
	// DelayedRate is delayed tasks scheduled per second. 0: none.
	DelayedRate float64 `json:"delayed_rate,omitempty"`
	// Delay is how far ahead delayed tasks are due. Default 1s.
	Delay time.Duration `json:"delay,omitempty"`
	// TaskDuration is how long each task's handler runs. Default 10ms.
	TaskDuration time.Duration `json:"task_duration,omitempty"`
}

// FaultKind names a fault. Each kind is declared, with everything known
// about it, in its own file (kind_<name>.go; see KindSpec).
type FaultKind string

// Fault is one entry of the schedule.
type Fault struct {
	// At is when the fault is injected, from the start of the run.
	At time.Duration `json:"at"`
	// For is how long it lasts before it is healed. 0: until the end of the
	// fault phase (Scenario.Duration). Instant kinds (the kinds that act
	// on Redis, a clock jump) ignore it.
	For  time.Duration `json:"for,omitempty"`
	Kind FaultKind     `json:"kind"`
	// Target picks the instances; ignored by the kinds that act on Redis.
	Target Target `json:"target"`

	// Partition: Mode is one of PartitionModes. Default blackhole.
	Mode string `json:"mode,omitempty"`
	// Latency: added one-way delay, ± a uniform Jitter per chunk drawn from
	// the scenario's seed, on Direction (default both).
	Latency   time.Duration `json:"latency,omitempty"`
	Jitter    time.Duration `json:"jitter,omitempty"`
	Direction string        `json:"direction,omitempty"`
	// Clock: Rate is the speed of the instance's clock (1 = true; 0.5 =
	// half speed), Jump a step of its wall time.
	Rate float64       `json:"rate,omitempty"`
	Jump time.Duration `json:"jump,omitempty"`
	// Lag (redis-failover): how long before the promotion the replica
	// stopped applying writes. 0: a clean failover that loses nothing.
	Lag time.Duration `json:"lag,omitempty"`
	// Restart (crash, stop): at heal, start a fresh instance (new id) at the
	// same index.
	Restart bool `json:"restart,omitempty"`
	// AllowSkipped accepts that the fault's role matched nobody at its
	// moment (no leader to hit): by default such a run is unknown, since it
	// never created the situation the scenario is about.
	AllowSkipped bool `json:"allow_skipped,omitempty"`
}

// Target names the instances a fault hits: fixed indexes, or a role resolved
// at the moment of injection.
type Target struct {
	// Indexes are fixed instance indexes (0-based).
	Indexes []int `json:"indexes,omitempty"`
	// Role is "leader" (whoever believes it leads; the first by index if
	// several), "follower" (a random live non-leader), "all", or "random"
	// (a random live instance). Randomness comes from the scenario seed.
	Role string `json:"role,omitempty"`
}

// Target roles.
const (
	RoleLeader   = "leader"
	RoleFollower = "follower"
	RoleAll      = "all"
	RoleRandom   = "random"
)

// Resolve picks the instances the target names at the moment of injection,
// the one rule every backend follows: fixed indexes as given; "all" every
// live instance; "follower" and "random" one live non-leader or one live
// instance, drawn with intn (the scenario's seeded RNG); "leader" the lowest
// live index that believes it leads. live lists the live instances in index
// order, leading says which of them believe they lead. nil: nobody matched
// (the fault is skipped).
func (t Target) Resolve(live []int, leading map[int]bool, intn func(n int) int) []int {
	if len(t.Indexes) > 0 {
		return append([]int(nil), t.Indexes...)
	}
	var leaders, followers []int
	for _, i := range live {
		if leading[i] {
			leaders = append(leaders, i)
		} else {
			followers = append(followers, i)
		}
	}
	pick := func(from []int) []int {
		if len(from) == 0 {
			return nil
		}
		return []int{from[intn(len(from))]}
	}
	switch t.Role {
	case RoleAll:
		return live
	case RoleFollower:
		return pick(followers)
	case RoleRandom:
		return pick(live)
	default:
		if len(leaders) == 0 {
			return nil
		}
		return leaders[:1]
	}
}

func (t Target) String() string {
	if len(t.Indexes) > 0 {
		s := make([]string, len(t.Indexes))
		for i, x := range t.Indexes {
			s[i] = fmt.Sprint(x)
		}
		return strings.Join(s, ",")
	}
	if t.Role == "" {
		return RoleLeader
	}
	return t.Role
}

// Describe renders the fault's parameters for the timeline
// (FaultApplied's Detail): "for=14s mode=blackhole target=leader".
func (f Fault) Describe() string {
	var parts []string
	add := func(k string, v any) { parts = append(parts, fmt.Sprintf("%s=%v", k, v)) }
	if f.For > 0 {
		add("for", f.For)
	}
	k := KindSpecOf(f.Kind)
	if len(k.ModeValues) > 0 {
		add("mode", f.Mode)
	}
	if k.describe != nil {
		k.describe(f, add)
	}
	if !f.Kind.OnRedis() {
		add("target", f.Target.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// PhaseEnd is the shortest fault phase that holds the fault: its end
// (At + For + Lag), and at least 1 ns past its start, since a fault must
// start before the phase ends (an instant fault, or one without a For that
// lasts to the phase's end). A schedule that moves or sizes faults
// stretches the phase to the latest PhaseEnd.
func (f Fault) PhaseEnd() time.Duration { return max(f.At+f.For+f.Lag, f.At+1) }

// Instant reports whether the fault is a single action with nothing to heal.
func (f Fault) Instant() bool {
	k := KindSpecOf(f.Kind)
	return (k.OnRedis && !k.Spans) || (k.instant != nil && k.instant(f))
}

// WithDefaults returns the scenario with its zero fields filled with their
// defaults. The caller's scenario is left as it was.
func (s Scenario) WithDefaults() Scenario {
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Instances == 0 {
		s.Instances = 3
	}
	if s.Mode == "" {
		s.Mode = ModeElector
	}
	if s.Redis == "" {
		s.Redis = RedisSingle
	}
	s.Params.Client.Cluster = s.Redis == RedisCluster
	if s.TimeScale == 0 {
		s.TimeScale = 1
	}
	s.Params = s.Params.WithDefaults()
	if s.Duration == 0 {
		s.Duration = 30 * time.Second
	}
	if s.Recovery == 0 {
		s.Recovery = s.Params.TTL + s.Params.Wait + 2*time.Second
	}
	if s.Workload.Delay == 0 {
		s.Workload.Delay = time.Second
	}
	if s.Workload.TaskDuration == 0 {
		s.Workload.TaskDuration = 10 * time.Millisecond
	}
	// A copy: the caller's Faults share their array with s, and filling
	// defaults must not change the caller's scenario (Validate fills them on
	// its own copy of s).
	s.Faults = slices.Clone(s.Faults)
	for i := range s.Faults {
		f := &s.Faults[i]
		k := KindSpecOf(f.Kind)
		if f.Mode == "" && len(k.ModeValues) > 0 {
			f.Mode = k.ModeValues[0]
		}
		if k.defaults != nil {
			k.defaults(f)
		}
	}
	return s
}

// Time scales a scenario may run at. Above 100 a default scenario runs for
// days; below 0.01 a 5 s TTL is 50 ms, about what the harness resolves, and
// scaled timings round to nothing.
const (
	MinTimeScale = 0.01
	MaxTimeScale = 100
)

// MaxRunLength bounds a run's scaled length (fault phase plus recovery) and
// every scaled fault time: beyond it a run is a typo (duration: 1000000h),
// and far beyond it the scaled durations overflow.
const MaxRunLength = 7 * 24 * time.Hour

// MaxNameLen bounds a scenario's name: it names a report directory, and
// most file systems refuse a component longer than 255 bytes.
const MaxNameLen = 100

// nameRule is what a scenario name may be made of: it names the run's Redis
// keys and Toxiproxy proxies, so it stays a plain identifier.
var nameRule = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// NameProblem says what is wrong with n as a scenario's name, or "" if
// nothing is: the one name rule, of Validate and of scenario files. A name
// is letters, digits, '.', '_' and '-', starting with a letter or a digit,
// at most MaxNameLen bytes.
func NameProblem(n string) string {
	if len(n) > MaxNameLen {
		return fmt.Sprintf("%.40q… is %d bytes; at most %d (it names the report directory)", n, len(n), MaxNameLen)
	}
	if !nameRule.MatchString(n) {
		return fmt.Sprintf("%q; use letters, digits, '.', '_' and '-' (it names the run's Redis keys and proxies)", n)
	}
	return ""
}

// NameFrom turns s into a valid name (NameProblem), for a name made from
// something else (a Go test's): every other character becomes '_', a
// leading '.', '_' or '-' gets an 'x' before it, and it is cut to
// MaxNameLen bytes.
func NameFrom(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || !(b[0] >= 'a' && b[0] <= 'z' || b[0] >= 'A' && b[0] <= 'Z' || b[0] >= '0' && b[0] <= '9') {
		b = append([]byte("x"), b...)
	}
	return string(b[:min(len(b), MaxNameLen)])
}

// electorFields names the elector's options as a scenario file writes them.
var electorFields = map[string]string{
	"TTL": "elector.ttl", "Wait": "elector.wait", "JitterMS": "elector.jitter",
	"OpTimeout": "elector.op_timeout", "SafeMargin": "elector.safe_margin",
}

// MaxInstances is the largest fleet a scenario may ask for: each instance is
// a proxy, a client and goroutines on one machine, and past this the host,
// not the elector, is what gets measured.
const MaxInstances = 1000

// Bounds of the rates a scenario may use, after scaling.
const (
	// MinRate and MaxRate bound workload rates (tasks per second): the
	// dispatcher ticks every 1/rate, which must stay within [100µs, 100s].
	MinRate = 0.01
	MaxRate = 10000
	// MinClockRate and MaxClockRate bound a clock fault's speed.
	MinClockRate = 0.01
	MaxClockRate = 100
)

// Length is how long a run of the scenario lasts (fault phase plus
// recovery, scaled), not counting setup.
func (s Scenario) Length() time.Duration {
	e := s.WithDefaults().Scaled()
	return e.Duration + e.Recovery
}

// Scaled returns the scenario with every duration multiplied by its
// TimeScale, so CI can run it faster.
func (s Scenario) Scaled() Scenario {
	k := s.TimeScale
	if k == 1 {
		return s
	}
	// Only positive durations scale: a negative one means "none" (a client
	// timeout of -1), and must stay so.
	d := func(x time.Duration) time.Duration {
		if x <= 0 {
			return x
		}
		// Saturate rather than wrap: Validate then refuses what is absurd.
		if v := float64(x) * k; v < float64(math.MaxInt64) {
			return time.Duration(v)
		}
		return time.Duration(math.MaxInt64)
	}
	p := &s.Params
	p.TTL, p.Wait, p.OpTimeout, p.ChoreInterval, p.SafeMargin = d(p.TTL), d(p.Wait), d(p.OpTimeout), d(p.ChoreInterval), d(p.SafeMargin)
	if p.JitterMS > 0 {
		p.JitterMS = max(1, int(float64(p.JitterMS)*k+0.5))
	}
	c := &p.Client
	c.ReadTimeout, c.WriteTimeout, c.DialTimeout = d(c.ReadTimeout), d(c.WriteTimeout), d(c.DialTimeout)
	s.Duration, s.Recovery = d(s.Duration), d(s.Recovery)
	s.Workload.Delay, s.Workload.TaskDuration = d(s.Workload.Delay), d(s.Workload.TaskDuration)
	s.Workload.DispatchRate /= k
	s.Workload.DelayedRate /= k
	if len(s.Starts) > 0 {
		starts := make([]time.Duration, len(s.Starts))
		for i, x := range s.Starts {
			starts[i] = d(x)
		}
		s.Starts = starts
	}
	faults := make([]Fault, len(s.Faults))
	for i, f := range s.Faults {
		f.At, f.For, f.Latency, f.Jitter, f.Jump, f.Lag = d(f.At), d(f.For), d(f.Latency), d(f.Jitter), d(f.Jump), d(f.Lag)
		faults[i] = f
	}
	s.Faults = faults
	return s
}

// AsElector returns the scenario with bare electors: elector mode, no
// workload, and without the expectations only runner mode measures, which
// Validate refuses in elector mode. It is how a runner-mode scenario is
// run on a backend that models no task runners (the virtual one), for the
// leadership it measures.
func (s Scenario) AsElector() Scenario {
	s.Mode = ModeElector
	s.Workload = Workload{}
	s.Params.ChoreInterval = 0
	s.Expect = slices.DeleteFunc(slices.Clone(s.Expect), func(x Expectation) bool { return slices.Contains(runnerMetrics, x.Metric) })
	return s
}
