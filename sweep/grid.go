package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
)

// Parameters a grid axis can vary. Durations are written as Go durations
// ("500ms"), in the scenario's own (unscaled) units.
const (
	ParamTTL         = "ttl"          // Params.TTL
	ParamWait        = "wait"         // Params.Wait
	ParamJitter      = "jitter"       // Params.JitterMS, a whole number of ms; 0s = none
	ParamOpTimeout   = "op_timeout"   // Params.OpTimeout; 0s = none
	ParamReadTimeout = "read_timeout" // Client.ReadTimeout and WriteTimeout
	ParamMaxRetries  = "max_retries"  // Client.MaxRetries; 0 = no retries (as in scenario files)
	ParamSafe        = "safe"         // Params.Safe: false (spec mode) or true
	ParamPause       = "pause"        // For of every pause and suspend fault (both P in the bounds)
	ParamLatency     = "latency"      // Latency of every latency fault
	ParamClockRate   = "clock_rate"   // Rate of every clock-drift fault
	ParamPartition   = "partition"    // For of every partition fault
	ParamFaultAt     = "fault_at"     // At of the first fault; the whole schedule moves with it (its phase against the renewals)
	ParamLag         = "lag"          // Lag of every redis-failover fault (0s: clean)
	ParamRedisPause  = "redis_pause"  // For of every redis-pause fault
)

// Params lists the parameters an axis can vary, in the order documented.
var Params = []string{
	ParamTTL, ParamWait, ParamJitter, ParamOpTimeout, ParamReadTimeout, ParamMaxRetries, ParamSafe,
	ParamPause, ParamLatency, ParamClockRate, ParamPartition, ParamFaultAt, ParamLag, ParamRedisPause,
}

// NoLimit stands for a limit that is not set.
const NoLimit = model.Unbounded

// Limits define the safe region of a sweep: a cell is safe when its worst
// run (the maximum over its seeds) keeps every limit.
type Limits struct {
	// MaxGap bounds the longest leaderless gap; 0 or NoLimit: no limit (a
	// gap of 0 is impossible).
	MaxGap time.Duration `json:"max_gap"`
	// MaxOverlap bounds the longest believed split brain; 0 allows none,
	// NoLimit: no limit.
	MaxOverlap time.Duration `json:"max_overlap"`
	// MaxStale bounds stale leadership (believed while Redis held another
	// value); 0 allows none, NoLimit: no limit.
	MaxStale time.Duration `json:"max_stale"`
	// MaxDuplicateChores bounds the duplicate chores of a run (runner
	// mode: the same chore run by two instances within one chore
	// interval); nil: no limit.
	MaxDuplicateChores *int `json:"max_duplicate_chores,omitempty"`
}

// DefaultLimits: no overlap, gap and stale leadership unlimited.
func DefaultLimits() Limits { return Limits{MaxGap: NoLimit, MaxOverlap: 0, MaxStale: NoLimit} }

func (l Limits) gapLimit() time.Duration {
	if l.MaxGap <= 0 {
		return NoLimit
	}
	return l.MaxGap
}

// Axis is one parameter of the grid and the values it takes, each in its
// canonical text ("500ms", "3", "true", "0.5"): build one with Durations,
// Ints, Floats or Bools, or let ParseGrid read it.
type Axis struct {
	Param  string   `json:"param"`
	Values []string `json:"values"`
}

// Durations builds a duration axis (ttl, wait, jitter, op_timeout,
// read_timeout, pause, latency, partition, fault_at, lag, redis_pause).
func Durations(param string, ds ...time.Duration) Axis {
	a := Axis{Param: param}
	for _, d := range ds {
		a.Values = append(a.Values, d.String())
	}
	return a
}

// Ints builds an integer axis (max_retries).
func Ints(param string, vs ...int) Axis {
	a := Axis{Param: param}
	for _, v := range vs {
		a.Values = append(a.Values, strconv.Itoa(v))
	}
	return a
}

// Floats builds a number axis (clock_rate).
func Floats(param string, vs ...float64) Axis {
	a := Axis{Param: param}
	for _, v := range vs {
		a.Values = append(a.Values, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return a
}

// Bools builds a boolean axis (safe).
func Bools(param string, vs ...bool) Axis {
	a := Axis{Param: param}
	for _, v := range vs {
		a.Values = append(a.Values, strconv.FormatBool(v))
	}
	return a
}

// Grid is a sweep: a base scenario, the axes it is varied along (the cells
// are their cross product, the last axis varying fastest), and the seeds
// each cell runs.
type Grid struct {
	// Name names the sweep in reports; default the base scenario's name.
	Name string `json:"name"`
	// Base is the scenario every cell starts from, in elector or runner
	// mode (a runner-mode run costs ~15 times an elector-mode one, and its
	// cells also count chores and tasks: Cell.Work).
	Base model.Scenario `json:"base"`
	Axes []Axis         `json:"axes"`
	// Seeds is how many seeds each cell runs (FirstSeed, FirstSeed+1, ...;
	// the same seeds in every cell). Default 20.
	Seeds     int   `json:"seeds"`
	FirstSeed int64 `json:"first_seed"`
	// Limits define the safe region.
	Limits Limits `json:"limits"`
}

// DefaultSeeds is Grid.Seeds when it is 0.
const DefaultSeeds = 20

func (g Grid) withDefaults() Grid {
	if g.Seeds == 0 {
		g.Seeds = DefaultSeeds
	}
	if g.FirstSeed == 0 {
		g.FirstSeed = 1
	}
	if g.Name == "" {
		g.Name = g.Base.Name
	}
	if g.Base.Name == "" {
		g.Base.Name = "sweep"
	}
	return g
}

// Cells is the number of cells of the grid.
func (g Grid) Cells() int {
	n := 1
	for _, a := range g.Axes {
		n *= len(a.Values)
	}
	return n
}

// coords returns the value index on each axis of cell i (last axis fastest).
func (g Grid) coords(i int) []int {
	c := make([]int, len(g.Axes))
	for k := len(g.Axes) - 1; k >= 0; k-- {
		n := len(g.Axes[k].Values)
		c[k] = i % n
		i /= n
	}
	return c
}

// Check reports what is wrong with the grid itself (not with its cells:
// a cell whose scenario is invalid is marked invalid and not run).
func (g Grid) Check() error {
	var probs []string
	bad := func(format string, a ...any) { probs = append(probs, fmt.Sprintf(format, a...)) }
	if g.Seeds < 0 {
		bad("seeds: %d; want at least 1", g.Seeds)
	}
	if g.Limits.MaxDuplicateChores != nil && g.Base.Mode != model.ModeRunner {
		bad("limits.max_duplicate_chores: the base scenario is in elector mode, which runs no chores; use mode: runner")
	}
	seen := map[string]bool{}
	for i, a := range g.Axes {
		if !slices.Contains(Params, a.Param) {
			bad("axes[%d]: unknown parameter %q; want one of %s", i, a.Param, strings.Join(Params, ", "))
			continue
		}
		if seen[a.Param] {
			bad("axes[%d]: %s is given twice", i, a.Param)
		}
		seen[a.Param] = true
		if len(a.Values) == 0 {
			bad("axes[%d]: %s has no values", i, a.Param)
		}
		vs := map[string]bool{}
		for _, v := range a.Values {
			if _, err := parseValue(a.Param, v); err != nil {
				bad("axes[%d]: %s: %v", i, a.Param, err)
			}
			if vs[v] {
				bad("axes[%d]: %s: %s is given twice", i, a.Param, v)
			}
			vs[v] = true
		}
		if msg := needsFault(g.Base, a.Param); msg != "" {
			bad("axes[%d]: %s", i, msg)
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("sweep %q: %s", g.Name, strings.Join(probs, "; "))
	}
	return nil
}

// sizeAxis is the axis param of f's kind (model.KindSpec.Axes), if the
// kind has one of that name and it sizes f: the pause axis sizes pauses and
// suspends (the bounds take both as the same P), clock_rate the clock
// faults with a rate.
func sizeAxis(param string, f model.Fault) (model.SizeAxis, bool) {
	k, _ := model.SpecOf(f.Kind)
	for _, x := range k.Axes {
		if x.Param == param && x.Applies(f) {
			return x, true
		}
	}
	return model.SizeAxis{}, false
}

// sizes reports whether the fault-size axis param sizes f.
func sizes(param string, f model.Fault) bool {
	_, ok := sizeAxis(param, f)
	return ok
}

// needsFault says why a fault-size axis cannot apply to sc ("" if it can).
func needsFault(sc model.Scenario, param string) string {
	if param == ParamFaultAt {
		if len(sc.Faults) == 0 {
			return "fault_at: the base scenario has no fault to move"
		}
		return ""
	}
	var kinds []string
	qualifier := ""
	for _, k := range model.Kinds() {
		for _, x := range k.Axes {
			if x.Param == param {
				kinds, qualifier = append(kinds, string(k.Kind)), x.Qualifier
			}
		}
	}
	if len(kinds) == 0 || slices.ContainsFunc(sc.Faults, func(f model.Fault) bool { return sizes(param, f) }) {
		return "" // not a fault's size, or one to size
	}
	return fmt.Sprintf("%s: the base scenario has no %s fault%s to size", param, strings.Join(kinds, " or "), qualifier)
}

// value is a parsed axis value.
type value struct {
	d time.Duration
	i int
	f float64
	b bool
}

// parseValue reads an axis value in its canonical text.
func parseValue(param, s string) (value, error) {
	switch param {
	case ParamMaxRetries:
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > 100 {
			return value{}, fmt.Errorf("%q; want a whole number of retries from 0 (none) to 100", s)
		}
		return value{i: v}, nil
	case ParamSafe:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return value{}, fmt.Errorf("%q; want true or false", s)
		}
		return value{b: v}, nil
	case ParamClockRate:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < model.MinClockRate || v > model.MaxClockRate {
			return value{}, fmt.Errorf("%q; want a clock speed from %v to %v (1 = true time)", s, model.MinClockRate, model.MaxClockRate)
		}
		return value{f: v}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return value{}, fmt.Errorf("%q; want a duration such as 500ms or 5s", s)
	}
	switch param {
	case ParamJitter, ParamOpTimeout, ParamFaultAt, ParamLag:
		if d < 0 {
			return value{}, fmt.Errorf("%v is negative", d)
		}
		if param == ParamJitter && d%time.Millisecond != 0 {
			return value{}, fmt.Errorf("%v; jitter is a whole number of milliseconds", d)
		}
	default:
		if d <= 0 {
			return value{}, fmt.Errorf("%v; want a positive duration", d)
		}
	}
	return value{d: d}, nil
}

// Scenario returns the scenario of cell i, with the given seed: the base
// with each axis's value applied. A fault an axis lengthens past the end of
// the fault phase stretches the phase to contain it.
func (g Grid) Scenario(i int, seed int64) (model.Scenario, error) {
	g = g.withDefaults()
	sc := g.Base
	sc.Faults = slices.Clone(sc.Faults)
	sc.Expect = slices.Clone(sc.Expect)
	sc.Seed = seed
	sc.Name = g.Base.Name
	sized := false
	for k, vi := range g.coords(i) {
		a := g.Axes[k]
		v, err := parseValue(a.Param, a.Values[vi])
		if err != nil {
			return sc, err
		}
		p := &sc.Params
		faults := func(ok func(model.Fault) bool, set func(*model.Fault)) {
			for j := range sc.Faults {
				if ok(sc.Faults[j]) {
					set(&sc.Faults[j])
				}
			}
			sized = true
		}
		switch a.Param {
		case ParamTTL:
			p.TTL = v.d
		case ParamWait:
			p.Wait = v.d
		case ParamJitter:
			p.JitterMS = int(v.d / time.Millisecond)
			if p.JitterMS == 0 {
				p.JitterMS = -1
			}
		case ParamOpTimeout:
			p.OpTimeout = v.d
		case ParamReadTimeout:
			p.Client.ReadTimeout, p.Client.WriteTimeout = v.d, v.d
		case ParamMaxRetries:
			p.Client.MaxRetries = v.i
			if v.i == 0 {
				p.Client.MaxRetries = -1
			}
		case ParamSafe:
			p.Safe = v.b
		case ParamFaultAt:
			// The whole schedule moves: the first fault starts at the
			// value, the others keep their distance from it (five flaps
			// stay five flaps, a pause stays inside its latency).
			first := sc.Faults[0].At
			for _, f := range sc.Faults {
				first = min(first, f.At)
			}
			shift := v.d - first
			faults(func(model.Fault) bool { return true }, func(f *model.Fault) { f.At += shift })
		default: // a kind's size (model.KindSpec.Axes)
			if !slices.Contains(Params, a.Param) {
				break // Check refuses it
			}
			faults(func(f model.Fault) bool { return sizes(a.Param, f) }, func(f *model.Fault) {
				x, _ := sizeAxis(a.Param, *f)
				x.Set(f, v.d, v.f)
			})
		}
	}
	if sized {
		sc.Duration = stretchedPhase(sc, nil)
	}
	return sc, sc.Validate()
}

// Values returns the axis values of cell i, one per axis.
func (g Grid) Values(i int) []string {
	out := make([]string, len(g.Axes))
	for k, vi := range g.coords(i) {
		out[k] = g.Axes[k].Values[vi]
	}
	return out
}
