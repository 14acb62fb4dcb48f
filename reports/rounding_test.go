package reports

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"regexp"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// unrounded matches a duration printed past the one rounding rule
// (model.DurationText): more than 3 decimals of seconds or 2 of
// milliseconds ("1.152122096s" beside "≤ 1.811s").
var unrounded = regexp.MustCompile(`\b\d+\.\d{4,}s\b|\b\d+\.\d{3,}ms\b`)

// Every format of a report rounds its durations by the one rule, the
// expectations' measured values and bounds among them (but for a value
// that differs from its limit by less than the rule shows, which gets the
// digits that tell them apart: model's TestFailReadsAsFail).
func TestReportsRoundDurations(t *testing.T) {
	res := fixture()
	res.Checks = append(res.Checks,
		model.Check{Metric: "max_gap", Limit: "predicted", HasMax: true, Max: 1811234567, Measured: 1152122096, Verdict: model.Pass},
		model.Check{Metric: "max_overlap", Limit: "2s", HasMax: true, Max: 2 * time.Second, Measured: 2345678901, Open: true, Verdict: model.Fail})
	var h, md, ju bytes.Buffer
	if err := HTML(&h, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := JUnit(&ju, []*verdict.Result{res}); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"html": h.String(), "markdown": md.String(), "junit": ju.String()} {
		if m := unrounded.FindAllString(text, 5); len(m) > 0 {
			t.Errorf("%s prints unrounded durations: %q", name, m)
		}
	}
}
