package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
)

// A starter suite's listing: the timings, each scenario's predicted worst
// case beside what it expects, a warning for a limit below the prediction,
// and what to run next.
func TestWriteStarter(t *testing.T) {
	o := scenarios.StarterOptions{Limits: map[model.Metric]string{"max_gap": "1ms"}}
	suite, err := scenarios.Starter(o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteStarter(&b, "ci", suite, o.Params); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	p := model.Params{}.WithDefaults()
	if !strings.HasPrefix(s, "wrote ") || !strings.Contains(s, " scenarios to ci (TTL "+p.TTL.String()) || !strings.Contains(s, "spec mode)\n") {
		t.Errorf("first line: %q", strings.SplitN(s, "\n", 2)[0])
	}
	if !strings.Contains(s, "SCENARIO  ") || !strings.Contains(s, "PREDICTED GAP") || !strings.Contains(s, "max_gap 1ms") {
		t.Errorf("the table:\n%s", s)
	}
	if !strings.Contains(s, "\nlimits below the predicted worst case") || !strings.Contains(s, "> your 1ms: it fails when the worst case happens") {
		t.Errorf("no warning for a 1ms gap limit:\n%s", s)
	}
	if !strings.HasSuffix(s, "\nnext: chaos validate ci/*.yaml; chaos suite ci --junit junit.xml\n") {
		t.Errorf("last line of\n%s", s)
	}
}
