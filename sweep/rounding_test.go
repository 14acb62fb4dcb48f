package sweep_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/model"

	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sweep"
)

// TestSearchTextsRoundDurations: explore's and prove's tables, explore's
// Markdown and HTML and the worst files' descriptions print measured
// values by the rule the run reports use (model.DurationText), which the
// virtual backend's nanosecond figures broke ("7.554978502s" beside
// "7.565s"). Schedule coordinates stay exact: they are what reproduces.
func TestSearchTextsRoundDurations(t *testing.T) {
	e, _ := scenarios.Lookup("partition-blackhole")
	ex, err := sweep.Explore(context.Background(), sweep.Space{Base: e.Scenario, Seeds: 1, Budget: 400}, sweep.ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := sweep.WriteExplore(dir, ex); err != nil {
		t.Fatal(err)
	}
	pr, err := sweep.Prove(context.Background(), sweep.ProveSpace{Base: e.Scenario}, sweep.ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sweep.WriteProve(filepath.Join(dir, "prove"), pr); err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	var b bytes.Buffer
	ex.WriteTable(&b)
	texts["explore table"] = b.String()
	b.Reset()
	pr.WriteTable(&b)
	texts["prove table"] = b.String()
	for _, f := range []string{"explore.md", "index.html", "worst-overlap.yaml", "robust-overlap.yaml", "prove/witness-overlap.yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(data)
	}
	type value struct {
		metric         string
		measured, text string
	}
	var values []value
	for _, w := range ex.Worst {
		if w.Found && w.Measured%1e6 != 0 {
			m, _ := w.Texts()
			values = append(values, value{"explore " + w.Metric, w.Measured.String(), m})
		}
	}
	for _, p := range pr.Proofs {
		if p.Worst%1e6 != 0 {
			m, _ := model.DurationsApart(p.Worst, p.Bound)
			values = append(values, value{"prove " + p.Metric, p.Worst.String(), m})
		}
	}
	if len(values) < 4 {
		t.Fatalf("only %d measured values with sub-millisecond digits: the test checks nothing", len(values))
	}
	for name, text := range texts {
		for _, v := range values {
			if strings.Contains(text, v.measured) {
				t.Errorf("%s prints %s's %s unrounded", name, v.metric, v.measured)
			}
		}
	}
	for _, v := range values {
		if !strings.Contains(texts[strings.Fields(v.metric)[0]+" table"], v.text) {
			t.Errorf("the %s table lacks %s's %s", strings.Fields(v.metric)[0], v.metric, v.text)
		}
	}
}
