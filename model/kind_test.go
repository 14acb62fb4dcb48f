package model

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestEveryKindIsComplete is what makes a new kind one file: a kind that
// forgets a part of its spec, or the reason it has none, fails here
// rather than falling back to a default somewhere (a grey plot, a starter
// suite without it, an advise that cannot confirm its mode).
func TestEveryKindIsComplete(t *testing.T) {
	colours := map[uint32]FaultKind{}
	for _, k := range Kinds() {
		t.Run(string(k.Kind), func(t *testing.T) {
			name := strings.ReplaceAll(string(k.Kind), "-", "_")
			for _, file := range []string{"kind_" + name + ".go", filepath.Join("..", "sim", "faults", name+".go")} {
				if _, err := os.Stat(file); err != nil {
					t.Errorf("the kind's file: %v", err)
				}
			}
			if k.Doc == "" {
				t.Error("Doc is empty")
			}
			if k.Colour == 0 {
				t.Error("no Colour: the plot would draw it grey")
			} else if o, ok := colours[k.Colour]; ok {
				t.Errorf("Colour %06x is %s's too", k.Colour, o)
			}
			colours[k.Colour] = k.Kind
			for _, c := range []struct {
				part   string
				has    bool
				reason string
			}{
				{"Starter", k.Starter != nil, k.NoStarter},
				{"Axes", len(k.Axes) > 0, k.NoAxes},
				{"ModeFault", k.ModeFault != nil, k.NoModeFault},
			} {
				switch {
				case !c.has && c.reason == "":
					t.Errorf("no %s, and No%s does not say why", c.part, c.part)
				case c.has && c.reason != "":
					t.Errorf("a %s and a reason for having none (%q)", c.part, c.reason)
				}
			}
			if k.ModeFault != nil && len(k.Modes) == 0 {
				t.Error("a ModeFault but no Modes for it to exercise")
			}
			for _, m := range k.Modes {
				if !slices.Contains(Modes, m) {
					t.Errorf("mode %q is not one of Modes", m)
				}
			}
			if len(k.ModeValues) > 0 && !slices.Contains(k.Params, "mode") {
				t.Error("ModeValues but no parameter mode")
			}
			if k.Spans && !k.OnRedis {
				t.Error("Spans applies only to a kind on Redis")
			}
			if ts := k.Needs.Topologies; ts != nil && k.topologyProblem == nil {
				t.Error("Needs.Topologies without a topologyProblem to say why")
			}
		})
	}
}

// TestKindEntriesValidate: each kind's starter entries and mode faults
// are scenarios Validate accepts, on the topology the kind runs on.
func TestKindEntriesValidate(t *testing.T) {
	p := Params{}.WithDefaults()
	sizes := StarterSizes{Long: 3 * p.TTL, Latency: 200 * time.Millisecond, Pause: time.Second, Suspend: time.Second, RedisPause: time.Second}
	size := FaultSize{Latency: 200 * time.Millisecond, Pause: time.Second, ClockRate: 0.9, RedisPause: time.Second}
	for _, k := range Kinds() {
		redis := RedisSingle
		if ts := k.Needs.Topologies; ts != nil {
			redis = ts[0]
		}
		check := func(what string, f Fault) {
			t.Helper()
			if f.Kind != k.Kind {
				t.Errorf("%s %s: a fault of kind %q", k.Kind, what, f.Kind)
			}
			f.At = p.TTL
			if !f.Kind.OnRedis() && f.Target.Role == "" && len(f.Target.Indexes) == 0 {
				f.Target = Target{Role: RoleLeader}
			}
			sc := Scenario{Name: "t", Redis: redis, Duration: p.TTL + f.For + 2*p.TTL, Faults: []Fault{f}}
			if err := sc.Validate(); err != nil {
				t.Errorf("%s %s: %v", k.Kind, what, err)
			}
		}
		if k.Starter != nil {
			entries := k.Starter(sizes)
			if len(entries) == 0 {
				t.Errorf("%s: no starter entry when every size is given", k.Kind)
			}
			for _, e := range entries {
				if e.Name == "" || e.What == "" {
					t.Errorf("%s: a starter entry without a name or a text: %+v", k.Kind, e)
				}
				check("starter "+e.Name, e.Fault)
			}
		}
		if k.ModeFault != nil {
			for _, m := range k.Modes {
				f, ok := k.ModeFault(m, p, size, 3*p.TTL)
				if !ok {
					t.Errorf("%s: no fault for mode %s with every size given", k.Kind, m)
					continue
				}
				if got := f.FailureMode(); got != m {
					t.Errorf("%s: the fault for mode %s is of mode %s", k.Kind, m, got)
				}
				check("mode "+m, f)
			}
		}
		for _, x := range k.Axes {
			if x.Param == "" || x.Set == nil {
				t.Errorf("%s: axis %+v without a name or a setter", k.Kind, x)
			}
		}
	}
}

// TestParamsText: a report lists a fault's parameters from its kind's
// spec, the mode's default filled in.
func TestParamsText(t *testing.T) {
	dur := func(d time.Duration) string { return d.String() }
	for _, c := range []struct {
		f    Fault
		want string
	}{
		{Fault{Kind: FaultPartition}, "mode blackhole"},
		{Fault{Kind: FaultRedisPause, Mode: RedisPauseAll}, "mode all"},
		{Fault{Kind: FaultLatency, Latency: 200 * time.Millisecond, Jitter: 20 * time.Millisecond}, "latency 200ms ± 20ms, direction both"},
		{Fault{Kind: FaultClock, Rate: 0.5, Jump: -time.Second}, "rate 0.5×, jump -1s"},
		{Fault{Kind: FaultRedisFailover, Lag: time.Second}, "lag 1s"},
		{Fault{Kind: FaultCrash, Restart: true}, "restart at heal"},
		{Fault{Kind: FaultScriptFlush}, ""},
	} {
		if got := strings.Join(c.f.ParamsText(dur), ", "); got != c.want {
			t.Errorf("%s: %q, want %q", c.f.Kind, got, c.want)
		}
	}
}

// TestFaultName: a kind with several failure modes is named with its mode.
func TestFaultName(t *testing.T) {
	for _, c := range []struct {
		kind, mode, want string
	}{
		{"partition", ModePartitionRefuse, "partition refuse"},
		{"partition", ModePartitionReplies, "partition replies"},
		{"latency", ModeLatency, "latency"},
		{"redis-pause", ModeRedisPause, "redis-pause"},
	} {
		if got := faultName(FaultOutcome{FaultSpan: FaultSpan{Kind: c.kind, Mode: c.mode}}); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.kind, c.mode, got, c.want)
		}
	}
}
