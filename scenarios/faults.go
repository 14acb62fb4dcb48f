package scenarios

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/leaselab/leaselab/model"
)

// paramKeys are the per-kind parameters of a fault; which kind takes which
// is model.Fault.FieldProblem's rule.
var paramKeys = []string{"mode", "latency", "jitter", "direction", "rate", "jump", "restart", "lag"}

var faultKeys = append([]string{"at", "for", "kind", "target", "allow_skipped"}, paramKeys...)

var roles = []string{model.RoleLeader, model.RoleFollower, model.RoleAll, model.RoleRandom}

func kindList() string {
	s := make([]string, len(model.FaultKinds))
	for i, k := range model.FaultKinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// faults decodes the fault schedule. What a fault's values may be, and which
// faults conflict, is model.Scenario.Validate's to say.
func (d *decoder) faults(n *yaml.Node) []model.Fault {
	if !d.present(n, "faults") {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.bad(n, "faults", "want a list of faults; got %s", describe(n))
		return nil
	}
	out := make([]model.Fault, len(n.Content))
	for i, item := range n.Content {
		d.fault(item, faultWhere(i), &out[i])
	}
	return out
}

// fault decodes one entry of the schedule into fl.
func (d *decoder) fault(n *yaml.Node, where string, fl *model.Fault) {
	f, ok := d.mapping(n, where, faultKeys)
	if !ok {
		return
	}
	if e, ok := f.get("kind"); !ok {
		if !f.typos["kind"] {
			d.bad(n, where, "missing kind; want one of %s", kindList())
		}
	} else if v, ok := d.str(e.val, where+".kind"); ok {
		fl.Kind = model.FaultKind(v) // the kinds are model.Scenario.Validate's
	}

	if e, ok := f.get("at"); !ok {
		if !f.typos["at"] {
			d.bad(n, where, "missing at (when the fault is injected, from the start of the run, e.g. at: 10s)")
		}
	} else if v, ok := d.nonNegative(e.val, where+".at"); ok {
		fl.At = v
	}

	d.kindParams(n, f, fl, where)

	if e, ok := f.get("for"); ok {
		fl.For, _ = d.positive(e.val, where+".for", "until the end of the fault phase")
	}
	if e, ok := f.get("target"); ok {
		fl.Target, _ = d.target(e.val, where+".target")
	}
	if e, ok := f.get("allow_skipped"); ok {
		// Refused on the key: allow_skipped: false says something too.
		if msg := fl.FieldProblem("allow_skipped"); msg != "" {
			d.bad(e.key, where+".allow_skipped", "%s", msg)
		} else {
			fl.AllowSkipped, _ = d.boolean(e.val, where+".allow_skipped")
		}
	}
}

// kindParams decodes the parameters of the fault's kind and refuses those of
// other kinds. A parameter is refused on its key, whatever its value (a
// zero one, restart: false, the model could not see), by the model's rule.
func (d *decoder) kindParams(n *yaml.Node, f fields, fl *model.Fault, where string) {
	refused := map[string]bool{}
	for _, e := range f.list {
		k := e.key.Value
		if !slices.Contains(paramKeys, k) {
			continue
		}
		if msg := fl.FieldProblem(k); msg != "" {
			d.bad(e.key, where+"."+k, "%s", msg)
			refused[k] = true
		}
	}
	get := func(k string) (entry, bool) {
		if refused[k] {
			return entry{}, false
		}
		return f.get(k)
	}

	if e, ok := get("mode"); ok {
		fl.Mode, _ = d.str(e.val, where+".mode")
	}
	if e, ok := get("latency"); ok {
		fl.Latency, _ = d.duration(e.val, where+".latency")
	} else if k, _ := model.SpecOf(fl.Kind); slices.Contains(k.Params, "latency") && !f.typos["latency"] {
		d.bad(n, where, "a latency fault needs latency (the one-way delay added, e.g. latency: 200ms)")
	}
	if e, ok := get("jitter"); ok {
		fl.Jitter, _ = d.nonNegative(e.val, where+".jitter")
	}
	if e, ok := get("direction"); ok {
		fl.Direction, _ = d.str(e.val, where+".direction")
	}
	if e, ok := get("rate"); ok {
		if v, ok := d.number(e.val, where+".rate"); ok {
			if v == 0 {
				// 0 would read as "no drift" to the model.
				d.bad(e.val, where+".rate", "0; a clock speed must be positive (1 = true time, 0.5 = half speed)")
			}
			fl.Rate = v
		}
	}
	if e, ok := get("jump"); ok {
		if v, ok := d.duration(e.val, where+".jump"); ok {
			if v == 0 {
				// 0 would read as "no jump" to the model.
				d.bad(e.val, where+".jump", "0s; a jump must move the clock (negative steps back)")
			}
			fl.Jump = v
		}
	}
	if e, ok := get("restart"); ok {
		fl.Restart, _ = d.boolean(e.val, where+".restart")
	}
	if e, ok := get("lag"); ok {
		fl.Lag, _ = d.nonNegative(e.val, where+".lag")
	}
}

// target decodes an instance index, a list of them, or a role. Which
// indexes and roles exist is model.Scenario.Validate's to say.
func (d *decoder) target(n *yaml.Node, field string) (model.Target, bool) {
	if !d.present(n, field) {
		return model.Target{}, false
	}
	want := "want an instance index, a list of indexes, or one of " + strings.Join(roles, ", ")
	index := func(n *yaml.Node) (int, bool) {
		v, ok := d.integer(n, field)
		if ok && v != int64(int(v)) {
			d.bad(n, field, "instance %d is out of range", v)
			return 0, false
		}
		return int(v), ok
	}
	switch {
	case isScalar(n, "!!int"):
		x, ok := index(n)
		return model.Target{Indexes: []int{x}}, ok
	case isScalar(n, "!!str") && n.Value != "": // "" would be the model's default role
		return model.Target{Role: n.Value}, true
	case n.Kind == yaml.SequenceNode:
		if len(n.Content) == 0 {
			// To the model, no indexes is the default role, leader.
			d.bad(n, field, "an empty list hits nobody; give at least one instance index")
			return model.Target{}, false
		}
		var t model.Target
		ok := true
		for _, item := range n.Content {
			x, good := index(item)
			ok = ok && good
			t.Indexes = append(t.Indexes, x)
		}
		return t, ok
	}
	d.bad(n, field, "%s; got %s", want, describe(n))
	return model.Target{}, false
}
