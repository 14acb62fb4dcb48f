package reports

import (
	"github.com/leaselab/leaselab/model/bounds"

	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// The bounds table: the parameters, one row per mode with its bounds and
// the spec's claims; a mode whose size was not given says how to give it.
// The formulas follow, with a search's worst case where one ran.
func TestBounds(t *testing.T) {
	p := model.Params{TTL: 2 * time.Second, Wait: 3 * time.Second, JitterMS: -1}.WithDefaults()
	b := Bounds{Params: p, Predictions: bounds.PredictGiven(p, model.FaultSize{Pause: 8 * time.Second}),
		SizeHint: map[string]string{model.ModeLatency: "--latency 200ms"},
		Explored: map[string]Explored{model.ModePause: {Runs: 40, Gap: "1s of 2s", Overlap: "6s of 8s"}}}
	var table bytes.Buffer
	if err := b.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	s := table.String()
	if !strings.HasPrefix(s, "TTL 2s, Wait 3s, jitter none, ") {
		t.Errorf("parameters line: %q", strings.SplitN(s, "\n", 2)[0])
	}
	for _, re := range []string{
		`(?m)^MODE +MAX GAP +MAX OVERLAP +MAX FAILOVER +SPEC CLAIM`,
		`(?m)^latency +not given \(--latency 200ms\) +— +— +—$`,
		`(?m)^pause +[0-9.]+s +[0-9.]+s +[0-9.]+s +overlap exceeded$`, // an 8 s pause outlasts the 2 s TTL
		`(?m)^leader-crash +[0-9.]+s +0s +[0-9.]+s +holds$`,
	} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("no line matching %s in\n%s", re, s)
		}
	}
	var f bytes.Buffer
	b.WriteFormulas(&f)
	if !strings.HasPrefix(f.String(), "\nFormulas:\n") || !strings.Contains(f.String(), "\nlatency (size not given; shown with --latency 200ms)\n") ||
		!strings.Contains(f.String(), "\npause\n  gap:     ") || !strings.Contains(f.String(), "  explored (40 runs, virtual): gap 1s of 2s; overlap 6s of 8s\n") {
		t.Errorf("formulas:\n%s", f.String())
	}
	if strings.Count(f.String(), "explored (") != 1 {
		t.Error("an explored line for a mode the search did not run")
	}
}

// TestBoundsChores: each mode's formulas say what its overlap bound means
// for the TaskRunner's chores: duplicate chores per failover
// (bounds.ChoreBoundFor, a resume's run more after a pause), unknown under
// a clock fault, and no bound for stale chores and repeated tasks.
func TestBoundsChores(t *testing.T) {
	p := model.Params{TTL: 2 * time.Second, Wait: 3 * time.Second, JitterMS: -1}.WithDefaults()
	b := Bounds{Params: p, Predictions: bounds.PredictGiven(p, model.FaultSize{Pause: 8 * time.Second, ClockRate: 0.5})}
	var f bytes.Buffer
	b.WriteFormulas(&f)
	s := f.String()
	for _, re := range []string{
		`(?m)^leader-crash\n(?:  .*\n)*  chores:  duplicate chores ≤ 3 per failover: 3 chores × \(1 failover\(s\) × \(2·⌈overlap 0s / interval 1s⌉ \+ 1\)\) = 3; stale chores, repeated tasks: unknown \(no bound known\)$`,
		`(?m)^pause\n(?:  .*\n)*  chores:  duplicate chores ≤ [0-9]+ per failover: .* \+ 1 resumed\) = [0-9]+;`,
		`(?m)^clock-drift\n(?:  .*\n)*  chores:  duplicate chores unknown \(the chore ticker runs on the faulty clock\);`,
	} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("no lines matching %s in\n%s", re, s)
		}
	}
}
