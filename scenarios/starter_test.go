package scenarios

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

func TestStarterCoversEveryFailureMode(t *testing.T) {
	p := model.Params{TTL: 2 * time.Second, Wait: 3 * time.Second, Client: model.ClientParams{ReadTimeout: 500 * time.Millisecond, MaxRetries: -1}}
	suite, err := Starter(StarterOptions{Params: p})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	kinds := map[model.FaultKind]int{}
	for _, sc := range suite {
		names = append(names, sc.Name)
		if len(sc.Faults) != 1 {
			t.Fatalf("%s: %d faults, want 1", sc.Name, len(sc.Faults))
		}
		f := sc.Faults[0]
		kinds[f.Kind]++
		if f.Kind != model.FaultRedisRestart && f.Target.Role != model.RoleLeader {
			t.Errorf("%s: fault on %+v, want the leader", sc.Name, f.Target)
		}
		if sc.Params.TTL != p.TTL || sc.Params.Wait != p.Wait || sc.Params.Client.ReadTimeout != p.Client.ReadTimeout || sc.Params.Client.MaxRetries != -1 {
			t.Errorf("%s: params %+v, want the timings given", sc.Name, sc.Params)
		}
		// Written and read back, it is the same suite, and it validates.
		b, err := Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(sc.Name+".yaml", b)
		if err != nil {
			t.Fatalf("%s does not read back: %v\n%s", sc.Name, err, b)
		}
		if len(back.Expect) != len(StarterMetrics) {
			t.Errorf("%s: %d expectations, want %d", sc.Name, len(back.Expect), len(StarterMetrics))
		}
		for _, e := range back.Expect {
			if e.Max != "predicted" {
				t.Errorf("%s: %s %q, want predicted when no limit is given", sc.Name, e.Metric, e.Max)
			}
		}
		// The fault and the failover after it fit in the run.
		if end := f.At + f.For + p.TTL + p.Wait; end > sc.Duration+sc.WithDefaults().Recovery {
			t.Errorf("%s: the fault's worst case ends at %v, after the run (%v + recovery)", sc.Name, end, sc.Duration)
		}
	}
	want := []string{"leader-crash", "leader-stop", "partition-blackhole", "partition-refuse", "partition-reset",
		"partition-blackhole-requests", "partition-blackhole-replies", "latency", "pause", "redis-restart"}
	if !slices.Equal(names, want) {
		t.Errorf("scenarios %v, want %v", names, want)
	}
	if kinds[model.FaultPartition] != len(model.PartitionModes) {
		t.Errorf("%d partitions, want one per mode (%d)", kinds[model.FaultPartition], len(model.PartitionModes))
	}
}

func TestStarterLimitsWithinTheEnvelope(t *testing.T) {
	suite, err := Starter(StarterOptions{
		Limits: map[model.Metric]string{"max_gap": "12s", "max_overlap": "0s"},
		Within: []string{model.ModeLeaderCrash, model.ModePartitionBlackhole},
		Pause:  300 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range suite {
		within := sc.Name == "leader-crash" || sc.Name == "partition-blackhole" || sc.Name == "partition-blackhole-requests"
		got := map[string]string{}
		for _, e := range sc.Expect {
			got[string(e.Metric)] = e.Max
		}
		switch {
		case within && (got["max_gap"] != "12s" || got["max_overlap"] != "0s" || got["stale_leadership"] != "predicted"):
			t.Errorf("%s (in the envelope): expects %v, want the limits given and predicted for the rest", sc.Name, got)
		case !within && (got["max_gap"] != "predicted" || got["max_overlap"] != "predicted"):
			t.Errorf("%s (outside the envelope): expects %v, want predicted only", sc.Name, got)
		case !within && !strings.Contains(sc.Description, "outside the envelope"):
			t.Errorf("%s: the description does not say the limits do not apply: %q", sc.Name, sc.Description)
		}
		if sc.Name == "pause" && sc.Faults[0].For != 300*time.Millisecond {
			t.Errorf("pause of %v, want 300ms", sc.Faults[0].For)
		}
	}
	if _, err := Starter(StarterOptions{Limits: map[model.Metric]string{"max_gaps": "1s"}}); err == nil || !strings.Contains(err.Error(), "max_gaps") {
		t.Errorf("a limit on an unknown metric: %v, want an error naming it", err)
	}
}

// TestStarterSizedKinds: the suspend and redis-pause scenarios are there
// only when sized, each after the scenarios of the kinds listed before it
// (model.FaultKinds), and they read back and validate as the others do.
func TestStarterSizedKinds(t *testing.T) {
	suite, err := Starter(StarterOptions{Suspend: 2 * time.Second, RedisPause: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range suite {
		names = append(names, sc.Name)
		b, err := Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(sc.Name+".yaml", b); err != nil {
			t.Errorf("%s does not read back: %v\n%s", sc.Name, err, b)
		}
	}
	want := []string{"leader-crash", "leader-stop", "partition-blackhole", "partition-refuse", "partition-reset",
		"partition-blackhole-requests", "partition-blackhole-replies", "latency", "pause", "suspend", "redis-restart", "redis-pause"}
	if !slices.Equal(names, want) {
		t.Fatalf("scenarios %v, want %v", names, want)
	}
	rp := suite[len(suite)-1].Faults[0]
	if rp.Kind != model.FaultRedisPause || rp.For != 1500*time.Millisecond || rp.Mode != model.RedisPauseWrite || rp.Target.Role != "" || len(rp.Target.Indexes) > 0 {
		t.Errorf("the redis-pause scenario's fault: %+v, want a 1.5s CLIENT PAUSE WRITE", rp)
	}
}
