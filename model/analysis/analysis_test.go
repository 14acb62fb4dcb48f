package analysis

import (
	"github.com/leaselab/leaselab/model"

	"encoding/json"
	"testing"
	"time"
)

func TestAnalyzeEmptyTimeline(t *testing.T) {
	for _, tl := range []model.Timeline{nil, {}} {
		a := Analyze(tl, model.Params{})
		if a.End != 0 || len(a.Beliefs)+len(a.Overlaps)+len(a.Gaps)+len(a.Faults) != 0 {
			t.Fatalf("empty timeline measured something: %+v", a)
		}
		if a.Params.TTL != model.DefaultTTL || a.StabilityWindow != model.DefaultTTL {
			t.Errorf("params not defaulted: %+v", a.Params)
		}
		if a.Redis.Observed {
			t.Error("redis lane observed with no RedisHolder event")
		}
		if len(a.Claims) != 3 {
			t.Fatalf("want 3 claims, got %d", len(a.Claims))
		}
		for _, c := range a.Claims {
			if c.Verdict != NotExercised {
				t.Errorf("claim %s on an empty run: %s", c.Name, c.Verdict)
			}
		}
		if _, err := json.Marshal(a); err != nil {
			t.Fatal(err)
		}
	}
}

// TestWindowUncertainty: a window's uncertainty is the sum of its ends'
// (only the start's when open), and the summary carries the longest's.
func TestWindowUncertainty(t *testing.T) {
	ms := time.Millisecond
	tl := model.Timeline{
		{At: 0, Kind: model.LeaderGained, Instance: 0, ID: "a", Uncertainty: 2 * ms},
		{At: 1000 * ms, Kind: model.LeaderGained, Instance: 1, ID: "b", Uncertainty: 3 * ms},
		{At: 1200 * ms, Kind: model.LeaderLost, Instance: 0, ID: "a", Uncertainty: 15 * ms},
		{At: 1500 * ms, Kind: model.LeaderLost, Instance: 1, ID: "b", Uncertainty: 5 * ms},
		{At: 1600 * ms, Kind: model.LeaderGained, Instance: 0, ID: "a", Uncertainty: 1 * ms},
		{At: 1700 * ms, Kind: model.LeaderGained, Instance: 1, ID: "b"},
		{At: 2000 * ms, Kind: model.RunEnded, Instance: -1, Detail: "complete"},
	}
	a := Analyze(tl, model.Params{TTL: time.Second, Wait: time.Second})
	if len(a.Overlaps) != 2 || a.Overlaps[0].Duration != 200*ms || a.Overlaps[0].Uncertainty != 18*ms {
		t.Fatalf("overlaps %+v, want the first 200ms ± 18ms", a.Overlaps)
	}
	if o := a.Overlaps[1]; !o.Open || o.Uncertainty != 0 {
		t.Fatalf("open overlap %+v: its start is certain, so is it", o)
	}
	if len(a.Gaps) != 1 || a.Gaps[0].Uncertainty != 6*ms || a.Summary.MaxGapUncertainty != 6*ms {
		t.Fatalf("gaps %+v (summary ± %v), want 100ms ± 6ms", a.Gaps, a.Summary.MaxGapUncertainty)
	}
	if a.Summary.MaxOverlapUncertainty != 0 {
		// the longest overlap is the open one (300ms), certain at its start
		t.Fatalf("summary overlap uncertainty %v, want the longest window's, 0", a.Summary.MaxOverlapUncertainty)
	}
	if b := Analyze(tl[:0:0], model.Params{TTL: time.Second, Wait: time.Second}); b.Summary.MaxGapUncertainty != 0 {
		t.Fatal("an empty timeline has uncertainty")
	}
}
