package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/leaselab/leaselab/internal/userfile"
	"github.com/leaselab/leaselab/model"
)

// topKeys are the keys of a scenario file, in the order README.md documents
// them (and Marshal writes them).
var topKeys = []string{
	"name", "description", "seed", "instances", "mode", "redis", "duration", "recovery", "time_scale",
	"starts", "backend", "agent", "elector", "client", "chore_interval", "workload", "faults", "expect",
}

var (
	electorKeys  = []string{"ttl", "wait", "jitter", "op_timeout", "safe", "safe_margin"}
	clientKeys   = []string{"read_timeout", "write_timeout", "dial_timeout", "max_retries", "context_timeouts", "pool_size"}
	workloadKeys = []string{"dispatch_rate", "delayed_rate", "delay", "task_duration"}
)

// MaxFileSize is the most a scenario file (or a sweep file) may hold: 1
// MiB. A scenario is a few KiB; the limit only keeps a wrong path (a log,
// a disk image) from being read whole.
const MaxFileSize = 1 << 20

// Load reads and parses a scenario file; messages name the file by path,
// and the scenario's Source is path, which its reports' reproduce lines
// rerun.
// Only a regular file of at most MaxFileSize is read: a device, a FIFO, a
// directory or a larger file is an error naming the path and what it is,
// returned at once (userfile.Read).
func Load(path string) (model.Scenario, error) {
	data, err := userfile.Read(path, MaxFileSize, "a scenario file")
	if err != nil {
		return model.Scenario{}, err
	}
	sc, err := Parse(path, data)
	if err == nil {
		sc.Source = path
	}
	return sc, err
}

// Parse reads a scenario from YAML. name is the file name used in messages
// and, without its extension, the scenario's name when the file gives none.
//
// Fields the file leaves out stay zero in the result, which the simulator
// reads as their defaults (README.md lists them); an omitted jitter is set
// to the spec's 5ms explicitly, and `jitter: 0s` becomes the simulator's -1
// (none).
//
// On failure the error is an *Error listing every problem found, one per
// line, each as "name:line: field: what is wrong".
func Parse(name string, data []byte) (model.Scenario, error) {
	d := &decoder{file: name}
	sc, root, ok := d.parse(name, data)
	if ok {
		// The rules on values live in one place, model.Scenario.Validate,
		// which checks the scenario as it will run (scaled); each problem
		// it names is put on the line of its field, beside what the file's
		// own reading found.
		var verr *model.ValidationError
		if err := sc.Validate(); errors.As(err, &verr) {
			d.modelProblems(root, verr.Problems)
		} else if err != nil {
			d.bad(root, "", "%v", err)
		}
	}
	if len(d.probs) > 0 {
		slices.SortStableFunc(d.probs, func(a, b Problem) int { return a.Line - b.Line })
		return model.Scenario{}, &Error{File: name, Problems: d.probs}
	}
	return sc, nil
}

// yamlLine finds the line in yaml.v3's error messages ("yaml: line 3: ...").
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// unmarshal parses data into a node tree. yaml.v3 has panicked on crafted
// input before (CVE-2022-28948, fixed in v3.0.1); a scenario file may come
// from anywhere, so a panic is turned into an error rather than trusted
// never to happen.
func (d *decoder) unmarshal(data []byte, doc *yaml.Node) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			d.bad(nil, "", "the YAML parser failed: %v", r)
			ok = false
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(doc)
	if errors.Is(err, io.EOF) {
		return true // an empty file: parse reports it
	}
	if err == nil {
		// A second document would be silently ignored by a plain
		// Unmarshal; it is more likely a paste than a wish.
		var next yaml.Node
		switch err = dec.Decode(&next); {
		case errors.Is(err, io.EOF):
			return true
		case err == nil:
			line := 1
			if len(next.Content) > 0 {
				line = next.Content[0].Line
			}
			d.badLine(line, "", "a file holds one scenario; this is a second YAML document")
			return false
		}
	}
	if err != nil {
		for _, msg := range strings.Split(err.Error(), "\n") {
			msg = strings.TrimSpace(msg)
			if msg == "" {
				continue
			}
			if m := yamlLine.FindStringSubmatch(msg); m != nil {
				line, _ := strconv.Atoi(m[1])
				d.probs = append(d.probs, Problem{Line: max(line, 1), Msg: m[2]})
				continue
			}
			d.bad(nil, "", "%s", strings.TrimPrefix(msg, "yaml: "))
		}
		return false
	}
	return true
}

// parse decodes the whole file; root is the top-level node (nil if none),
// ok whether it was a mapping, decoded into sc.
func (d *decoder) parse(name string, data []byte) (sc model.Scenario, root *yaml.Node, ok bool) {
	var doc yaml.Node
	if !d.unmarshal(data, &doc) {
		return sc, nil, false
	}
	if len(doc.Content) == 0 {
		d.bad(nil, "", "the file is empty; a scenario is a YAML mapping (see scenarios/README.md)")
		return sc, nil, false
	}
	root = doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		d.bad(root, "", "the file is empty; a scenario is a YAML mapping (see scenarios/README.md)")
		return sc, root, false
	}
	d.noAliases(root)
	top, ok := d.mapping(root, "", topKeys)
	if !ok {
		return sc, root, false
	}

	d.header(&sc, top, name, root)
	d.agent(&sc, top)
	d.elector(&sc.Params, top)
	d.client(&sc.Params.Client, top)
	d.runnerOnly(&sc, top)
	if e, ok := top.get("faults"); ok {
		sc.Faults = d.faults(e.val)
	}
	if e, ok := top.get("expect"); ok {
		d.expect(e.val, &sc)
	}
	return sc, root, true
}

// header decodes the scalar top-level fields.
func (d *decoder) header(sc *model.Scenario, top fields, name string, root *yaml.Node) {
	if e, ok := top.get("name"); ok {
		if v, ok := d.text(e.val, "name"); ok {
			sc.Name = v // the name rule is model.Scenario.Validate's
		}
	} else {
		base := filepath.Base(name)
		v := strings.TrimSuffix(base, filepath.Ext(base))
		if model.NameProblem(v) == "" {
			sc.Name = v
		} else {
			d.bad(root, "name", "the file name gives the name %q, which is not one; set name: to letters, digits, '.', '_' and '-'", v)
		}
	}
	if e, ok := top.get("description"); ok {
		if v, ok := d.text(e.val, "description"); ok {
			sc.Description = strings.TrimSpace(v)
		}
	}
	if e, ok := top.get("seed"); ok {
		if v, ok := d.integer(e.val, "seed"); ok {
			if v == 0 {
				// The simulator reads 0 as "the default seed, 1": refuse it
				// so that the seed in a report is the one in the file.
				d.bad(e.val, "seed", "0 means the default seed 1; give a non-zero seed or remove the key")
			}
			sc.Seed = v
		}
	}
	if e, ok := top.get("instances"); ok {
		if v, ok := d.integer(e.val, "instances"); ok {
			// The model's rule, applied before the count is narrowed to an
			// int, and to an explicit 0 (the model's "default").
			if msg := model.InstancesProblem(v); msg != "" {
				d.bad(e.val, "instances", "%s", msg)
			} else {
				sc.Instances = int(v)
			}
		}
	}
	if e, ok := top.get("mode"); ok {
		if v, ok := d.str(e.val, "mode"); ok {
			sc.Mode = model.Mode(v) // its values are model.Scenario.Validate's
		}
	}
	if e, ok := top.get("redis"); ok {
		if v, ok := d.str(e.val, "redis"); ok {
			sc.Redis = model.Topology(v) // its values are model.Scenario.Validate's
		}
	}
	if e, ok := top.get("duration"); ok {
		sc.Duration, _ = d.positive(e.val, "duration", "30s")
	}
	if e, ok := top.get("recovery"); ok {
		sc.Recovery, _ = d.positive(e.val, "recovery", "ttl + wait + 2s")
	}
	if e, ok := top.get("time_scale"); ok {
		if v, ok := d.number(e.val, "time_scale"); ok {
			sc.TimeScale = v // its range is model.Scenario.Validate's
		}
	}
	if e, ok := top.get("starts"); ok {
		if e.val.Kind != yaml.SequenceNode {
			d.bad(e.val, "starts", "want a list of durations, one per instance, e.g. [0s, 1.5s, 4s]")
		} else {
			for i, n := range e.val.Content {
				if v, ok := d.nonNegative(n, fmt.Sprintf("starts[%d]", i)); ok {
					sc.Starts = append(sc.Starts, v)
				}
			}
		}
	}
}

// agent decodes backend: and agent: {command: [...], env: {...}}.
func (d *decoder) agent(sc *model.Scenario, top fields) {
	if e, ok := top.get("backend"); ok {
		if v, ok := d.str(e.val, "backend"); ok {
			sc.Backend = v // its values, and which takes an agent, are model.Scenario.Validate's
		}
	}
	e, ok := top.get("agent")
	if !ok {
		return
	}
	f, ok := d.mapping(e.val, "agent", []string{"command", "env"})
	if !ok {
		return
	}
	a := &model.Agent{}
	c, ok := f.get("command")
	switch {
	case !ok:
		d.bad(e.val, "agent.command", "missing: the program and its arguments, e.g. command: [python3, agent.py]")
	case c.val.Kind != yaml.SequenceNode || len(c.val.Content) == 0:
		d.bad(c.val, "agent.command", "want a non-empty list: the program and its arguments, e.g. [python3, agent.py]; got %s", describe(c.val))
	default:
		for i, n := range c.val.Content {
			if v, ok := d.text(n, fmt.Sprintf("agent.command[%d]", i)); ok {
				a.Command = append(a.Command, v)
			}
		}
	}
	if env, ok := f.get("env"); ok {
		if vars, ok := d.mapping(env.val, "agent.env", nil); ok {
			a.Env = map[string]string{}
			for _, kv := range vars.list {
				if v, ok := d.text(kv.val, "agent.env."+kv.key.Value); ok {
					a.Env[kv.key.Value] = v
				}
			}
		}
	}
	sc.Agent = a
}

// elector decodes the elector's timings.
func (d *decoder) elector(p *model.Params, top fields) {
	// The spec's jitter unless the file says otherwise; see Parse.
	p.JitterMS = model.DefaultJitterMS
	e, ok := top.get("elector")
	if !ok {
		return
	}
	f, ok := d.mapping(e.val, "elector", electorKeys)
	if !ok {
		return
	}
	if e, ok := f.get("ttl"); ok {
		// Its lower bound (scaled) is model.Scenario.Validate's.
		p.TTL, _ = d.positive(e.val, "elector.ttl", "5s")
	}
	if e, ok := f.get("wait"); ok {
		p.Wait, _ = d.positive(e.val, "elector.wait", "6s")
	}
	if e, ok := f.get("jitter"); ok {
		if v, ok := d.nonNegative(e.val, "elector.jitter"); ok {
			switch {
			case v%time.Millisecond != 0:
				d.bad(e.val, "elector.jitter", "%v; must be whole milliseconds (the elector draws it in ms)", v)
			case v == 0:
				p.JitterMS = -1 // the simulator's way to say "no jitter"
			case v > time.Hour: // far past any sane jitter; keeps ms arithmetic from overflowing
				d.bad(e.val, "elector.jitter", "%v; must be at most 1h", v)
			default:
				p.JitterMS = int(v / time.Millisecond)
			}
		}
	}
	if e, ok := f.get("op_timeout"); ok {
		p.OpTimeout, _ = d.nonNegative(e.val, "elector.op_timeout")
	}
	if e, ok := f.get("safe"); ok {
		p.Safe, _ = d.boolean(e.val, "elector.safe")
	}
	if e, ok := f.get("safe_margin"); ok {
		// That it needs safe: true is model.Scenario.Validate's rule.
		p.SafeMargin, _ = d.positive(e.val, "elector.safe_margin", "ttl/100 + 2ms")
	}
}

// client decodes the go-redis options.
func (d *decoder) client(c *model.ClientParams, top fields) {
	e, ok := top.get("client")
	if !ok {
		return
	}
	f, ok := d.mapping(e.val, "client", clientKeys)
	if !ok {
		return
	}
	timeout := func(key string, dst *time.Duration) {
		e, ok := f.get(key)
		if !ok {
			return
		}
		field := "client." + key
		if isScalar(e.val, "!!str") && strings.TrimSpace(e.val.Value) == "none" {
			*dst = -1 // go-redis: -1 means no deadline
			return
		}
		*dst, _ = d.positive(e.val, field, "5s")
	}
	timeout("read_timeout", &c.ReadTimeout)
	timeout("write_timeout", &c.WriteTimeout)
	if e, ok := f.get("dial_timeout"); ok {
		c.DialTimeout, _ = d.positive(e.val, "client.dial_timeout", "5s")
	}
	if e, ok := f.get("max_retries"); ok {
		if v, ok := d.integer(e.val, "client.max_retries"); ok {
			// The file counts retries (0: none); the model's field reads 0
			// as its default and -1 as none, so the range is checked here,
			// in the file's terms, with the model's bound.
			switch {
			case v < 0 || v > model.MaxClientRetries:
				d.bad(e.val, "client.max_retries", "%d; want 0 (no retries) to %d", v, model.MaxClientRetries)
			case v == 0:
				// A person writing 0 means "no retries"; to go-redis (and
				// the simulator) 0 means "the default, 3" and -1 means none.
				c.MaxRetries = -1
			default:
				c.MaxRetries = int(v)
			}
		}
	}
	if e, ok := f.get("context_timeouts"); ok {
		c.ContextTimeoutEnabled, _ = d.boolean(e.val, "client.context_timeouts")
	}
	if e, ok := f.get("pool_size"); ok {
		if v, ok := d.integer(e.val, "client.pool_size"); ok {
			// In the file's terms, as max_retries: 0 is the model's default.
			if v < 1 || v > model.MaxPoolSize {
				d.bad(e.val, "client.pool_size", "%d; want 1 to %d (remove the key for go-redis's default, 10 per CPU)", v, model.MaxPoolSize)
			} else {
				c.PoolSize = int(v)
			}
		}
	}
}

// runnerOnly decodes what only runner-mode instances use: the chore interval
// and the workload. In elector mode they are refused, not ignored: a file
// that sets them expects an effect it would not get. model.Scenario.Validate
// refuses a workload's rates in elector mode; the keys themselves, whatever
// their values (the model fills a chore interval, a delay and a task
// duration in every mode), only a file can be refused for.
func (d *decoder) runnerOnly(sc *model.Scenario, top fields) {
	elector := sc.Mode == "" || sc.Mode == model.ModeElector
	notHere := func(e entry, key string) bool {
		if elector {
			d.bad(e.key, key, "%s", model.RunnerOnly)
		}
		return elector
	}
	if e, ok := top.get("chore_interval"); ok && !notHere(e, "chore_interval") {
		sc.Params.ChoreInterval, _ = d.positive(e.val, "chore_interval", "1s")
	}
	e, ok := top.get("workload")
	if !ok || notHere(e, "workload") {
		return
	}
	f, ok := d.mapping(e.val, "workload", workloadKeys)
	if !ok {
		return
	}
	rate := func(key string, dst *float64) {
		e, ok := f.get(key)
		if !ok {
			return
		}
		field := "workload." + key
		v, ok := d.number(e.val, field)
		if !ok {
			return
		}
		// Its bounds (after time_scale) are model.Scenario.Validate's.
		if v < 0 {
			d.bad(e.val, field, "%v tasks/s; a rate cannot be negative", v)
			return
		}
		*dst = v
	}
	rate("dispatch_rate", &sc.Workload.DispatchRate)
	rate("delayed_rate", &sc.Workload.DelayedRate)
	if e, ok := f.get("delay"); ok {
		sc.Workload.Delay, _ = d.positive(e.val, "workload.delay", "1s")
	}
	if e, ok := f.get("task_duration"); ok {
		sc.Workload.TaskDuration, _ = d.positive(e.val, "workload.task_duration", "10ms")
	}
}

// fieldLines maps the path of every key and list item of the file
// ("elector.ttl", "faults[2]", "faults[2].at") to its line.
func fieldLines(root *yaml.Node) map[string]int {
	lines := map[string]int{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if path != "" {
					k = path + "." + k
				}
				if _, dup := lines[k]; dup {
					continue // the first is the one read
				}
				lines[k] = n.Content[i].Line
				walk(n.Content[i+1], k)
			}
		case yaml.SequenceNode:
			for i, item := range n.Content {
				k := fmt.Sprintf("%s[%d]", path, i)
				lines[k] = item.Line
				walk(item, k)
			}
		}
	}
	if root != nil {
		lines[""] = root.Line
		walk(root, "")
	}
	return lines
}

// lineOf is the line of a field, or of the nearest enclosing one the file
// writes (a default the file left out is reported where its section is).
func lineOf(lines map[string]int, field string) int {
	for {
		if l, ok := lines[field]; ok {
			return l
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			return lines[""]
		}
		field = field[:i]
	}
}

// faultWhere names a fault in messages: "faults[2]".
func faultWhere(i int) string { return fmt.Sprintf("faults[%d]", i) }

// modelProblems puts each of model.Scenario.Validate's problems on the line
// of its field (or element) and names the line of each fault it refers to.
// A problem is left out when the file's own reading already found one in
// its field's unit (a fault, an expectation, a top-level key and what is
// under it) or in a unit it read: the model judged the default left in its
// place, not what the file says.
func (d *decoder) modelProblems(root *yaml.Node, ps []model.FieldError) {
	tainted := map[string]bool{}
	for _, t := range d.taints {
		if t == "" {
			return // the whole file was misread (an alias, a key that is no word)
		}
		tainted[unit(t)] = true
	}
	lines := fieldLines(root)
next:
	for _, p := range ps {
		if tainted[unit(p.Field)] {
			continue
		}
		msg := p.Msg
		for _, r := range p.Refs {
			if tainted[unit(r)] {
				continue next
			}
			if l, ok := lines[r]; ok && strings.HasSuffix(r, "]") {
				msg = strings.Replace(msg, r, fmt.Sprintf("%s (line %d)", r, l), 1)
			}
		}
		at := p.Field
		if p.Elem != "" {
			at = p.Elem
		}
		d.badLine(lineOf(lines, at), p.Field, "%s", msg)
	}
}

// unit is the part of a scenario a field belongs to, as far as a misread
// field spoils the model's judgement of others: a fault ("faults[2]"), an
// expectation ("expect.max_gap"), or a top-level key ("elector").
func unit(field string) string {
	if rest, ok := strings.CutPrefix(field, "expect."); ok {
		if i := strings.IndexAny(rest, ".["); i >= 0 {
			return field[:len("expect.")+i]
		}
		return field
	}
	if strings.HasPrefix(field, "faults[") {
		if i := strings.IndexByte(field, ']'); i >= 0 {
			return field[:i+1]
		}
	}
	if i := strings.IndexAny(field, ".["); i >= 0 {
		return field[:i]
	}
	return field
}
