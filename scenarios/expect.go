package scenarios

import (
	"slices"
	"strconv"
	"strings"

	"github.com/leaselab/leaselab/sim"
	"gopkg.in/yaml.v3"
)

// runnerMetrics are measured only when instances are task runners; in
// elector mode they would be 0 and the expectation would pass vacuously.
var runnerMetrics = []string{"lost_tasks", "duplicate_tasks", "duplicate_chores"}

// longKeys are the keys of an expectation's long form.
var longKeys = []string{"max", "slack"}

// predicted is the limit that asks for the bound calculator's prediction.
const predicted = "predicted"

func metricNames() []string {
	names := make([]string, 0, len(sim.Metrics))
	for m := range sim.Metrics {
		names = append(names, m)
	}
	slices.Sort(names)
	return names
}

// expect decodes the expectations, in file order.
func (d *decoder) expect(n *yaml.Node, sc sim.Scenario) []sim.Expectation {
	f, ok := d.mapping(n, "expect", nil)
	if !ok {
		return nil
	}
	_, _, p := effective(sc)
	var out []sim.Expectation
	for _, e := range f.list {
		if x, ok := d.expectation(e, sc.Mode, p); ok {
			out = append(out, x)
		}
	}
	return out
}

// expectation decodes "metric: limit" or "metric: {max: limit, slack: d}".
func (d *decoder) expectation(e entry, mode sim.Mode, p sim.Params) (sim.Expectation, bool) {
	metric := e.key.Value
	field := "expect." + metric
	x := sim.Expectation{Metric: metric, Line: e.key.Line}
	if _, ok := sim.Metrics[metric]; !ok {
		d.bad(e.key, "expect", "%s", unknownWord("metric", metric, metricNames()))
		return x, false
	}
	if slices.Contains(runnerMetrics, metric) && mode != sim.ModeRunner {
		d.bad(e.key, field, "is measured only in mode: runner (this scenario runs bare electors)")
		return x, false
	}

	limit, slack := e.val, (*yaml.Node)(nil)
	if e.val.Kind == yaml.MappingNode {
		f, ok := d.mapping(e.val, field, longKeys)
		if !ok {
			return x, false
		}
		m, ok := f.get("max")
		if !ok {
			d.bad(e.val, field, "missing max (the limit, e.g. max: predicted)")
			return x, false
		}
		limit = m.val
		if s, ok := f.get("slack"); ok {
			slack = s.val
		}
	}
	if !d.present(limit, field) {
		return x, false
	}

	isPredicted := isScalar(limit, "!!str") && strings.TrimSpace(limit.Value) == predicted
	ok := false
	switch {
	case sim.CountMetric(metric) && isPredicted:
		d.bad(limit, field, "%s is a count: %q applies only to duration metrics; give a whole number", metric, predicted)
	case sim.CountMetric(metric):
		x.Max, ok = d.countLimit(limit, field, metric)
	case isPredicted:
		x.Max, ok = predicted, true
	default:
		x.Max, ok = d.durationLimit(limit, field, p)
	}
	if slack != nil {
		if !isPredicted || sim.CountMetric(metric) {
			d.bad(slack, field+".slack", "applies only to max: %s (other limits are exact)", predicted)
			ok = false
		} else if v, good := d.positive(slack, field+".slack", sim.DefaultSlack.String()); good {
			x.Slack = v
		} else {
			ok = false
		}
	}
	if !ok {
		return x, false
	}
	// The simulator's own check, in case it knows something this file
	// does not.
	if err := sim.CheckExpectation(x, p); err != nil {
		d.bad(limit, field, "%v", err)
		return x, false
	}
	return x, true
}

// countLimit reads a count's limit, normalized to decimal (the simulator
// reads it with Atoi; YAML also allows 0x10 and 1_000).
func (d *decoder) countLimit(n *yaml.Node, field, metric string) (string, bool) {
	if !isScalar(n, "!!int") {
		d.bad(n, field, "%s is a count; want a whole number, got %s", metric, describe(n))
		return "", false
	}
	v, ok := d.integer(n, field)
	if !ok {
		return "", false
	}
	if v < 0 {
		d.bad(n, field, "%d; a count limit cannot be negative", v)
		return "", false
	}
	return strconv.FormatInt(v, 10), true
}

// durationLimit reads a duration expression and checks that it evaluates,
// to a non-negative value, with this scenario's parameters.
func (d *decoder) durationLimit(n *yaml.Node, field string, p sim.Params) (string, bool) {
	want := "want a duration (250ms), an expression over the timings (ttl + wait + 250ms) or predicted"
	if n.Kind != yaml.ScalarNode {
		d.bad(n, field, "%s; got %s", want, describe(n))
		return "", false
	}
	s := strings.TrimSpace(n.Value)
	if n.Tag != "!!str" {
		if bareNumber.MatchString(s) {
			if f, err := strconv.ParseFloat(s, 64); err == nil && f == 0 {
				return "0s", true // "max_overlap: 0" means what it says
			}
			d.bad(n, field, "%s has no unit; write e.g. %ss, or an expression such as ttl + wait", s, s)
			return "", false
		}
		d.bad(n, field, "%s; got %s", want, describe(n))
		return "", false
	}
	v, err := sim.EvalDuration(s, p)
	if err != nil {
		d.bad(n, field, "%v", err)
		return "", false
	}
	if v < 0 {
		d.bad(n, field, "%q is %v with this scenario's timings; a limit cannot be negative", s, v)
		return "", false
	}
	return s, true
}
