package reports

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// A run whose key held a value no agent announced, and one whose two live
// instances announced one value: both reports name the value and what it
// caused, and say whose lease it was as "announced by no agent" or
// "shared by", never as held by one instance.
func TestReportsNameIdentityFindings(t *testing.T) {
	s := time.Second
	ev := func(at time.Duration, k model.Kind, i int, id, holder string) model.Event {
		return model.Event{At: at, Kind: k, Instance: i, ID: id, Holder: holder}
	}
	for _, c := range []struct {
		name  string
		tl    model.Timeline
		want  []string
		stale string // the suite row's Stale cell
	}{
		{"unannounced", model.Timeline{
			ev(0, model.InstanceStarted, 0, "agent-0", ""), ev(0, model.InstanceStarted, 1, "agent-1", ""),
			ev(1*s, model.LeaderGained, 0, "agent-0", ""), ev(1*s, model.RedisHolder, -1, "", "9Kwn6V"),
			ev(4500*time.Millisecond, model.RedisHolder, -1, "", ""), ev(5*s, model.LeaderLost, 0, "agent-0", ""),
			ev(6*s, model.RunEnded, -1, "", ""),
		}, []string{"Instance identity", "the key held values no agent announced (&#34;9Kwn6V&#34;)", "hello id must be the value it writes",
			"neither here nor judged"}, "1 (max 500ms) · unknown: values no agent announced"},
		{"shared", model.Timeline{
			ev(0, model.InstanceStarted, 0, "shared-id", ""), ev(0, model.InstanceStarted, 1, "shared-id", ""),
			ev(0, model.InstanceStarted, 2, "other", ""),
			ev(1*s, model.LeaderGained, 0, "shared-id", ""), ev(1*s, model.RedisHolder, -1, "", "shared-id"),
			ev(2*s, model.LeaderGained, 2, "other", ""), ev(2500*time.Millisecond, model.LeaderLost, 2, "other", ""),
			ev(3*s, model.RedisHolder, -1, "", ""), ev(3500*time.Millisecond, model.RedisHolder, -1, "", "shared-id"),
			ev(3500*time.Millisecond, model.LeaderGained, 1, "shared-id", ""), ev(6*s, model.RunEnded, -1, "", ""),
		}, []string{"Instance identity", "instances 0 and 1 announced one lease value, &#34;shared-id&#34;", "believed they led at once for 2.5s",
			"| i2 (other) | 2.000s | 2.500s | **500ms** | shared (shared by i0, i1: cannot tell which) |"},
			`2 (max 500ms) · unknown: i0, i1 share "shared-id"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := model.Params{TTL: 2 * s, Wait: s}
			sc := model.Scenario{Name: c.name, Instances: 2, Params: p,
				Expect: []model.Expectation{{Metric: "stale_leadership", Max: "1s"}}}
			res := &verdict.Result{Backend: "process", Scenario: sc, Params: p, Complete: true, Timeline: c.tl,
				Analysis: analysis.Analyze(c.tl, p), TimeScale: 1}
			res.Evaluation = verdict.Evaluate(sc, res.Analysis, nil)
			if res.Verdict != model.Unknown {
				t.Errorf("verdict %s (%v), want unknown", res.Verdict, res.Reasons)
			}
			var md, html bytes.Buffer
			if err := Markdown(&md, res, Options{}); err != nil {
				t.Fatal(err)
			}
			if err := HTML(&html, res, Options{}); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(md.String(), strings.ReplaceAll(w, "&#34;", `"`)) {
					t.Errorf("report.md lacks %q", w)
				}
				if cells := strings.Split(strings.Trim(w, "| "), " | "); strings.HasPrefix(w, "|") {
					w = "<td>" + cells[len(cells)-1] + "</td>" // a Markdown row: its last cell
				}
				if !strings.Contains(html.String(), w) {
					t.Errorf("report.html lacks %q", w)
				}
			}
			if strings.Contains(md.String(), "unknown (9Kwn6V)") {
				t.Error("report.md names a holder the key's value cannot tell")
			}
			dir := t.TempDir()
			if err := WriteSuite(dir, []SuiteRun{{Result: res, Dir: c.name}}); err != nil {
				t.Fatal(err)
			}
			if sum, err := os.ReadFile(filepath.Join(dir, "summary.md")); err != nil || !strings.Contains(string(sum), mdCell(c.stale)) {
				t.Errorf("summary.md (%v) lacks %q:\n%s", err, c.stale, sum)
			}
			if t.Failed() {
				t.Log(md.String())
			}
		})
	}
}
