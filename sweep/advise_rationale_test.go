package sweep

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// TestAdviseRankingRationales: the TTL's, the mode's and the read
// timeout's rationale say what the candidate space shows, for a
// recommendation that keeps the target headroom, one that only meets the
// limits, and a closest miss: "the longest TTL that keeps 20% headroom"
// only when no candidate keeping it has a longer TTL, the predicted
// figures the margins table prints, "meets the constraints" only when it
// does, and the read timeout's floor as the search applied it.
func TestAdviseRankingRationales(t *testing.T) {
	crash := Envelope{LatencyP99: 2 * time.Millisecond}
	for name, tc := range map[string]struct {
		c    Constraints
		e    Envelope
		kind string // "robust", "feasible" or "miss"
	}{
		"headroom":    {Constraints{MaxGap: 12 * time.Second, MaxOverlap: NoLimit, MaxStale: NoLimit}, Envelope{LatencyP99: 2 * time.Millisecond, Partitions: []string{"blackhole"}}, "robust"},
		"no headroom": {Constraints{MaxGap: 1400 * time.Millisecond, MaxOverlap: NoLimit, MaxStale: NoLimit}, crash, "feasible"},
		"miss":        {Constraints{MaxGap: 500 * time.Millisecond, MaxOverlap: NoLimit, MaxStale: NoLimit}, crash, "miss"},
		"no latency":  {Constraints{MaxGap: 20 * time.Second, MaxOverlap: NoLimit, MaxStale: NoLimit}, Envelope{}, "robust"},
	} {
		a, err := Advise(context.Background(), tc.c, tc.e, AdviseOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e := tc.e.withDefaults()
		longest := map[string]time.Duration{}
		for _, p := range candidates(e) {
			cd := evaluate(p, tc.c, e, 0.2)
			if cd.robust {
				longest["robust"] = max(longest["robust"], p.TTL)
			}
			if cd.feasible {
				longest["feasible"] = max(longest["feasible"], p.TTL)
			}
		}
		kind := "miss"
		switch {
		case longest["robust"] > 0:
			kind = "robust"
		case longest["feasible"] > 0:
			kind = "feasible"
		}
		if kind != tc.kind || a.Feasible != (kind != "miss") {
			t.Fatalf("%s: the candidate space makes this a %q case (advice feasible %v); the test wants %q", name, kind, a.Feasible, tc.kind)
		}
		why := map[string]string{}
		for _, s := range a.Settings {
			why[s.Name] = s.Why
		}
		ttl := why["ttl"]
		switch kind {
		case "robust":
			if !strings.HasPrefix(ttl, "the longest TTL that keeps 20% headroom on every limit set above 0") || a.Params.TTL != longest["robust"] {
				t.Errorf("%s: TTL %v, the longest keeping the headroom %v, yet: %s", name, a.Params.TTL, longest["robust"], ttl)
			}
		case "feasible":
			if !strings.HasPrefix(ttl, "no setting keeps 20% headroom on every limit set above 0; the longest TTL that meets them all") || a.Params.TTL != longest["feasible"] {
				t.Errorf("%s: TTL %v, the longest meeting the limits %v, yet: %s", name, a.Params.TTL, longest["feasible"], ttl)
			}
		case "miss":
			if !strings.HasPrefix(ttl, "closest miss") {
				t.Errorf("%s: no candidate meets the limits, yet: %s", name, ttl)
			}
		}
		for _, m := range a.Margins {
			if want := model.DurationText(m.Predicted); !strings.Contains(ttl, want) {
				t.Errorf("%s: the margins predict %s %s, the TTL's rationale does not say so: %s", name, m.Constraint, want, ttl)
			}
		}
		if meets := strings.Contains(why["mode"], "meets the constraints"); meets && !a.Feasible {
			t.Errorf("%s: a closest miss, yet: %s", name, why["mode"])
		}
		floor := minReadTimeout(e)
		if a.Params.Client.ReadTimeout < floor || !strings.HasPrefix(why["read_timeout"], "at least "+floor.String()) {
			t.Errorf("%s: read timeout %v against a floor of %v, yet: %s", name, a.Params.Client.ReadTimeout, floor, why["read_timeout"])
		}
	}
}
