package scenarios

import (
	"github.com/leaselab/leaselab/model/bounds"

	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/leaselab/leaselab/model"
)

// longKeys are the keys of an expectation's long form.
var longKeys = []string{"max", "min", "exactly", "slack"}

// predicted is the limit that asks for the bound calculator's prediction.
const predicted = "predicted"

// claimsKey is the expect entry that makes the spec's claims expectations
// ("claims: held"); "claims: reported" is the default.
const claimsKey = "claims"

func metricNames() []string {
	names := make([]string, 0, len(model.Metrics)+1)
	for m := range model.Metrics {
		names = append(names, string(m))
	}
	names = append(names, claimsKey)
	slices.Sort(names)
	return names
}

// expect decodes the expectations, in file order, and "claims: held".
func (d *decoder) expect(n *yaml.Node, sc *model.Scenario) {
	f, ok := d.mapping(n, "expect", nil)
	if !ok {
		return
	}
	for _, e := range f.list {
		if e.key.Value == claimsKey {
			if v, ok := d.str(e.val, "expect.claims"); ok {
				switch v {
				case "held":
					sc.StrictClaims = true
				case "reported":
				default:
					d.bad(e.val, "expect.claims", "%q; want held (a claim not held fails the run) or reported (the default: a finding beside the verdict)", v)
				}
			}
			continue
		}
		if x, ok := d.expectation(e); ok {
			sc.Expect = append(sc.Expect, x)
		}
	}
}

// expectation decodes "metric: limit" (a maximum) or the long form
// "metric: {max: limit, min: limit, exactly: n, slack: d}". It reads the
// limits' form (a count is a whole number, a duration has a unit);
// whether they apply to the metric and to the scenario, and evaluate, is
// model.Scenario.Validate's to say. An expectation the reading found a
// problem in is left out, so that the model does not judge it again.
func (d *decoder) expectation(e entry) (model.Expectation, bool) {
	metric := model.Metric(e.key.Value)
	field := "expect." + string(metric)
	x := model.Expectation{Metric: metric, Line: e.key.Line}
	if _, ok := model.Metrics[metric]; !ok {
		// An unknown key of the expect mapping, with the file's own
		// suggestions (claims among them).
		d.badLine(e.key.Line, "expect", "%s", unknownWord("metric", string(metric), metricNames()))
		return x, false
	}
	before := len(d.probs)

	maxN, minN, slack := e.val, (*yaml.Node)(nil), (*yaml.Node)(nil)
	if e.val.Kind == yaml.MappingNode {
		f, ok := d.mapping(e.val, field, longKeys)
		if !ok {
			return x, false
		}
		maxN = nil
		m, hasMax := f.get("max")
		n, hasMin := f.get("min")
		ex, hasExactly := f.get("exactly")
		switch {
		case hasExactly && (hasMax || hasMin):
			d.bad(ex.key, field+".exactly", "exactly is min and max at once; give exactly, or min and/or max")
			return x, false
		case hasExactly:
			maxN, minN = ex.val, ex.val
		}
		if hasMax {
			maxN = m.val
		}
		if hasMin {
			minN = n.val
		}
		if s, ok := f.get("slack"); ok {
			slack = s.val
		}
	}

	limit := func(n *yaml.Node) string {
		if !d.present(n, field) {
			return ""
		}
		if isScalar(n, "!!str") && strings.TrimSpace(n.Value) == predicted {
			return predicted
		}
		if model.CountMetric(metric) {
			return d.countLimit(n, field, string(metric))
		}
		return d.durationLimit(n, field)
	}
	if maxN != nil {
		x.Max = limit(maxN)
	}
	if minN != nil {
		x.Min = limit(minN)
	}
	if slack != nil {
		x.Slack, _ = d.positive(slack, field+".slack", bounds.DefaultSlack.String())
	}
	return x, len(d.probs) == before
}

// countLimit reads a count's limit, normalized to decimal (the model
// reads it with ParseInt; YAML also allows 0x10 and 1_000).
func (d *decoder) countLimit(n *yaml.Node, field, metric string) string {
	if !isScalar(n, "!!int") {
		d.bad(n, field, "%s is a count; want a whole number, got %s", metric, describe(n))
		return ""
	}
	v, ok := d.integer(n, field)
	if !ok {
		return ""
	}
	return strconv.FormatInt(v, 10)
}

// durationLimit reads a duration expression's text: a string, or a bare 0.
func (d *decoder) durationLimit(n *yaml.Node, field string) string {
	want := "want a duration (250ms), an expression over the timings (ttl + wait + 250ms) or predicted"
	if n.Kind != yaml.ScalarNode {
		d.bad(n, field, "%s; got %s", want, describe(n))
		return ""
	}
	s := strings.TrimSpace(n.Value)
	if n.Tag != "!!str" {
		if bareNumber.MatchString(s) {
			if f, err := strconv.ParseFloat(s, 64); err == nil && f == 0 {
				return "0s" // "max_overlap: 0" means what it says
			}
			d.bad(n, field, "%s has no unit; write e.g. %ss, or an expression such as ttl + wait", s, s)
			return ""
		}
		d.bad(n, field, "%s; got %s", want, describe(n))
		return ""
	}
	return s
}
