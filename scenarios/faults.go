package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/leaselab/leaselab/model"
)

// paramKeys are the per-kind parameters of a fault.
var paramKeys = []string{"mode", "latency", "jitter", "direction", "rate", "jump", "restart", "lag"}

var faultKeys = append([]string{"at", "for", "kind", "target", "allow_skipped"}, paramKeys...)

// kindKeys are the parameters each kind takes beyond at, for, kind and
// target. A parameter given to a kind that does not take it is refused: the
// simulator would ignore it, and the writer meant something by it.
var kindKeys = map[model.FaultKind][]string{
	model.FaultCrash:         {"restart"},
	model.FaultStop:          {"restart"},
	model.FaultPartition:     {"mode"},
	model.FaultLatency:       {"latency", "jitter", "direction"},
	model.FaultClock:         {"rate", "jump"},
	model.FaultRedisFailover: {"lag"},
}

var roles = []string{model.RoleLeader, model.RoleFollower, model.RoleAll, model.RoleRandom}

var directions = []string{model.DirectionBoth, model.DirectionRequests, model.DirectionReplies}

func kindList() string {
	s := make([]string, len(model.FaultKinds))
	for i, k := range model.FaultKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// processKind reports whether the fault acts on the instance's process (so
// it cannot hit an instance that is down), not on its proxy.
func processKind(k model.FaultKind) bool {
	return k == model.FaultCrash || k == model.FaultStop || k == model.FaultPause || k == model.FaultSuspend || k == model.FaultClock
}

// placed is a decoded fault and where it was written.
type placed struct {
	f    model.Fault
	line int
	// ok is true when the fault decoded without a problem; conflicts are
	// only looked for between such faults, so one typo is not reported
	// again as a conflict.
	ok bool
}

// faults decodes the fault schedule and checks it for conflicts.
func (d *decoder) faults(n *yaml.Node, sc model.Scenario) []model.Fault {
	if !d.present(n, "faults") {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.bad(n, "faults", "want a list of faults; got %s", describe(n))
		return nil
	}
	duration, instances, _ := effective(sc)
	ps := make([]placed, 0, len(n.Content))
	for i, item := range n.Content {
		ps = append(ps, d.fault(item, faultWhere(i), duration, instances))
	}
	d.conflicts(ps, duration)
	out := make([]model.Fault, len(ps))
	for i, p := range ps {
		out[i] = p.f
	}
	return out
}

// fault decodes one entry of the schedule.
func (d *decoder) fault(n *yaml.Node, where string, duration time.Duration, instances int) placed {
	before := len(d.probs)
	p := placed{line: max(n.Line, 1)}
	f, ok := d.mapping(n, where, faultKeys)
	if !ok {
		return p
	}
	fl := &p.f

	known := false
	if e, ok := f.get("kind"); !ok {
		if !f.typos["kind"] {
			d.bad(n, where, "missing kind; want one of %s", kindList())
		}
	} else if v, ok := d.str(e.val, where+".kind"); ok {
		if known = slices.Contains(model.FaultKinds, model.FaultKind(v)); known {
			fl.Kind = model.FaultKind(v)
		} else {
			d.bad(e.val, where+".kind", "unknown fault kind %q; want one of %s", v, kindList())
		}
	}

	if e, ok := f.get("at"); !ok {
		if !f.typos["at"] {
			d.bad(n, where, "missing at (when the fault is injected, from the start of the run, e.g. at: 10s)")
		}
	} else if v, ok := d.nonNegative(e.val, where+".at"); ok {
		fl.At = v
		if v >= duration {
			d.bad(e.val, where+".at", "%v is not before the end of the fault phase (duration %v)", v, duration)
		}
	}

	if known {
		d.kindParams(n, f, fl, where)
	}

	if e, ok := f.get("for"); ok {
		if v, ok := d.positive(e.val, where+".for", "until the end of the fault phase"); ok {
			fl.For = v
			_, drift := f.get("rate") // a bad rate is reported once, as itself
			switch {
			case !known:
			case fl.Kind == model.FaultClock && !drift:
				d.bad(e.key, where+".for", "a clock jump is instant; for applies only with rate (a drift)")
			case fl.Kind.OnRedis():
				d.bad(e.key, where+".for", "%s is instant; it takes no for", fl.Kind)
			case fl.At < duration && fl.At+v > duration:
				d.bad(e.val, where+".for", "the fault would end at %v, after the fault phase (duration %v); shorten it, or remove for to last until the end", fl.At+v, duration)
			}
		}
	}

	if e, ok := f.get("target"); ok {
		if known && fl.Kind.OnRedis() {
			d.bad(e.key, where+".target", "%s acts on Redis itself; it takes no target", fl.Kind)
		} else if t, ok := d.target(e.val, where+".target", instances); ok {
			fl.Target = t
		}
	}

	if e, ok := f.get("allow_skipped"); ok {
		if known && fl.Kind.OnRedis() {
			d.bad(e.key, where+".allow_skipped", "%s acts on Redis itself and is never skipped", fl.Kind)
		} else {
			fl.AllowSkipped, _ = d.boolean(e.val, where+".allow_skipped")
		}
	}

	p.ok = len(d.probs) == before
	return p
}

// kindParams decodes the parameters of the fault's kind and refuses those of
// other kinds.
func (d *decoder) kindParams(n *yaml.Node, f fields, fl *model.Fault, where string) {
	allowed := kindKeys[fl.Kind]
	for _, e := range f.list {
		k := e.key.Value
		if !slices.Contains(paramKeys, k) || slices.Contains(allowed, k) {
			continue
		}
		var owners []string
		for _, kind := range model.FaultKinds {
			if slices.Contains(kindKeys[kind], k) {
				owners = append(owners, string(kind))
			}
		}
		msg := fmt.Sprintf("applies only to %s faults, not %s", strings.Join(owners, " and "), fl.Kind)
		if k == "jitter" {
			msg += " (the elector's renewal jitter is elector.jitter)"
		}
		d.bad(e.key, where+"."+k, "%s", msg)
	}
	get := func(k string) (entry, bool) {
		if !slices.Contains(allowed, k) {
			return entry{}, false
		}
		return f.get(k)
	}

	switch fl.Kind {
	case model.FaultPartition:
		if e, ok := get("mode"); ok {
			if v, ok := d.str(e.val, where+".mode"); ok {
				if slices.Contains(model.PartitionModes, v) {
					fl.Mode = v
				} else {
					d.bad(e.val, where+".mode", "unknown partition mode %q; want one of %s", v, strings.Join(model.PartitionModes, ", "))
				}
			}
		}
	case model.FaultLatency:
		if e, ok := get("latency"); !ok {
			if !f.typos["latency"] {
				d.bad(n, where, "a latency fault needs latency (the one-way delay added, e.g. latency: 200ms)")
			}
		} else if v, ok := d.duration(e.val, where+".latency"); ok {
			fl.Latency = v // its lower bound (scaled) is model.Scenario.Validate's
		}
		if e, ok := get("jitter"); ok {
			if v, ok := d.nonNegative(e.val, where+".jitter"); ok {
				if fl.Latency > 0 && v > fl.Latency {
					d.bad(e.val, where+".jitter", "%v is more than the latency %v (the delay would go negative)", v, fl.Latency)
				}
				fl.Jitter = v
			}
		}
		if e, ok := get("direction"); ok {
			if v, ok := d.str(e.val, where+".direction"); ok {
				if slices.Contains(directions, v) {
					fl.Direction = v
				} else {
					d.bad(e.val, where+".direction", "unknown direction %q; want one of %s", v, strings.Join(directions, ", "))
				}
			}
		}
	case model.FaultClock:
		e, hasRate := get("rate")
		if hasRate {
			if v, ok := d.number(e.val, where+".rate"); ok {
				if v == 0 {
					// 0 would read as "no drift" to the simulator.
					d.bad(e.val, where+".rate", "0; a clock speed must be positive (1 = true time, 0.5 = half speed)")
				}
				fl.Rate = v // its range is model.Scenario.Validate's
			}
		}
		j, hasJump := get("jump")
		if hasJump {
			if v, ok := d.duration(j.val, where+".jump"); ok {
				if v == 0 {
					d.bad(j.val, where+".jump", "0s; a jump must move the clock (negative steps back)")
				}
				fl.Jump = v
			}
		}
		if !hasRate && !hasJump {
			d.bad(n, where, "a clock fault needs rate (a drift, e.g. rate: 0.5) or jump (a step, e.g. jump: -2s)")
		}
	case model.FaultCrash, model.FaultStop:
		if e, ok := get("restart"); ok {
			fl.Restart, _ = d.boolean(e.val, where+".restart")
		}
	case model.FaultRedisFailover:
		if e, ok := get("lag"); ok {
			fl.Lag, _ = d.nonNegative(e.val, where+".lag")
		}
	}
}

// target decodes an instance index, a list of them, or a role.
func (d *decoder) target(n *yaml.Node, field string, instances int) (model.Target, bool) {
	if !d.present(n, field) {
		return model.Target{}, false
	}
	index := func(n *yaml.Node) (int, bool) {
		v, ok := d.integer(n, field)
		if !ok {
			return 0, false
		}
		if v < 0 || v >= int64(instances) {
			d.bad(n, field, "instance %d is out of range; this scenario has %d instances (0..%d)", v, instances, instances-1)
			return 0, false
		}
		return int(v), true
	}
	want := "want an instance index, a list of indexes, or one of " + strings.Join(roles, ", ")
	switch {
	case isScalar(n, "!!int"):
		x, ok := index(n)
		return model.Target{Indexes: []int{x}}, ok
	case isScalar(n, "!!str"):
		if slices.Contains(roles, n.Value) {
			return model.Target{Role: n.Value}, true
		}
		d.bad(n, field, "unknown target %q; %s", n.Value, want)
		return model.Target{}, false
	case n.Kind == yaml.SequenceNode:
		if len(n.Content) == 0 {
			d.bad(n, field, "an empty list hits nobody; give at least one instance index")
			return model.Target{}, false
		}
		var t model.Target
		ok := true
		for _, item := range n.Content {
			x, good := index(item)
			switch {
			case !good:
				ok = false
			case slices.Contains(t.Indexes, x):
				d.bad(item, field, "instance %d is listed twice", x)
				ok = false
			default:
				t.Indexes = append(t.Indexes, x)
			}
		}
		return t, ok
	}
	d.bad(n, field, "%s; got %s", want, describe(n))
	return model.Target{}, false
}

// conflicts reports faults on the same fixed instance that cannot both
// happen as written: a fault on an instance that a crash or stop has taken
// down, or two faults of one kind at once (the second toxic would replace or
// stack on the first, and the heal of one would undo both). Faults aimed at a
// role are resolved only at run time, so they are not checked.
func (d *decoder) conflicts(ps []placed, duration time.Duration) {
	end := func(f model.Fault) time.Duration {
		if f.For > 0 {
			return f.At + f.For
		}
		return duration
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
	order := make([]int, 0, len(ps))
	for i := range ps {
		if ps[i].ok && len(ps[i].f.Target.Indexes) > 0 {
			order = append(order, i)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(ps[x].f.At, ps[y].f.At) })
	forGood := map[int]int{}  // instance → smallest position of a crash/stop without restart
	active := map[int][]int{} // instance → positions of faults whose end is still ahead
	for _, j := range order {
		b := ps[j].f
		best := -1
		consider := func(i int) {
			if best >= 0 && i >= best {
				return
			}
			a := ps[i].f
			down := a.Kind == model.FaultCrash || a.Kind == model.FaultStop
			if (down && !a.Restart) ||
				(down && b.At < end(a) && processKind(b.Kind)) ||
				(a.Kind == b.Kind && !a.Instant() && !b.Instant() && b.At < end(a)) {
				best = i
			}
		}
		for _, x := range b.Target.Indexes {
			if i, ok := forGood[x]; ok {
				consider(i)
			}
			live := active[x][:0]
			for _, i := range active[x] {
				if end(ps[i].f) > b.At {
					live = append(live, i)
					consider(i)
				}
			}
			active[x] = live
		}
		if best >= 0 {
			a := ps[best].f
			x, _ := sharedIndex(a.Target.Indexes, b.Target.Indexes)
			where := faultWhere(j)
			down := a.Kind == model.FaultCrash || a.Kind == model.FaultStop
			switch {
			case down && !a.Restart:
				d.badLine(ps[j].line, where, "instance %d is already down: faults[%d] (line %d) is a %s at %v without restart, so nothing can happen to it later", x, best, ps[best].line, a.Kind, a.At)
			case down && b.At < end(a) && processKind(b.Kind):
				d.badLine(ps[j].line, where, "instance %d is down from %v to %v (faults[%d], line %d: %s with restart); a %s cannot hit it then", x, a.At, end(a), best, ps[best].line, a.Kind, b.Kind)
			default:
				d.badLine(ps[j].line, where, "overlaps faults[%d] (line %d): two %s faults on instance %d at once (%v to %v, and %v to %v)", best, ps[best].line, a.Kind, x, a.At, end(a), b.At, end(b))
			}
		}
		down := b.Kind == model.FaultCrash || b.Kind == model.FaultStop
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

// sharedIndex returns an index in both lists.
func sharedIndex(a, b []int) (int, bool) {
	for _, x := range a {
		if slices.Contains(b, x) {
			return x, true
		}
	}
	return 0, false
}

// badLine records a problem at a line.
func (d *decoder) badLine(line int, field, format string, a ...any) {
	d.probs = append(d.probs, Problem{Line: max(line, 1), Field: field, Msg: fmt.Sprintf(format, a...)})
}
