package scenarios

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/leaselab/leaselab/model"
)

// Marshal writes a scenario in the file format, so that a scenario built or
// changed in Go (a CLI override, a reproduction from a report) can be saved
// and read back. Parse(Marshal(s)) gives s again, except for
// Expectation.Line and for zero fields the simulator reads as defaults,
// which come back as the same defaults. Fields at their zero value are left
// out; a scenario that does not validate may not parse back.
func Marshal(sc model.Scenario) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	add := func(m *yaml.Node, key string, v *yaml.Node) {
		m.Content = append(m.Content, strNode(key), v)
	}
	add(root, "name", strNode(sc.Name))
	if sc.Description != "" {
		// Folded (">-") keeps a paragraph readable; text with its own line
		// breaks keeps them (literal, "|-").
		n := strNode(sc.Description)
		n.Style = yaml.FoldedStyle
		if strings.Contains(sc.Description, "\n") {
			n.Style = yaml.LiteralStyle
		}
		add(root, "description", n)
	}
	if sc.Seed != 0 {
		add(root, "seed", intNode(sc.Seed))
	}
	if sc.Instances != 0 {
		add(root, "instances", intNode(int64(sc.Instances)))
	}
	if sc.Mode != "" {
		add(root, "mode", strNode(string(sc.Mode)))
	}
	if sc.Redis != "" {
		add(root, "redis", strNode(string(sc.Redis)))
	}
	if sc.Duration != 0 {
		add(root, "duration", durNode(sc.Duration))
	}
	if sc.Recovery != 0 {
		add(root, "recovery", durNode(sc.Recovery))
	}
	if sc.TimeScale != 0 {
		add(root, "time_scale", floatNode(sc.TimeScale))
	}
	if len(sc.Starts) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, d := range sc.Starts {
			seq.Content = append(seq.Content, durNode(d))
		}
		add(root, "starts", seq)
	}
	if sc.Backend != "" {
		add(root, "backend", strNode(sc.Backend))
	}
	if a := sc.Agent; a != nil {
		ag := &yaml.Node{Kind: yaml.MappingNode}
		cmd := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, c := range a.Command {
			cmd.Content = append(cmd.Content, strNode(c))
		}
		add(ag, "command", cmd)
		if len(a.Env) > 0 {
			env := &yaml.Node{Kind: yaml.MappingNode}
			keys := make([]string, 0, len(a.Env))
			for k := range a.Env {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				add(env, k, strNode(a.Env[k]))
			}
			add(ag, "env", env)
		}
		add(root, "agent", ag)
	}

	p := sc.Params
	el := &yaml.Node{Kind: yaml.MappingNode}
	if p.TTL != 0 {
		add(el, "ttl", durNode(p.TTL))
	}
	if p.Wait != 0 {
		add(el, "wait", durNode(p.Wait))
	}
	// Parse and the simulator both read an omitted jitter (JitterMS 0) as
	// the spec's 5ms; a negative JitterMS is "none".
	switch j := p.JitterMS; {
	case j < 0:
		add(el, "jitter", strNode("0s"))
	case j > 0 && j != model.DefaultJitterMS:
		add(el, "jitter", durNode(time.Duration(j)*time.Millisecond))
	}
	if p.OpTimeout != 0 {
		add(el, "op_timeout", durNode(p.OpTimeout))
	}
	if p.Safe {
		add(el, "safe", boolNode(true))
	}
	if p.SafeMargin != 0 {
		add(el, "safe_margin", durNode(p.SafeMargin))
	}
	if len(el.Content) > 0 {
		add(root, "elector", el)
	}

	c := p.Client
	cl := &yaml.Node{Kind: yaml.MappingNode}
	timeout := func(key string, d time.Duration) {
		switch {
		case d < 0:
			add(cl, key, strNode("none"))
		case d > 0:
			add(cl, key, durNode(d))
		}
	}
	timeout("read_timeout", c.ReadTimeout)
	timeout("write_timeout", c.WriteTimeout)
	if c.DialTimeout != 0 {
		add(cl, "dial_timeout", durNode(c.DialTimeout))
	}
	switch {
	case c.MaxRetries < 0:
		add(cl, "max_retries", intNode(0)) // the file's 0 is "no retries"
	case c.MaxRetries > 0:
		add(cl, "max_retries", intNode(int64(c.MaxRetries)))
	}
	if c.ContextTimeoutEnabled {
		add(cl, "context_timeouts", boolNode(true))
	}
	if c.PoolSize != 0 {
		add(cl, "pool_size", intNode(int64(c.PoolSize)))
	}
	if len(cl.Content) > 0 {
		add(root, "client", cl)
	}

	if p.ChoreInterval != 0 {
		add(root, "chore_interval", durNode(p.ChoreInterval))
	}
	w := sc.Workload
	wl := &yaml.Node{Kind: yaml.MappingNode}
	if w.DispatchRate != 0 {
		add(wl, "dispatch_rate", floatNode(w.DispatchRate))
	}
	if w.DelayedRate != 0 {
		add(wl, "delayed_rate", floatNode(w.DelayedRate))
	}
	if w.Delay != 0 {
		add(wl, "delay", durNode(w.Delay))
	}
	if w.TaskDuration != 0 {
		add(wl, "task_duration", durNode(w.TaskDuration))
	}
	if len(wl.Content) > 0 {
		add(root, "workload", wl)
	}

	if len(sc.Faults) > 0 {
		fs := &yaml.Node{Kind: yaml.SequenceNode}
		for _, f := range sc.Faults {
			fs.Content = append(fs.Content, faultNode(f, add))
		}
		add(root, "faults", fs)
	}
	if len(sc.Expect) > 0 || sc.StrictClaims {
		ex := &yaml.Node{Kind: yaml.MappingNode}
		for _, e := range sc.Expect {
			add(ex, string(e.Metric), expectationNode(e, add))
		}
		if sc.StrictClaims {
			add(ex, "claims", strNode("held"))
		}
		add(root, "expect", ex)
	}

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// expectationNode writes a limit the short way when it can ("metric: 3",
// "metric: predicted") and as a flow mapping otherwise
// ("{min: 1}", "{exactly: 1}", "{max: predicted, slack: 500ms}").
func expectationNode(e model.Expectation, add func(*yaml.Node, string, *yaml.Node)) *yaml.Node {
	value := func(v string) *yaml.Node {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && model.CountMetric(e.Metric) {
			return intNode(n)
		}
		return strNode(v)
	}
	if e.Min == "" && e.Slack == 0 {
		return value(e.Max)
	}
	long := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	switch {
	case e.Min != "" && e.Min == e.Max:
		add(long, "exactly", value(e.Min))
	default:
		if e.Min != "" {
			add(long, "min", value(e.Min))
		}
		if e.Max != "" {
			add(long, "max", value(e.Max))
		}
	}
	if e.Slack != 0 {
		add(long, "slack", durNode(e.Slack))
	}
	return long
}

// faultNode writes one fault, its keys in the order README.md shows them.
func faultNode(f model.Fault, add func(*yaml.Node, string, *yaml.Node)) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	add(n, "at", durNode(f.At))
	if f.For != 0 {
		add(n, "for", durNode(f.For))
	}
	add(n, "kind", strNode(string(f.Kind)))
	switch {
	case len(f.Target.Indexes) == 1:
		add(n, "target", intNode(int64(f.Target.Indexes[0])))
	case len(f.Target.Indexes) > 1:
		list := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, x := range f.Target.Indexes {
			list.Content = append(list.Content, intNode(int64(x)))
		}
		add(n, "target", list)
	case f.Target.Role != "":
		add(n, "target", strNode(f.Target.Role))
	}
	if f.Mode != "" {
		add(n, "mode", strNode(f.Mode))
	}
	if f.Latency != 0 {
		add(n, "latency", durNode(f.Latency))
	}
	if f.Jitter != 0 {
		add(n, "jitter", durNode(f.Jitter))
	}
	if f.Direction != "" {
		add(n, "direction", strNode(f.Direction))
	}
	if f.Rate != 0 {
		add(n, "rate", floatNode(f.Rate))
	}
	if f.Jump != 0 {
		add(n, "jump", durNode(f.Jump))
	}
	if f.Restart {
		add(n, "restart", boolNode(true))
	}
	if k, _ := model.SpecOf(f.Kind); slices.Contains(k.Params, "lag") {
		add(n, "lag", durNode(f.Lag)) // 0 too: a clean failover, said
	}
	if f.AllowSkipped {
		add(n, "allow_skipped", boolNode(true))
	}
	return n
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func intNode(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v, 10)}
}

func floatNode(v float64) *yaml.Node {
	// No tag: "20" is written plain (an int to YAML, which Parse accepts
	// for a number) rather than as "!!float 20".
	return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(v, 'g', -1, 64)}
}

func boolNode(v bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
}

// durNode writes a duration the way a person would: "1m" rather than
// Go's "1m0s".
func durNode(d time.Duration) *yaml.Node {
	s := d.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return strNode(s)
}
