package model

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/election/timing"
)

// FieldError is one problem of a scenario. Field is the path of the
// offending field as a scenario file writes it ("elector.ttl",
// "faults[2].at", "workload.dispatch_rate"; "" for the whole scenario), so
// a parser can point at its line.
type FieldError struct {
	Field string
	Msg   string
	// Elem is the path of the element of Field the problem is about, when
	// it is more precise than Field ("faults[3].target[1]": the second
	// index of a target list), for a parser to put the problem on its
	// line; "" otherwise.
	Elem string
	// Refs are the other fields the rule read to find the problem
	// ("duration" for a fault past the fault phase, "faults[0]" for the
	// fault another one conflicts with). A parser that could not read one
	// of them drops the problem, a consequence of the default it left in
	// that field's place; the message names each fault among them as
	// "faults[N]", for a parser to add its line.
	Refs []string
}

// ValidationError lists every problem Validate found.
type ValidationError struct {
	Scenario string
	Problems []FieldError
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Msg
		if p.Field != "" {
			msgs[i] = p.Field + ": " + p.Msg
		}
	}
	return fmt.Sprintf("scenario %q: %s", e.Scenario, strings.Join(msgs, "; "))
}

// RunnerOnly is the problem of a field, or an expectation's metric, that
// only runner-mode instances use, in a scenario of bare electors.
const RunnerOnly = "applies only to mode: runner (this scenario runs bare electors)"

// Bounds of the go-redis client options a scenario may set.
const (
	// MaxClientRetries bounds ClientParams.MaxRetries.
	MaxClientRetries = 100
	// MaxPoolSize bounds ClientParams.PoolSize.
	MaxPoolSize = 10000
)

// InstancesProblem says what is wrong with n as a scenario's instance
// count, or "" if nothing is: Validate's rule, for a parser to apply to a
// count before it narrows it to an int (and to an explicit 0, which the
// Scenario reads as "the default").
func InstancesProblem(n int64) string {
	if n < 1 || n > MaxInstances {
		return fmt.Sprintf("%d; want 1 to %d", n, MaxInstances)
	}
	return ""
}

// FieldProblem says why the fault does not take the field named as a
// scenario file names it ("for", "target", "allow_skipped", or a kind's
// parameter: "mode", "latency", "jitter", "direction", "rate", "jump",
// "restart", "lag"), or "" if it does, or if its kind is not one of
// FaultKinds. Validate applies it to every field the fault sets; a parser
// applies it to every key a fault writes, which finds a field written with
// its zero value too (restart: false on a partition).
func (f Fault) FieldProblem(field string) string {
	k := KindSpecOf(f.Kind)
	if k == unknownKind {
		return ""
	}
	switch field {
	case "for":
		switch {
		case k.OnRedis && !k.Spans:
			return fmt.Sprintf("%s is instant; it takes no for", f.Kind)
		case k.instant != nil && k.instant(f):
			return k.forProblem
		}
	case "target":
		if k.OnRedis {
			return fmt.Sprintf("%s acts on Redis itself; it takes no target", f.Kind)
		}
	case "allow_skipped":
		if k.OnRedis {
			return fmt.Sprintf("%s acts on Redis itself and is never skipped", f.Kind)
		}
	default:
		if slices.Contains(k.Params, field) {
			return ""
		}
		var owners []string
		for _, o := range kinds {
			if slices.Contains(o.Params, field) {
				owners = append(owners, string(o.Kind))
			}
		}
		if len(owners) == 0 {
			return "" // not a parameter
		}
		msg := fmt.Sprintf("applies only to %s faults, not %s", strings.Join(owners, " and "), f.Kind)
		if field == "jitter" {
			msg += " (the elector's renewal jitter is elector.jitter)"
		}
		return msg
	}
	return ""
}

// setFields are the fields the fault sets (non-zero), as FieldProblem names
// them.
func (f Fault) setFields() []string {
	var out []string
	for _, x := range []struct {
		name string
		set  bool
	}{
		{"mode", f.Mode != ""}, {"latency", f.Latency != 0}, {"jitter", f.Jitter != 0},
		{"direction", f.Direction != ""}, {"rate", f.Rate != 0}, {"jump", f.Jump != 0},
		{"restart", f.Restart}, {"lag", f.Lag != 0}, {"for", f.For > 0},
		{"target", len(f.Target.Indexes) > 0 || f.Target.Role != ""}, {"allow_skipped", f.AllowSkipped},
	} {
		if x.set {
			out = append(out, x.name)
		}
	}
	return out
}

// problems collects a scenario's problems.
type problems struct{ list []FieldError }

func (p *problems) bad(field, format string, a ...any) {
	p.list = append(p.list, FieldError{Field: field, Msg: fmt.Sprintf(format, a...)})
}

// badRef records a problem found by reading refs too.
func (p *problems) badRef(field string, refs []string, format string, a ...any) {
	p.list = append(p.list, FieldError{Field: field, Refs: refs, Msg: fmt.Sprintf(format, a...)})
}

// Validate reports what is wrong with the scenario as it will run: with its
// defaults filled and, for the rules on timings and rates, every duration
// scaled by its TimeScale (a 5ms TTL at time scale 0.2 is a 1ms TTL, which
// the elector refuses). It is the one place these rules live: package
// scenarios reads types and syntax and maps each problem here to its
// file:line, so the Go API refuses what a scenario file is refused for.
// The error is a *ValidationError.
func (s Scenario) Validate() error {
	raw := s
	s = s.WithDefaults()
	ps := &problems{}
	bad := ps.bad
	s.headerProblems(raw, ps)
	// Only the rules on scaled timings need a time scale in range and a
	// run that scales without overflow; the others are checked anyway, so
	// that one look at the errors shows every problem.
	scalable := false
	if k := s.TimeScale; !ValidTimeScale(k) {
		bad("time_scale", "%v; want a factor from %v to %v (0.2 runs 5× faster)", k, MinTimeScale, MaxTimeScale)
	} else {
		scalable = !s.lengthProblems(ps)
	}
	if s.Duration < 0 || s.Recovery < 0 {
		bad("duration", "duration and recovery must not be negative")
	}
	if len(s.Starts) > s.Instances {
		ps.badRef("starts", []string{"instances"}, "%d starts for %d instances", len(s.Starts), s.Instances)
	}
	for i, d := range s.Starts {
		if d < 0 || d >= s.Duration {
			ps.badRef(fmt.Sprintf("starts[%d]", i), []string{"duration"}, "%v; want from 0s to less than the duration (%v)", d, s.Duration)
		}
	}
	if scalable {
		s.scaledProblems(ps)
	}
	ok := s.faultProblems(ps)
	s.conflicts(ok, ps)
	for _, k := range kinds {
		if k.scenarioProblems == nil {
			continue
		}
		for i, f := range s.Faults {
			if ok[i] && f.Kind == k.Kind {
				k.scenarioProblems(s, i, ok, ps)
			}
		}
	}
	s.notStartedProblems(ok, ps)
	for _, x := range s.Expect {
		ps.list = append(ps.list, x.Problems(s.Mode, s.Params)...)
	}
	return ps.err(s.Name)
}

func (p *problems) err(name string) error {
	if len(p.list) == 0 {
		return nil
	}
	return &ValidationError{Scenario: name, Problems: p.list}
}

// headerProblems checks the scenario's own fields: its enums, its name,
// its agent, the client options and what only runner mode uses. raw is the
// scenario before its defaults were filled.
func (s Scenario) headerProblems(raw Scenario, ps *problems) {
	bad := ps.bad
	if msg := InstancesProblem(int64(s.Instances)); msg != "" {
		bad("instances", "%s", msg)
	}
	if s.Mode != ModeElector && s.Mode != ModeRunner {
		bad("mode", "unknown mode %q; want elector or runner", s.Mode)
	}
	if !slices.Contains(Topologies, s.Redis) {
		bad("redis", "unknown Redis %q; want single, replicated or cluster", s.Redis)
	}
	if s.Name != "" {
		if msg := NameProblem(s.Name); msg != "" {
			bad("name", "%s", msg)
		}
	}
	knownBackend := s.Backend == "" || slices.Contains(Backends, s.Backend)
	if !knownBackend {
		bad("backend", "unknown backend %q; want real, virtual or process", s.Backend)
	}
	if a := s.Agent; a != nil {
		switch {
		case len(a.Command) == 0:
			bad("agent.command", "missing: the program and its arguments, e.g. command: [python3, agent.py]")
		case strings.TrimSpace(a.Command[0]) == "":
			bad("agent.command[0]", "the program is empty")
		}
		if knownBackend && s.Backend != "" && s.Backend != "process" {
			ps.badRef("agent", []string{"backend"}, "an agent runs on the process backend; this scenario names backend: %s", s.Backend)
		}
	}
	if p := raw.Params; p.SafeMargin != 0 && !p.Safe {
		bad("elector.safe_margin", "applies only with safe: true")
	}
	// Durations that read 0 as their default and take no negative (the
	// elector's own are timing.Lease's to judge).
	for _, d := range []struct {
		field string
		v     time.Duration
	}{
		{"chore_interval", s.Params.ChoreInterval}, {"client.dial_timeout", s.Params.Client.DialTimeout},
		{"workload.delay", s.Workload.Delay}, {"workload.task_duration", s.Workload.TaskDuration},
	} {
		if d.v < 0 {
			bad(d.field, "%v; must not be negative", d.v)
		}
	}
	for _, d := range []struct {
		field string
		v     time.Duration
	}{{"client.read_timeout", raw.Params.Client.ReadTimeout}, {"client.write_timeout", raw.Params.Client.WriteTimeout}} {
		// raw: a write timeout left at 0 takes the read timeout's value.
		if d.v < -1 {
			bad(d.field, "%v; want a positive timeout, or -1 for none", d.v)
		}
	}
	if c := s.Params.Client; c.MaxRetries < -1 || c.MaxRetries > MaxClientRetries {
		bad("client.max_retries", "%d; want -1 (no retries) to %d (0: the default, %d)", c.MaxRetries, MaxClientRetries, DefaultMaxRetries)
	}
	if c := s.Params.Client; c.PoolSize < 0 || c.PoolSize > MaxPoolSize {
		bad("client.pool_size", "%d; want 1 to %d (0: go-redis's default, 10 per CPU)", c.PoolSize, MaxPoolSize)
	}
	// Only the rates: WithDefaults fills the workload's delay and task
	// duration (and the chore interval) in every mode, and a scenario with
	// its defaults filled must stay valid.
	if w := s.Workload; s.Mode == ModeElector && (w.DispatchRate != 0 || w.DelayedRate != 0) {
		ps.badRef("workload", []string{"mode"}, "%s", RunnerOnly)
	}
}

// scaledProblems checks the timings and rates as they will run: scaled by
// the time scale.
func (s Scenario) scaledProblems(ps *problems) {
	scaled := ""
	if s.TimeScale != 1 {
		scaled = fmt.Sprintf(" (after time_scale %g)", s.TimeScale)
	}
	ts := []string{"time_scale"}
	e := s.Scaled()
	p := e.Params
	// The elector's own rules, on the timings it will be given: a scenario
	// that passes here cannot make it refuse its options.
	for _, pr := range (timing.Lease{TTL: p.TTL, Wait: p.Wait, JitterMS: max(p.JitterMS, 0), OpTimeout: p.OpTimeout, Safe: p.Safe, SafeMargin: p.SafeMargin}).Problems() {
		ps.badRef(electorFields[pr.Field], ts, "%s%s; %s", pr.Value, scaled, pr.Rule)
	}
	for _, r := range []struct {
		name string
		v    float64
	}{{"dispatch_rate", e.Workload.DispatchRate}, {"delayed_rate", e.Workload.DelayedRate}} {
		// The dispatcher ticks every 1/rate: keep the period within [100µs, 100s].
		if r.v != 0 && (r.v < MinRate || r.v > MaxRate) {
			ps.badRef("workload."+r.name, ts, "%v per second%s; want 0 (none) or %v to %v", r.v, scaled, MinRate, MaxRate)
		}
	}
	if w := e.Workload; e.Mode == ModeRunner && (w.DispatchRate > 0 || w.DelayedRate > 0) {
		// The workload stops at the end of the fault phase; what it
		// dispatched last must be able to finish within the recovery, or it
		// is counted lost.
		need := p.ChoreInterval + w.TaskDuration
		if w.DelayedRate > 0 {
			need += w.Delay + p.ChoreInterval
		}
		if e.Recovery < need {
			ps.badRef("recovery", []string{"time_scale", "workload", "chore_interval"}, "%v%s is too short for the workload to drain (at least %v: delay + 2 chore intervals + task duration); tasks dispatched at the end would count as lost", e.Recovery, scaled, need)
		}
	}
	for i, f := range e.Faults {
		if check := KindSpecOf(f.Kind).scaledProblems; check != nil {
			check(faultCheck{s: e, f: f, where: fmt.Sprintf("faults[%d]", i), ps: ps}, scaled)
		}
	}
}

// faultProblems checks each fault on its own (its fields, its kind's, its
// target, its times against the fault phase) and reports which had none.
func (s Scenario) faultProblems(ps *problems) (ok []bool) {
	ok = make([]bool, len(s.Faults))
	dur := []string{"duration"}
	for i, f := range s.Faults {
		before := len(ps.list)
		where := fmt.Sprintf("faults[%d]", i)
		bad := func(field, format string, a ...any) { ps.bad(where+field, format, a...) }
		known := slices.Contains(FaultKinds, f.Kind)
		if !known {
			bad(".kind", "unknown fault kind %q; want one of %s", f.Kind, kindList())
		}
		switch {
		case f.At < 0:
			bad(".at", "%v; must not be negative", f.At)
		case f.At >= s.Duration:
			ps.badRef(where+".at", dur, "%v is not before the end of the fault phase (duration %v)", f.At, s.Duration)
		}
		if f.For < 0 {
			bad(".for", "%v; must not be negative", f.For)
		}
		var refused []string
		for _, field := range f.setFields() {
			if msg := f.FieldProblem(field); msg != "" {
				bad("."+field, "%s", msg)
				refused = append(refused, field)
			}
		}
		if f.For > 0 && !slices.Contains(refused, "for") && f.At >= 0 && f.At < s.Duration && f.At+f.For > s.Duration {
			ps.badRef(where+".for", dur, "the fault would end at %v, after the fault phase (duration %v); shorten it, or remove for to last until the end", f.At+f.For, s.Duration)
		}
		if !slices.Contains(refused, "target") {
			s.targetProblems(where, f.Target, ps)
		}
		k := KindSpecOf(f.Kind)
		if ts := k.Needs.Topologies; ts != nil && slices.Contains(Topologies, s.Redis) && !slices.Contains(ts, s.Redis) {
			ps.badRef(where+".kind", []string{"redis"}, "%s", k.TopologyProblem(s.Redis))
		}
		if vs := k.ModeValues; len(vs) > 0 && !slices.Contains(vs, f.Mode) {
			bad(".mode", "unknown %s mode %q; want one of %s", f.Kind, f.Mode, strings.Join(vs, ", "))
		}
		if k.problems != nil {
			k.problems(faultCheck{s: s, f: f, where: where, ps: ps})
		}
		ok[i] = len(ps.list) == before
	}
	// The scaled check of a latency is on the fault too.
	for _, p := range ps.list {
		var i int
		if n, _ := fmt.Sscanf(p.Field, "faults[%d]", &i); n == 1 && i < len(ok) {
			ok[i] = false
		}
	}
	return ok
}

// targetProblems checks a fault's target: indexes within the fleet, each
// once, or a known role.
func (s Scenario) targetProblems(where string, t Target, ps *problems) {
	field := where + ".target"
	for k, x := range t.Indexes {
		elem := fmt.Sprintf("%s[%d]", field, k)
		switch {
		case InstancesProblem(int64(s.Instances)) != "":
			// The range is unknown; the count's own problem says why.
		case x < 0 || x >= s.Instances:
			ps.list = append(ps.list, FieldError{Field: field, Elem: elem, Refs: []string{"instances"},
				Msg: fmt.Sprintf("instance %d is out of range; this scenario has %d instances (0..%d)", x, s.Instances, s.Instances-1)})
			continue
		}
		if slices.Contains(t.Indexes[:k], x) {
			ps.list = append(ps.list, FieldError{Field: field, Elem: elem, Msg: fmt.Sprintf("instance %d is listed twice", x)})
		}
	}
	switch t.Role {
	case "", RoleLeader, RoleFollower, RoleAll, RoleRandom:
	default:
		ps.bad(field, "unknown target %q; want an instance index, a list of indexes, or one of %s", t.Role,
			strings.Join([]string{RoleLeader, RoleFollower, RoleAll, RoleRandom}, ", "))
	}
}

// conflicts reports faults on the same fixed instance that cannot both
// happen as written: a fault on an instance that a crash or stop has taken
// down, two faults of one kind at once (the second toxic would replace or
// stack on the first, and the heal of one would undo both), or two faults
// that stop its process at once (a pause and a suspend: the first heal
// would resume it under the other). Faults aimed at a
// role are resolved only at run time, so they are not checked; nor are the
// faults with problems of their own (ok false), whose times or targets are
// not what their writer meant.
func (s Scenario) conflicts(ok []bool, ps *problems) {
	end := func(f Fault) time.Duration {
		if f.For > 0 {
			return f.At + f.For
		}
		return s.Duration
	}
	// One sweep in time order, (At, position), so every fault seen before b
	// is one that comes earlier. Per instance it keeps what an earlier
	// fault can conflict through: the down-for-good faults (a crash or stop
	// without restart conflicts with everything after it; the one with the
	// smallest position is enough) and the faults still in progress (a
	// restart's downtime, a fault of the same kind). Each fault reports the
	// earlier fault with the smallest position it conflicts with, as a pair
	// loop would, in near-linear time (a pair loop took 35 s for 20,000
	// faults).
	fs := s.Faults
	order := make([]int, 0, len(fs))
	for i := range fs {
		if ok[i] && len(fs[i].Target.Indexes) > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(fs[x].At, fs[y].At) })
	isDown := func(f Fault) bool { return KindSpecOf(f.Kind).Downs }
	forGood := map[int]int{}  // instance → smallest position of a crash/stop without restart
	active := map[int][]int{} // instance → positions of faults whose end is still ahead
	for _, j := range order {
		b := fs[j]
		best := -1
		consider := func(i int) {
			if best >= 0 && i >= best {
				return
			}
			a := fs[i]
			down := isDown(a)
			if (down && !a.Restart) ||
				(down && b.At < end(a) && KindSpecOf(b.Kind).OnProcess) ||
				(holdsTogether(a, b) && !a.Instant() && !b.Instant() && b.At < end(a)) {
				best = i
			}
		}
		for _, x := range b.Target.Indexes {
			if i, ok := forGood[x]; ok {
				consider(i)
			}
			live := active[x][:0]
			for _, i := range active[x] {
				if end(fs[i]) > b.At {
					live = append(live, i)
					consider(i)
				}
			}
			active[x] = live
		}
		if best >= 0 {
			a := fs[best]
			x, _ := sharedIndex(a.Target.Indexes, b.Target.Indexes)
			where, other := fmt.Sprintf("faults[%d]", j), fmt.Sprintf("faults[%d]", best)
			refs := []string{other}
			if a.For == 0 || b.For == 0 {
				refs = append(refs, "duration")
			}
			switch {
			case isDown(a) && !a.Restart:
				ps.badRef(where, refs[:1], "instance %d is already down: %s is a %s at %v without restart, so nothing can happen to it later", x, other, a.Kind, a.At)
			case isDown(a) && b.At < end(a) && KindSpecOf(b.Kind).OnProcess:
				ps.badRef(where, refs, "instance %d is down from %v to %v: %s is a %s with restart; a %s cannot hit it then", x, a.At, end(a), other, a.Kind, b.Kind)
			case a.Kind != b.Kind:
				ps.badRef(where, refs, "overlaps %s: a %s and a %s on instance %d at once (%v to %v, and %v to %v); both stop its process, and the first heal would resume it", other, a.Kind, b.Kind, x, a.At, end(a), b.At, end(b))
			default:
				ps.badRef(where, refs, "overlaps %s: two %s faults on instance %d at once (%v to %v, and %v to %v)", other, a.Kind, x, a.At, end(a), b.At, end(b))
			}
		}
		down := isDown(b)
		for _, x := range b.Target.Indexes {
			if down && !b.Restart {
				if i, ok := forGood[x]; !ok || j < i {
					forGood[x] = j
				}
			}
			if !b.Instant() || down {
				active[x] = append(active[x], j)
			}
		}
	}
}

// holdsTogether reports whether a and b, on one instance at once, would
// act on the same thing (a toxic of the kind, the process's stop), so that
// one's heal would undo the other.
func holdsTogether(a, b Fault) bool {
	return a.Kind == b.Kind || (KindSpecOf(a.Kind).Stops && KindSpecOf(b.Kind).Stops)
}

// sharedIndex returns an index in both lists.
func sharedIndex(a, b []int) (int, bool) {
	for _, x := range a {
		if slices.Contains(b, x) {
			return x, true
		}
	}
	return 0, false
}

// notStartedProblems: a fault on an instance's process (a crash, stop,
// pause, suspend or clock fault) before that instance's start (starts)
// finds no process to act on: it is skipped, and a run whose fault is
// skipped cannot judge its bounds. A fault on its link acts on the proxy,
// which is there from the start.
func (s Scenario) notStartedProblems(ok []bool, ps *problems) {
	for j, f := range s.Faults {
		if !ok[j] || !KindSpecOf(f.Kind).OnProcess {
			continue
		}
		for _, x := range f.Target.Indexes {
			if x >= 0 && x < len(s.Starts) && f.At < s.Starts[x] {
				ps.badRef(fmt.Sprintf("faults[%d].at", j), []string{"starts"},
					"%v is before instance %d starts (%v): a %s then finds no process to act on and is skipped; move it after the start", f.At, x, s.Starts[x], f.Kind)
				break
			}
		}
	}
}

// runnerMetrics are measured only when instances are task runners; in
// elector mode they would be 0 and the expectation would pass vacuously.
var runnerMetrics = []Metric{MetricLostTasks, MetricDuplicateTasks, MetricDuplicateChores, MetricStaleChores, MetricFencedChores}

// paramRefs are the fields a duration expression reads.
var paramRefs = []string{"elector", "client", "chore_interval"}

// Problems checks one expectation: a known metric, one that mode measures
// ("" for any mode), limits of its kind (counts: whole numbers ≥ 0;
// durations: expressions that evaluate, with p, to ≥ 0; predicted only as a
// duration's max, and as stale_leadership's min; Slack only beside it), a
// min not above the max.
func (x Expectation) Problems(mode Mode, p Params) []FieldError {
	var out []FieldError
	field := "expect." + string(x.Metric)
	bad := func(f string, refs []string, format string, a ...any) {
		out = append(out, FieldError{Field: f, Refs: refs, Msg: fmt.Sprintf(format, a...)})
	}
	if _, ok := Metrics[x.Metric]; !ok {
		names := make([]string, 0, len(Metrics))
		for m := range Metrics {
			names = append(names, string(m))
		}
		slices.Sort(names)
		bad("expect", nil, "unknown metric %q; want one of %s", x.Metric, strings.Join(names, ", "))
		return out
	}
	if mode == ModeElector && slices.Contains(runnerMetrics, x.Metric) {
		bad(field, []string{"mode"}, "is measured only in mode: runner (this scenario runs bare electors)")
		return out
	}
	maxS, minS := strings.TrimSpace(x.Max), strings.TrimSpace(x.Min)
	if maxS == "" && minS == "" {
		bad(field, nil, "missing a limit: give max (e.g. max: predicted), min (e.g. min: 1) or exactly")
		return out
	}
	count := CountMetric(x.Metric)
	// limit evaluates one limit: a count, or a duration in nanoseconds.
	limit := func(v string) (int64, bool) {
		if count {
			switch n, err := strconv.ParseInt(v, 10, 64); {
			case v == Predicted:
				bad(field, nil, "%s is a count: %q applies only to duration metrics; give a whole number", x.Metric, Predicted)
			case err != nil:
				bad(field, nil, "%s is a count; want a whole number, got %q", x.Metric, v)
			case n < 0:
				bad(field, nil, "%d; a count limit cannot be negative", n)
			default:
				return n, true
			}
			return 0, false
		}
		d, err := EvalDuration(v, p)
		switch {
		case err != nil:
			bad(field, paramRefs, "%v", err)
		case d < 0:
			bad(field, paramRefs, "%q is %v with this scenario's timings; a limit cannot be negative", v, d)
		default:
			return int64(d), true
		}
		return 0, false
	}
	var hi, lo int64
	okMax, okMin := maxS != "" && maxS != Predicted, minS != ""
	if okMax || maxS == Predicted && count {
		hi, okMax = limit(maxS)
	}
	switch {
	case minS == Predicted && x.Metric == MetricStaleLeadership:
		okMin = false // the faults' own minimum (Prediction.MinStale), known once they ran
	case minS == Predicted:
		bad(field+".min", nil, "predicted is an upper bound; a minimum is a number or a duration")
		okMin = false
	case okMin && minS == maxS:
		lo = hi // exactly: checked as the max
	case okMin:
		lo, okMin = limit(minS)
	}
	if okMax && okMin && lo > hi {
		var refs []string
		if !count {
			refs = paramRefs
		}
		bad(field+".min", refs, "min %s is above max %s: no value could pass", minS, maxS)
	}
	switch {
	case x.Slack != 0 && ((maxS != Predicted && minS != Predicted) || count):
		bad(field+".slack", nil, "applies only to max: %s (other limits are exact)", Predicted)
	case x.Slack < 0:
		bad(field+".slack", nil, "%v; must not be negative", x.Slack)
	}
	return out
}

// Predicted is the limit that asks for the bound calculator's prediction.
const Predicted = "predicted"

// lengthProblems reports (through ps) a run whose scaled length, or a
// fault whose scaled time, exceeds MaxRunLength, computed without overflow
// (Scaled saturates), and says whether it found one.
func (s Scenario) lengthProblems(ps *problems) bool {
	k := s.TimeScale
	over := func(v float64) bool { return math.IsNaN(v) || v > float64(MaxRunLength) }
	found := false
	if l := (float64(s.Duration) + float64(s.Recovery)) * k; over(l) {
		ps.badRef("duration", []string{"time_scale", "recovery"}, "duration + recovery × time scale %g is %.3g h; a run may last at most %v", k, l/float64(time.Hour), MaxRunLength)
		found = true
	}
	for i, f := range s.Faults {
		if over((float64(f.At)+float64(f.For))*k) || over(float64(f.Jitter)*k) || over(float64(f.Latency)*k) ||
			over(float64(f.Lag)*k) || over(math.Abs(float64(f.Jump))*k) {
			ps.badRef(fmt.Sprintf("faults[%d]", i), []string{"time_scale"}, "lasts beyond %v once scaled by %g", MaxRunLength, k)
			found = true
		}
	}
	return found
}
