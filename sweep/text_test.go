package sweep_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sweep"
)

// A searched worst case beside its bound: its ratio, the seed that broke
// it, or that it was not measured.
func TestWorstBesideBound(t *testing.T) {
	for _, c := range []struct {
		w    sweep.Worst
		want string
	}{
		{sweep.Worst{}, "not measured"},
		{sweep.Worst{Found: true, Measured: time.Second, Predicted: 4 * time.Second, Ratio: 0.25}, "1s of 4s (ratio 0.250)"},
		{sweep.Worst{Found: true, Measured: 5 * time.Second, Predicted: 4 * time.Second, Violated: true, Schedule: sweep.Schedule{Seed: 9}}, "5s, BOUND VIOLATED (bound 4s; seed 9)"},
		{sweep.Worst{Found: true, Measured: time.Second, Predicted: model.Unbounded}, "1s of unbounded"},
	} {
		if got := c.w.BesideBound(); got != c.want {
			t.Errorf("BesideBound = %q, want %q", got, c.want)
		}
	}
}

// A search writes its files and its worst runs' reports, and prints its
// table: each metric's worst beside its bound, with the formula.
func TestExploreWriteAndTable(t *testing.T) {
	e, _ := scenarios.Lookup("pause")
	r, err := sweep.Explore(context.Background(), sweep.Space{Base: e.Scenario, Metrics: []string{"max_overlap"}, Seeds: 1, Budget: 300}, sweep.ExploreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	reportErrs, err := sweep.WriteExploreRuns(dir, r)
	if err != nil || len(reportErrs) > 0 {
		t.Fatalf("WriteExploreRuns: %v, %v", err, reportErrs)
	}
	for _, f := range []string{"result.json", "explore.md", "index.html", "worst-overlap.yaml", "worst-overlap/report.html"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	// The worst run's report reproduces it from the file beside it.
	md, err := os.ReadFile(filepath.Join(dir, "worst-overlap", "report.md"))
	if want := "chaos run " + filepath.Join(dir, "worst-overlap.yaml") + " --seed "; err != nil || !strings.Contains(string(md), want) {
		t.Errorf("the worst run's report does not say %q (%v)", want, err)
	}
	var w bytes.Buffer
	r.WriteTable(&w)
	for _, want := range []string{"pause: ", "max_overlap", "predicted", "ratio", "P + TTL/2 + jitter - TTL"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, w.String())
		}
	}
}

// Advice is written as its Markdown, its JSON and its confirming
// scenarios, each a file chaos run reads back.
func TestWriteAdvice(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "advice")
	e, _ := scenarios.Lookup("pause")
	named, unnamed := e.Scenario, e.Scenario
	named.Name, unnamed.Name = "advise-pause", ""
	if err := sweep.WriteAdvice(dir, sweep.Advice{Scenarios: []model.Scenario{named, unnamed}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"advice.md", "advice.json", "advise-pause.yaml", "confirm-1.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := scenarios.Open(filepath.Join(dir, "advise-pause.yaml")); err != nil {
		t.Errorf("the confirming scenario does not read back: %v", err)
	}
}

// ReadAdvice reads back what WriteAdvice writes, and refuses a file that
// is not an advice: missing, not JSON, or JSON without constraints.
func TestReadAdvice(t *testing.T) {
	dir := t.TempDir()
	adv := sweep.Advice{Constraints: sweep.Constraints{MaxGap: 12 * time.Second}, Feasible: true}
	adv.Params.TTL = 3 * time.Second
	if err := sweep.WriteAdvice(dir, adv); err != nil {
		t.Fatal(err)
	}
	got, err := sweep.ReadAdvice(filepath.Join(dir, "advice.json"))
	if err != nil || got.Params.TTL != 3*time.Second || got.Constraints.MaxGap != 12*time.Second || !got.Feasible {
		t.Fatalf("read back %+v, %v", got.Params, err)
	}
	notJSON, other := filepath.Join(dir, "advice.md"), filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"cells": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "none.json"): "reading the advice: ",
		notJSON:                         notJSON + " is not the advice.json of chaos advise: ",
		other:                           other + " has no constraints: is it the advice.json of chaos advise?",
	} {
		if _, err := sweep.ReadAdvice(path); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}
