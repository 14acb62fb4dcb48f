package scenarios

import (
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/leaselab/leaselab/model"
)

// runnerMetrics are measured only when instances are task runners; in
// elector mode they would be 0 and the expectation would pass vacuously.
var runnerMetrics = []string{"lost_tasks", "duplicate_tasks", "duplicate_chores", "stale_chores", "fenced_chores"}

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
		names = append(names, m)
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
	_, _, p := effective(*sc)
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
		if x, ok := d.expectation(e, sc.Mode, p); ok {
			sc.Expect = append(sc.Expect, x)
		}
	}
}

// expectation decodes "metric: limit" (a maximum) or the long form
// "metric: {max: limit, min: limit, exactly: n, slack: d}".
func (d *decoder) expectation(e entry, mode model.Mode, p model.Params) (model.Expectation, bool) {
	metric := e.key.Value
	field := "expect." + metric
	x := model.Expectation{Metric: metric, Line: e.key.Line}
	if _, ok := model.Metrics[metric]; !ok {
		d.bad(e.key, "expect", "%s", unknownWord("metric", metric, metricNames()))
		return x, false
	}
	if slices.Contains(runnerMetrics, metric) && mode != model.ModeRunner {
		d.bad(e.key, field, "is measured only in mode: runner (this scenario runs bare electors)")
		return x, false
	}

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
		case !hasMax && !hasMin:
			d.bad(e.val, field, "missing a limit: give max (e.g. max: predicted), min (e.g. min: 1) or exactly")
			return x, false
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

	ok := true
	isPredicted := func(n *yaml.Node) bool {
		return n != nil && isScalar(n, "!!str") && strings.TrimSpace(n.Value) == predicted
	}
	limit := func(n *yaml.Node, f string) (string, bool) {
		if !d.present(n, f) {
			return "", false
		}
		switch {
		case model.CountMetric(metric) && isPredicted(n):
			d.bad(n, f, "%s is a count: %q applies only to duration metrics; give a whole number", metric, predicted)
			return "", false
		case model.CountMetric(metric):
			return d.countLimit(n, f, metric)
		case isPredicted(n):
			return predicted, true
		}
		return d.durationLimit(n, f, p)
	}
	if maxN != nil {
		x.Max, ok = limit(maxN, field)
	}
	if minN != nil {
		if isPredicted(minN) {
			d.bad(minN, field+".min", "predicted is an upper bound; a minimum is a number or a duration")
			ok = false
		} else if v, good := limit(minN, field); good {
			x.Min = v
		} else {
			ok = false
		}
	}
	if ok && x.Min != "" && x.Max != "" && x.Max != predicted {
		if lo, hi := minValue(x, p); lo > hi {
			d.bad(minN, field+".min", "min %s is above max %s: no value could pass", x.Min, x.Max)
			ok = false
		}
	}
	if slack != nil {
		if !isPredicted(maxN) || model.CountMetric(metric) {
			d.bad(slack, field+".slack", "applies only to max: %s (other limits are exact)", predicted)
			ok = false
		} else if v, good := d.positive(slack, field+".slack", model.DefaultSlack.String()); good {
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
	if err := model.CheckExpectation(x, p); err != nil {
		d.bad(e.val, field, "%v", err)
		return x, false
	}
	return x, true
}

// minValue evaluates an expectation's min and max as comparable numbers
// (counts, or durations in nanoseconds).
func minValue(x model.Expectation, p model.Params) (lo, hi int64) {
	if model.CountMetric(x.Metric) {
		a, _ := strconv.ParseInt(x.Min, 10, 64)
		b, _ := strconv.ParseInt(x.Max, 10, 64)
		return a, b
	}
	a, _ := model.EvalDuration(x.Min, p)
	b, _ := model.EvalDuration(x.Max, p)
	return int64(a), int64(b)
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
func (d *decoder) durationLimit(n *yaml.Node, field string, p model.Params) (string, bool) {
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
	v, err := model.EvalDuration(s, p)
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
