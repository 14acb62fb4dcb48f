package sim

import (
	"fmt"
	"slices"
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
	// Faults is the fault schedule.
	Faults []Fault `json:"faults,omitempty"`
	// Workload is the load of runner-mode instances.
	Workload Workload `json:"workload"`
	// Expect are the limits the run must keep to pass.
	Expect []Expectation `json:"expect,omitempty"`
}

// Mode selects what an instance is.
type Mode string

// Instance modes.
const (
	ModeElector Mode = "elector"
	ModeRunner  Mode = "runner"
)

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

// FaultKind names a fault.
type FaultKind string

// Fault kinds.
const (
	FaultCrash        FaultKind = "crash"         // stop dead: no release, no more traffic; Restart brings up a fresh instance
	FaultStop         FaultKind = "stop"          // graceful stop (releases the lease); Restart brings up a fresh instance
	FaultPartition    FaultKind = "partition"     // cut the instance from Redis; see Mode
	FaultLatency      FaultKind = "latency"       // add Latency ± Jitter per Direction
	FaultPause        FaultKind = "pause"         // freeze the instance's clock and traffic
	FaultClock        FaultKind = "clock"         // clock runs at Rate, or jumps by Jump
	FaultRedisRestart FaultKind = "redis-restart" // restart Redis, empty (the lease is lost)
	FaultScriptFlush  FaultKind = "script-flush"  // SCRIPT FLUSH (the NOSCRIPT path)
)

// FaultKinds lists every kind, in the order documentation shows them.
var FaultKinds = []FaultKind{FaultCrash, FaultStop, FaultPartition, FaultLatency, FaultPause, FaultClock, FaultRedisRestart, FaultScriptFlush}

// Partition modes. The one-way modes drop only one direction: requests
// (client to Redis) or replies (Redis to client).
const (
	PartitionBlackhole         = "blackhole"          // timeout toxic 0 both ways: silence, sockets stay open
	PartitionRefuse            = "refuse"             // proxy disabled: connections refused and closed
	PartitionReset             = "reset"              // reset_peer: connections reset on use
	PartitionBlackholeRequests = "blackhole-requests" // requests dropped, replies would flow
	PartitionBlackholeReplies  = "blackhole-replies"  // requests reach Redis (and apply!), replies dropped
)

// PartitionModes lists the partition modes.
var PartitionModes = []string{PartitionBlackhole, PartitionRefuse, PartitionReset, PartitionBlackholeRequests, PartitionBlackholeReplies}

// Latency directions.
const (
	DirectionBoth     = "both"
	DirectionRequests = "requests"
	DirectionReplies  = "replies"
)

// Fault is one entry of the schedule.
type Fault struct {
	// At is when the fault is injected, from the start of the run.
	At time.Duration `json:"at"`
	// For is how long it lasts before it is healed. 0: until the end of the
	// fault phase (Scenario.Duration). Instant kinds (redis-restart,
	// script-flush, a clock jump) ignore it.
	For  time.Duration `json:"for,omitempty"`
	Kind FaultKind     `json:"kind"`
	// Target picks the instances; ignored by redis-restart and script-flush.
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
	// Restart (crash, stop): at heal, start a fresh instance (new id) at the
	// same index.
	Restart bool `json:"restart,omitempty"`
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

// Instant reports whether the fault is a single action with nothing to heal.
func (f Fault) Instant() bool {
	return f.Kind == FaultRedisRestart || f.Kind == FaultScriptFlush || (f.Kind == FaultClock && f.Rate == 0)
}

// withDefaults fills the zero fields of the scenario.
func (s Scenario) withDefaults() Scenario {
	if s.Seed == 0 {
		s.Seed = 1
	}
	if s.Instances == 0 {
		s.Instances = 3
	}
	if s.Mode == "" {
		s.Mode = ModeElector
	}
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
	for i := range s.Faults {
		f := &s.Faults[i]
		if f.Kind == FaultPartition && f.Mode == "" {
			f.Mode = PartitionBlackhole
		}
		if f.Kind == FaultLatency && f.Direction == "" {
			f.Direction = DirectionBoth
		}
	}
	return s
}

// Validate reports what is wrong with the scenario, naming the field.
func (s Scenario) Validate() error {
	s = s.withDefaults()
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if s.Instances < 1 {
		bad("instances: %d; need at least 1", s.Instances)
	}
	if s.Mode != ModeElector && s.Mode != ModeRunner {
		bad("mode: %q; want %q or %q", s.Mode, ModeElector, ModeRunner)
	}
	if s.TimeScale < 0 {
		bad("time_scale: %v; must be positive", s.TimeScale)
	}
	p := s.Params
	if p.TTL < 2*time.Millisecond {
		bad("ttl: %v; must be at least 2ms", p.TTL)
	}
	if p.Wait <= 0 {
		bad("wait: %v; must be positive", p.Wait)
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"dispatch_rate", s.Workload.DispatchRate}, {"delayed_rate", s.Workload.DelayedRate}} {
		// The dispatcher ticks every 1/rate: keep the period within [100µs, 100s].
		if r.v != 0 && (r.v < 0.01 || r.v > 10000) {
			bad("workload.%s: %v per second; want 0 (none) or 0.01 to 10000", r.name, r.v)
		}
	}
	if w := s.Workload; s.Mode == ModeRunner && (w.DispatchRate > 0 || w.DelayedRate > 0) {
		// The workload stops at the end of the fault phase; what it
		// dispatched last must be able to finish within the recovery, or it
		// is counted lost.
		need := p.ChoreInterval + w.TaskDuration
		if w.DelayedRate > 0 {
			need += w.Delay + p.ChoreInterval
		}
		if s.Recovery < need {
			bad("recovery: %v is too short for the workload to drain (at least %v: delay + 2 chore intervals + task duration); tasks dispatched at the end would count as lost", s.Recovery, need)
		}
	}
	if s.Duration < 0 || s.Recovery < 0 {
		bad("duration and recovery must not be negative")
	}
	for i, f := range s.Faults {
		where := fmt.Sprintf("faults[%d] (%s)", i, f.Kind)
		if f.At < 0 || f.At > s.Duration {
			bad("%s: at %v is outside the fault phase [0, %v]", where, f.At, s.Duration)
		}
		if f.For < 0 {
			bad("%s: for %v is negative", where, f.For)
		}
		for _, x := range f.Target.Indexes {
			if x < 0 || x >= s.Instances {
				bad("%s: target %d is out of range: instances are 0..%d", where, x, s.Instances-1)
			}
		}
		switch f.Target.Role {
		case "", RoleLeader, RoleFollower, RoleAll, RoleRandom:
		default:
			bad("%s: target %q; want an index list or leader, follower, all, random", where, f.Target.Role)
		}
		switch f.Kind {
		case FaultCrash, FaultStop, FaultPause, FaultRedisRestart, FaultScriptFlush:
		case FaultPartition:
			if !slices.Contains(PartitionModes, f.Mode) {
				bad("%s: mode %q; want one of %s", where, f.Mode, strings.Join(PartitionModes, ", "))
			}
		case FaultLatency:
			if f.Latency <= 0 {
				bad("%s: latency must be positive", where)
			}
			if f.Jitter < 0 || f.Jitter > f.Latency {
				bad("%s: jitter %v must be within [0, latency %v]", where, f.Jitter, f.Latency)
			}
			if !slices.Contains([]string{DirectionBoth, DirectionRequests, DirectionReplies}, f.Direction) {
				bad("%s: direction %q; want both, requests or replies", where, f.Direction)
			}
		case FaultClock:
			if f.Rate < 0 || (f.Rate == 0 && f.Jump == 0) {
				bad("%s: give a positive rate (drift) or a jump", where)
			}
		default:
			bad("faults[%d]: kind %q; want one of %v", i, f.Kind, FaultKinds)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("scenario %q: %s", s.Name, strings.Join(errs, "; "))
	}
	return nil
}

// Length is how long a run of the scenario lasts (fault phase plus
// recovery, scaled), not counting setup.
func (s Scenario) Length() time.Duration {
	e := s.withDefaults().scaled()
	return e.Duration + e.Recovery
}

// scaled returns the scenario with every duration multiplied by its
// TimeScale, so CI can run it faster.
func (s Scenario) scaled() Scenario {
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
		return time.Duration(float64(x) * k)
	}
	p := &s.Params
	p.TTL, p.Wait, p.OpTimeout, p.ChoreInterval = d(p.TTL), d(p.Wait), d(p.OpTimeout), d(p.ChoreInterval)
	if p.JitterMS > 0 {
		p.JitterMS = max(1, int(float64(p.JitterMS)*k+0.5))
	}
	c := &p.Client
	c.ReadTimeout, c.WriteTimeout, c.DialTimeout = d(c.ReadTimeout), d(c.WriteTimeout), d(c.DialTimeout)
	s.Duration, s.Recovery = d(s.Duration), d(s.Recovery)
	s.Workload.Delay, s.Workload.TaskDuration = d(s.Workload.Delay), d(s.Workload.TaskDuration)
	s.Workload.DispatchRate /= k
	s.Workload.DelayedRate /= k
	faults := make([]Fault, len(s.Faults))
	for i, f := range s.Faults {
		f.At, f.For, f.Latency, f.Jitter, f.Jump = d(f.At), d(f.For), d(f.Latency), d(f.Jitter), d(f.Jump)
		faults[i] = f
	}
	s.Faults = faults
	return s
}
