package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decoder walks a scenario's YAML node tree and collects every problem it
// finds, so a file with five mistakes is fixed in one round, not five.
type decoder struct {
	file  string
	probs []Problem
	// taints are the fields the reading found a problem in: their values
	// are the model's defaults, not the file's, so the model's judgement
	// of them is left out (modelProblems). "" is the whole file.
	taints []string
}

// bad records a problem at n's line (line 1 when n is nil or unplaced), in
// field.
func (d *decoder) bad(n *yaml.Node, field, format string, a ...any) {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	d.probs = append(d.probs, Problem{Line: line, Field: field, Msg: fmt.Sprintf(format, a...)})
	d.taints = append(d.taints, field)
}

// entry is one "key: value" of a mapping.
type entry struct{ key, val *yaml.Node }

// fields are the entries of a mapping, in file order and by key.
type fields struct {
	list  []entry
	byKey map[string]entry
	// typos are the known keys suggested for unknown ones: a required key
	// that was misspelt is reported once, as the typo, not again as missing.
	typos map[string]bool
}

func (f fields) get(k string) (entry, bool) {
	e, ok := f.byKey[k]
	return e, ok
}

// join builds a field path: "" + "ttl" = "ttl", "elector" + "ttl" =
// "elector.ttl".
func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// mapping reads n as a mapping whose keys must be in known (nil: any key),
// each given once. Entries with bad keys are reported and left out, so the
// caller decodes only what it knows.
func (d *decoder) mapping(n *yaml.Node, field string, known []string) (fields, bool) {
	f := fields{byKey: map[string]entry{}, typos: map[string]bool{}}
	if !d.present(n, field) {
		return f, false
	}
	if n.Kind != yaml.MappingNode {
		d.bad(n, field, "want a mapping of keys to values; got %s", describe(n))
		return f, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.AliasNode {
			continue // reported by noAliases
		}
		if k.Kind != yaml.ScalarNode {
			d.bad(k, field, "a key must be a plain word; got %s", describe(k))
			continue
		}
		if prev, dup := f.byKey[k.Value]; dup {
			// The first is read; the model may judge it.
			d.badLine(k.Line, join(field, k.Value), "given twice (first on line %d)", prev.key.Line)
			continue
		}
		if known != nil && !slices.Contains(known, k.Value) {
			// Reported on the mapping, but what it spoils is the key it
			// was probably meant to be (if any), left at its default.
			d.badLine(k.Line, field, "%s", unknownWord("key", k.Value, known))
			if s := Suggest(k.Value, known); s != "" {
				f.typos[s] = true
				d.taints = append(d.taints, join(field, s))
			}
			continue
		}
		e := entry{k, v}
		f.byKey[k.Value] = e
		f.list = append(f.list, e)
	}
	return f, true
}

// noAliases reports every alias: the walker does not follow them (an alias
// can point at its own ancestor, and a value reached twice would be reported
// twice), and a scenario is short enough to write out.
func (d *decoder) noAliases(n *yaml.Node) {
	if n.Kind == yaml.AliasNode {
		d.bad(n, "", "aliases (*%s) are not supported; write the value out", n.Value)
		return
	}
	for _, c := range n.Content {
		d.noAliases(c)
	}
}

// present reports whether n has a value, and reports a problem if not: an
// empty value ("ttl:") is far more often a slip than a wish for the default.
func (d *decoder) present(n *yaml.Node, field string) bool {
	if n == nil || n.Kind == yaml.AliasNode {
		return false
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		d.bad(n, field, "no value; give one or remove the key for the default")
		return false
	}
	return true
}

// describe names what a node is, for "want X; got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		// A message is one line: long values are cut, odd ones quoted.
		v := n.Value
		if r := []rune(v); len(r) > 40 {
			v = string(r[:40]) + "..."
		}
		if n.Tag == "!!str" || strconv.Quote(v) != `"`+v+`"` {
			return strconv.Quote(v)
		}
		return v
	}
	return "an unsupported YAML node"
}

func isScalar(n *yaml.Node, tags ...string) bool {
	return n.Kind == yaml.ScalarNode && slices.Contains(tags, n.Tag)
}

// str reads a string.
func (d *decoder) str(n *yaml.Node, field string) (string, bool) {
	if !d.present(n, field) {
		return "", false
	}
	if !isScalar(n, "!!str") {
		d.bad(n, field, "want a string; got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// text reads free text (a name, a description), where an unquoted number
// is as good as a string.
func (d *decoder) text(n *yaml.Node, field string) (string, bool) {
	if !d.present(n, field) {
		return "", false
	}
	if !isScalar(n, "!!str", "!!int", "!!float", "!!bool") {
		d.bad(n, field, "want text; got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// integer reads a whole number.
func (d *decoder) integer(n *yaml.Node, field string) (int64, bool) {
	if !d.present(n, field) {
		return 0, false
	}
	var v int64
	if !isScalar(n, "!!int") || n.Decode(&v) != nil {
		d.bad(n, field, "want a whole number; got %s", describe(n))
		return 0, false
	}
	return v, true
}

// number reads a finite number.
func (d *decoder) number(n *yaml.Node, field string) (float64, bool) {
	if !d.present(n, field) {
		return 0, false
	}
	var v float64
	if !isScalar(n, "!!int", "!!float") || n.Decode(&v) != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.bad(n, field, "want a number; got %s", describe(n))
		return 0, false
	}
	return v, true
}

// boolean reads true or false.
func (d *decoder) boolean(n *yaml.Node, field string) (bool, bool) {
	if !d.present(n, field) {
		return false, false
	}
	var v bool
	if !isScalar(n, "!!bool") || n.Decode(&v) != nil {
		d.bad(n, field, "want true or false; got %s", describe(n))
		return false, false
	}
	return v, true
}

// bareNumber matches a duration written without a unit.
var bareNumber = regexp.MustCompile(`^[+-]?[0-9]*\.?[0-9]+$`)

// duration reads a Go duration string ("500ms", "5s", "1m30s"). A bare 0 is
// accepted; any other bare number is refused, because "5" could mean 5s or
// 5ms and a wrong guess changes the run by a factor of 1000.
func (d *decoder) duration(n *yaml.Node, field string) (time.Duration, bool) {
	if !d.present(n, field) {
		return 0, false
	}
	if !isScalar(n, "!!str", "!!int", "!!float") {
		d.bad(n, field, "want a duration such as 5s; got %s", describe(n))
		return 0, false
	}
	s := strings.TrimSpace(n.Value)
	if bareNumber.MatchString(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil && f == 0 {
			return 0, true
		}
		d.bad(n, field, "%s has no unit; write a Go duration such as %ss or %sms", s, s, s)
		return 0, false
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.bad(n, field, "%q is not a duration; write a Go duration such as 500ms, 5s or 1m30s", n.Value)
		return 0, false
	}
	return v, true
}

// positive reads a duration that must be above zero. Zero is refused rather
// than taken as "the default", which is what a zero means to the simulator:
// a reader of "recovery: 0s" would not guess it means 13s.
func (d *decoder) positive(n *yaml.Node, field, dflt string) (time.Duration, bool) {
	v, ok := d.duration(n, field)
	if !ok {
		return 0, false
	}
	if v <= 0 {
		d.bad(n, field, "%v; must be positive (remove the key for the default, %s)", v, dflt)
		return 0, false
	}
	return v, true
}

// nonNegative reads a duration that may be zero.
func (d *decoder) nonNegative(n *yaml.Node, field string) (time.Duration, bool) {
	v, ok := d.duration(n, field)
	if !ok {
		return 0, false
	}
	if v < 0 {
		d.bad(n, field, "%v; must not be negative", v)
		return 0, false
	}
	return v, true
}

// badLine records a problem at a line, reported by another rule than the
// field's own reading (the model's, an unknown key's): it spoils nothing.
func (d *decoder) badLine(line int, field, format string, a ...any) {
	d.probs = append(d.probs, Problem{Line: max(line, 1), Field: field, Msg: fmt.Sprintf(format, a...)})
}
