package batch

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/reports/live"
	"github.com/leaselab/leaselab/sim/real"
	"github.com/leaselab/leaselab/sim/virtual"
)

// quick is a short elector scenario with a leader crash: milliseconds on
// the virtual backend.
func quick(name string) model.Scenario {
	return model.Scenario{Name: name, Instances: 3, Duration: 2 * time.Second, Recovery: 1500 * time.Millisecond,
		Params: model.Params{TTL: 300 * time.Millisecond, Wait: 400 * time.Millisecond, JitterMS: 5},
		Faults: []model.Fault{{At: 800 * time.Millisecond, Kind: model.FaultCrash, Target: model.Target{Role: "leader"}}}}
}

// A batch writes each run's reports under Out/<name>/<run-id>/ with a
// latest link, prints each verdict and report path, and keeps a refusal
// as a refusal with no directory; SuiteRuns lists them for the suite's
// index, relative to Out or as they are.
func TestRunWritesEachReport(t *testing.T) {
	out := t.TempDir()
	refused := quick("refused-one")
	var shown bytes.Buffer
	outs := Run(context.Background(), refusing{virtual.Backend{}, "refused-one"}, []model.Scenario{quick("one"), refused, quick("")},
		Options{Out: out, View: live.Options{Out: &shown, Quiet: true}})
	if len(outs) != 3 {
		t.Fatalf("%d outcomes for 3 scenarios", len(outs))
	}
	for _, i := range []int{0, 2} {
		o := outs[i]
		if o.Result == nil || o.Err != nil || o.Dir == "" {
			t.Fatalf("outcome %d: result %v, err %v, dir %q", i, o.Result != nil, o.Err, o.Dir)
		}
		want := filepath.Join(out, Named(o.Scenario).Name, o.Result.RunID)
		if o.Dir != want {
			t.Errorf("outcome %d in %s, want %s", i, o.Dir, want)
		}
		if _, err := os.Stat(filepath.Join(o.Dir, "report.html")); err != nil {
			t.Errorf("outcome %d: %v", i, err)
		}
		if l, err := os.Readlink(filepath.Join(filepath.Dir(o.Dir), "latest")); err != nil || l != o.Result.RunID {
			t.Errorf("outcome %d: latest -> %q, %v", i, l, err)
		}
		if !strings.Contains(shown.String(), "  report: "+filepath.Join(o.Dir, "report.html")) {
			t.Errorf("outcome %d's report path not shown:\n%s", i, shown.String())
		}
	}
	if outs[2].Scenario.Name != "scenario" {
		t.Errorf("the unnamed scenario ran as %q, want \"scenario\"", outs[2].Scenario.Name)
	}
	if outs[1].Refused == nil || outs[1].Dir != "" || outs[1].Result != nil {
		t.Errorf("the refused scenario: refused %v, dir %q", outs[1].Refused, outs[1].Dir)
	}
	rel := SuiteRuns(outs, out)
	if rel[0].Dir != filepath.Join("one", outs[0].Result.RunID) || rel[1].Refused == "" || rel[1].Dir != "" || rel[2].Name != "scenario" {
		t.Errorf("suite runs relative to out: %+v", rel)
	}
	if abs := SuiteRuns(outs, ""); abs[0].Dir != outs[0].Dir {
		t.Errorf("suite runs as they are: %q, want %q", abs[0].Dir, outs[0].Dir)
	}
	if err := Verdict(outs); err != nil {
		t.Errorf("two passes and a refusal: %v", err)
	}
}

// report.md's plot: inline, linked under the published URL (each part
// escaped, the base's trailing slash dropped), or beside the report.
func TestMarkdownImage(t *testing.T) {
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{}, ""},
		{Options{MarkdownInline: true, MarkdownImageBase: "http://x"}, "inline"},
		{Options{MarkdownImageBase: "https://ci.example/art/"}, "https://ci.example/art/a%20b/run%2F1"},
	} {
		if got := tt.o.markdownImage("a b", "run/1"); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.o, got, tt.want)
		}
	}
}

// Cancelled before it starts, a batch starts nothing and says so.
func TestRunInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var shown bytes.Buffer
	outs := Run(ctx, virtual.Backend{}, []model.Scenario{quick("a"), quick("b")}, Options{Out: t.TempDir(), View: live.Options{Out: &shown}})
	for _, o := range outs {
		if !o.NotStarted || o.Dir != "" {
			t.Errorf("%s: not started %v, dir %q", o.Scenario.Name, o.NotStarted, o.Dir)
		}
	}
	if !strings.Contains(shown.String(), "NOT STARTED") {
		t.Errorf("the view does not list them:\n%s", shown.String())
	}
	if err := Verdict(outs); err == nil {
		t.Error("an interrupted batch has a passing verdict")
	}
}

// A suite's last lines: the backend, the count, the time (to the
// millisecond on a computing backend, to the second on one that waits),
// the refusals, the summary's path, then the totals.
func TestSummary(t *testing.T) {
	suite := []reports.SuiteRun{{Name: "a", Refused: "no runner mode"}, {Name: "b", NotStarted: true}}
	var b bytes.Buffer
	Summary(&b, suite, virtual.Backend{}, 1234567*time.Microsecond, "out/index.html")
	if first := strings.SplitN(b.String(), "\n", 2)[0]; first != "suite: 2 scenarios on the virtual backend in 1.235s, 1 refused (not run; each says why above); summary: out/index.html" {
		t.Errorf("computed: %q", first)
	}
	var totals bytes.Buffer
	live.Totals(&totals, suite)
	if !strings.HasSuffix(b.String(), totals.String()) {
		t.Errorf("the totals do not follow:\n%s", b.String())
	}
	b.Reset()
	Summary(&b, suite[1:], real.Backend{}, 1600*time.Millisecond, "i.html")
	if first := strings.SplitN(b.String(), "\n", 2)[0]; first != "suite: 1 scenarios on the real backend in 2s; summary: i.html" {
		t.Errorf("waited: %q", first)
	}
}

// refusing is the virtual backend refusing the scenario of one name, as a
// backend refuses what it cannot run.
type refusing struct {
	virtual.Backend
	name string
}

func (b refusing) Refuses(sc model.Scenario) error {
	if sc.Name == b.name {
		return errors.New("not this one")
	}
	return b.Backend.Refuses(sc)
}
