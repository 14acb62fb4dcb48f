package sweep

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/leaselab/leaselab/internal/userfile"
	"github.com/leaselab/leaselab/scenarios"
)

var (
	sweepKeys  = []string{"name", "scenario", "seeds", "first_seed", "limits", "axes"}
	limitKeys  = []string{"max_gap", "max_overlap", "max_stale", "max_duplicate_chores"}
	rangeKeys  = []string{"from", "to", "steps", "step"}
	maxCells   = 100000
	maxRunsAll = 10000000
)

// Load reads a sweep file (see ParseGrid): a regular file of at most
// scenarios.MaxFileSize, as a scenario file.
func Load(path string) (Grid, error) {
	data, err := userfile.Read(path, scenarios.MaxFileSize, "a sweep file")
	if err != nil {
		return Grid{}, err
	}
	return ParseGrid(path, data)
}

// ParseGrid reads a sweep file: a YAML document whose top-level key is
// `sweep:`:
//
//	sweep:
//	  name: blackhole-timeouts        # default: the scenario's name
//	  scenario: partition-blackhole   # a built-in name, or a scenario file (relative to this one)
//	  seeds: 100                      # per cell, default 20
//	  first_seed: 1                   # seeds first_seed .. first_seed+seeds-1
//	  limits:                         # the safe region (worst run of a cell)
//	    max_gap: 12s                  # default none
//	    max_overlap: 0s               # default 0s; "none" for no limit
//	    max_stale: none               # default none
//	    max_duplicate_chores: 1       # runner mode; default none
//	  axes:                           # in order; the last varies fastest
//	    ttl: [2s, 5s, 10s]            # a list of values
//	    read_timeout: {from: 100ms, to: 1s, steps: 10}   # or a linear range (steps values, or every step)
//	    max_retries: [0, 1, 3]
//	    safe: [false, true]
//
// name is the file name used in messages. Every problem is reported, each
// at its line, in a *scenarios.Error (the scenario files' own error type).
func ParseGrid(name string, data []byte) (Grid, error) {
	p := &parser{file: name}
	g := p.parse(data)
	if len(p.probs) > 0 {
		slices.SortStableFunc(p.probs, func(a, b scenarios.Problem) int { return a.Line - b.Line })
		return Grid{}, &scenarios.Error{File: name, Problems: p.probs}
	}
	return g, nil
}

type parser struct {
	file  string
	probs []scenarios.Problem
}

func (p *parser) bad(n *yaml.Node, field, format string, a ...any) {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	p.probs = append(p.probs, scenarios.Problem{Line: line, Field: field, Msg: fmt.Sprintf(format, a...)})
}

type kv struct{ k, v *yaml.Node }

// mapping reads a mapping with known keys (each once), in file order.
func (p *parser) mapping(n *yaml.Node, field string, known []string) []kv {
	if n.Kind == yaml.AliasNode {
		p.bad(n, field, "aliases are not supported; write the value out")
		return nil
	}
	if n.Kind != yaml.MappingNode {
		p.bad(n, field, "want a mapping; got %s", describe(n))
		return nil
	}
	var out []kv
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.bad(k, field, "a key must be a plain word")
			continue
		}
		if l, dup := seen[k.Value]; dup {
			p.bad(k, join(field, k.Value), "given twice (first on line %d)", l)
			continue
		}
		seen[k.Value] = k.Line
		if known != nil && !slices.Contains(known, k.Value) {
			p.bad(k, field, "unknown key %q; want one of %s", k.Value, strings.Join(known, ", "))
			continue
		}
		if v.Kind == yaml.AliasNode {
			p.bad(v, join(field, k.Value), "aliases are not supported; write the value out")
			continue
		}
		if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
			p.bad(v, join(field, k.Value), "no value; give one or remove the key")
			continue
		}
		out = append(out, kv{k, v})
	}
	return out
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "an unsupported YAML node"
}

func (p *parser) scalar(n *yaml.Node, field string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		p.bad(n, field, "want a single value; got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) integer(n *yaml.Node, field string, lo, hi int64) (int64, bool) {
	s, ok := p.scalar(n, field)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < lo || v > hi {
		p.bad(n, field, "%s; want a whole number from %d to %d", describe(n), lo, hi)
		return 0, false
	}
	return v, true
}

func (p *parser) limit(n *yaml.Node, field string) (time.Duration, bool) {
	s, ok := p.scalar(n, field)
	if !ok {
		return 0, false
	}
	if s == "none" {
		return NoLimit, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		p.bad(n, field, "%s; want a duration (0s allowed) or none", describe(n))
		return 0, false
	}
	return d, true
}

func (p *parser) parse(data []byte) Grid {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line := 1
		var te *yaml.TypeError
		if _, e := fmt.Sscanf(err.Error(), "yaml: line %d:", &line); e != nil || te != nil {
			line = 1
		}
		p.bad(&yaml.Node{Line: line}, "", "not valid YAML: %v", err)
		return Grid{}
	}
	if len(doc.Content) == 0 {
		p.bad(nil, "", "empty file; want a sweep: block")
		return Grid{}
	}
	var root *yaml.Node
	for _, e := range p.mapping(doc.Content[0], "", []string{"sweep"}) {
		root = e.v
	}
	if root == nil {
		if len(p.probs) == 0 {
			p.bad(doc.Content[0], "", "no sweep: block")
		}
		return Grid{}
	}
	g := Grid{Limits: DefaultLimits()}
	var scenNode, axesNode *yaml.Node
	for _, e := range p.mapping(root, "sweep", sweepKeys) {
		f := "sweep." + e.k.Value
		switch e.k.Value {
		case "name":
			g.Name, _ = p.scalar(e.v, f)
		case "scenario":
			scenNode = e.v
		case "seeds":
			v, _ := p.integer(e.v, f, 1, 1000000)
			g.Seeds = int(v)
		case "first_seed":
			g.FirstSeed, _ = p.integer(e.v, f, 1, math.MaxInt64/2)
		case "limits":
			for _, l := range p.mapping(e.v, f, limitKeys) {
				if l.k.Value == "max_duplicate_chores" {
					if v, ok := p.integer(l.v, join(f, l.k.Value), 0, 1000000); ok {
						n := int(v)
						g.Limits.MaxDuplicateChores = &n
					}
					continue
				}
				d, ok := p.limit(l.v, join(f, l.k.Value))
				if !ok {
					continue
				}
				switch l.k.Value {
				case "max_gap":
					g.Limits.MaxGap = d
				case "max_overlap":
					g.Limits.MaxOverlap = d
				case "max_stale":
					g.Limits.MaxStale = d
				}
			}
		case "axes":
			axesNode = e.v
		}
	}
	if scenNode == nil {
		p.bad(root, "sweep", "no scenario: name a built-in scenario or a scenario file")
	} else if s, ok := p.scalar(scenNode, "sweep.scenario"); ok {
		arg := s
		if !filepath.IsAbs(s) && (strings.ContainsRune(s, '/') || strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml")) {
			arg = filepath.Join(filepath.Dir(p.file), s)
		}
		sc, err := scenarios.Open(arg)
		if err != nil {
			p.bad(scenNode, "sweep.scenario", "%s", strings.ReplaceAll(err.Error(), "\n", "; "))
		} else {
			g.Base = sc
		}
	}
	if axesNode == nil {
		p.bad(root, "sweep", "no axes: give at least one parameter to vary (%s)", strings.Join(Params, ", "))
		return g
	}
	for _, e := range p.mapping(axesNode, "sweep.axes", Params) {
		f := "sweep.axes." + e.k.Value
		a := Axis{Param: e.k.Value}
		switch e.v.Kind {
		case yaml.SequenceNode:
			if len(e.v.Content) == 0 {
				p.bad(e.v, f, "no values")
			}
			seen := map[string]int{}
			for _, vn := range e.v.Content {
				s, ok := p.scalar(vn, f)
				if !ok {
					continue
				}
				v, ok := p.value(vn, f, a.Param, s)
				if !ok {
					continue
				}
				if l, dup := seen[v]; dup {
					p.bad(vn, f, "%s is given twice (first on line %d)", v, l)
					continue
				}
				seen[v] = vn.Line
				a.Values = append(a.Values, v)
			}
		case yaml.MappingNode:
			a.Values = p.rangeValues(e.v, f, a.Param)
		default:
			if s, ok := p.scalar(e.v, f); ok {
				if v, ok := p.value(e.v, f, a.Param, s); ok {
					a.Values = []string{v}
				}
			}
		}
		if g.Base.Name != "" {
			if msg := needsFault(g.Base, a.Param); msg != "" {
				p.bad(e.k, f, "%s", strings.TrimPrefix(msg, a.Param+": "))
			}
		}
		g.Axes = append(g.Axes, a)
	}
	if len(g.Axes) == 0 && len(p.probs) == 0 {
		p.bad(axesNode, "sweep.axes", "no axes: give at least one parameter to vary")
	}
	if n := g.Cells(); n > maxCells {
		p.bad(axesNode, "sweep.axes", "%d cells; at most %d", n, maxCells)
	} else if s := max(g.Seeds, DefaultSeeds*boolInt(g.Seeds == 0)); n*s > maxRunsAll {
		p.bad(axesNode, "sweep.axes", "%d cells × %d seeds = %d runs; at most %d", n, s, n*s, maxRunsAll)
	}
	return g
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// value checks one value and returns its canonical text.
func (p *parser) value(n *yaml.Node, field, param, s string) (string, bool) {
	v, err := parseValue(param, s)
	if err != nil {
		p.bad(n, field, "%v", err)
		return "", false
	}
	return canonical(param, v), true
}

func canonical(param string, v value) string {
	switch param {
	case ParamMaxRetries:
		return strconv.Itoa(v.i)
	case ParamSafe:
		return strconv.FormatBool(v.b)
	case ParamClockRate:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	}
	return v.d.String()
}

// rangeValues reads {from, to, steps} or {from, to, step}: a linear range
// with both ends, durations rounded to the millisecond, rates to 1e-6.
func (p *parser) rangeValues(n *yaml.Node, field, param string) []string {
	if param == ParamSafe {
		p.bad(n, field, "safe takes a list: [false, true]")
		return nil
	}
	got := map[string]*yaml.Node{}
	for _, e := range p.mapping(n, field, rangeKeys) {
		got[e.k.Value] = e.v
	}
	num := func(key string) (float64, bool) {
		vn, ok := got[key]
		if !ok {
			return 0, false
		}
		s, ok := p.scalar(vn, join(field, key))
		if !ok {
			return 0, false
		}
		v, err := parseValue(param, s)
		if err != nil {
			p.bad(vn, join(field, key), "%v", err)
			return 0, false
		}
		return number(param, v), true
	}
	from, ok1 := num("from")
	to, ok2 := num("to")
	if _, ok := got["from"]; !ok {
		p.bad(n, field, "a range needs from, to and steps (or step)")
		return nil
	}
	if _, ok := got["to"]; !ok {
		p.bad(n, field, "a range needs from, to and steps (or step)")
		return nil
	}
	if !ok1 || !ok2 {
		return nil
	}
	if to < from {
		p.bad(got["to"], join(field, "to"), "is below from")
		return nil
	}
	var steps int
	switch sn, st := got["steps"], got["step"]; {
	case sn != nil && st != nil:
		p.bad(st, join(field, "step"), "give steps or step, not both")
		return nil
	case sn != nil:
		v, ok := p.integer(sn, join(field, "steps"), 1, 10000)
		if !ok {
			return nil
		}
		steps = int(v)
	case st != nil:
		d, ok := num("step")
		if !ok {
			return nil
		}
		if d <= 0 {
			p.bad(st, join(field, "step"), "must be positive")
			return nil
		}
		steps = int(math.Floor((to-from)/d+1e-9)) + 1
		if steps > 10000 {
			p.bad(st, join(field, "step"), "makes %d values; at most 10000", steps)
			return nil
		}
		if steps > 1 {
			to = from + float64(steps-1)*d
		}
	default:
		p.bad(n, field, "a range needs steps (how many values) or step (the spacing)")
		return nil
	}
	return linear(param, from, to, steps)
}
