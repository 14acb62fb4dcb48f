package sweep

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestAdviceJSONWritesNoSentinel: a limit that is not set is null in
// advice.json, not 9223372036854775807 (what the advice printed before),
// and reads back as NoLimit; a file written before, with the sentinel or
// without the field, keeps its meaning.
func TestAdviceJSONWritesNoSentinel(t *testing.T) {
	a := Advice{Constraints: Constraints{MaxGap: 12 * time.Second, MaxOverlap: 0, MaxStale: NoLimit},
		Margins: []Margin{{Constraint: "max_stale", Limit: NoLimit, Predicted: time.Second, Headroom: NoLimit}}}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, "9223372036854775807") {
		t.Fatalf("the sentinel is written: %s", s)
	}
	for _, want := range []string{`"max_stale":null`, `"max_overlap":0`, `"max_gap":12000000000`, `"limit":null`, `"headroom":null`, `"predicted":1000000000`} {
		if !strings.Contains(s, want) {
			t.Errorf("%s not in %s", want, s)
		}
	}
	var back Advice
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Constraints != a.Constraints || back.Margins[0] != a.Margins[0] {
		t.Errorf("read back %+v, %+v; want %+v, %+v", back.Constraints, back.Margins[0], a.Constraints, a.Margins[0])
	}
	var old Constraints
	if err := json.Unmarshal([]byte(`{"max_gap":12000000000,"max_stale":9223372036854775807}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.MaxStale != NoLimit || old.MaxOverlap != 0 || old.MaxGap != 12*time.Second {
		t.Errorf("a file written before reads as %+v", old)
	}
}
