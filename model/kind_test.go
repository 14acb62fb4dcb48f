package model

import (
	"strings"
	"testing"
	"time"
)

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

// TestPhaseEnd: the shortest fault phase that holds a fault is its end, and
// at least 1 ns past its start, which must lie inside the phase: an
// instant fault, and a crash without a For that lasts to the phase's end,
// validate in a scenario as long as their PhaseEnd and no shorter.
func TestPhaseEnd(t *testing.T) {
	for _, c := range []struct {
		f    Fault
		want time.Duration
	}{
		{Fault{At: 5 * time.Second, Kind: FaultRedisRestart}, 5*time.Second + 1},
		{Fault{At: 5 * time.Second, Kind: FaultCrash, Target: Target{Role: RoleLeader}}, 5*time.Second + 1},
		{Fault{At: 2 * time.Second, For: 3 * time.Second, Kind: FaultPartition, Mode: PartitionBlackhole, Target: Target{Role: RoleLeader}}, 5 * time.Second},
	} {
		if got := c.f.PhaseEnd(); got != c.want {
			t.Errorf("%s at %v for %v: PhaseEnd %v, want %v", c.f.Kind, c.f.At, c.f.For, got, c.want)
		}
		for _, d := range []time.Duration{c.want, c.want - 1} {
			sc := Scenario{Name: "phase", Instances: 3, Duration: d, Faults: []Fault{c.f}}
			err := sc.Validate()
			if (err == nil) != (d == c.want) {
				t.Errorf("%s at %v for %v, a phase of %v: %v", c.f.Kind, c.f.At, c.f.For, d, err)
			}
		}
	}
}
