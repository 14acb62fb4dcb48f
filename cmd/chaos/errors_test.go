package main

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
	"github.com/leaselab/leaselab/sim/batch"
)

// Each CLI mistake is one line saying what is wrong and what was meant,
// exit 2: no usage after it (60 lines of help buried the error), no list cut
// mid-word.
func TestMistakesAreOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "leader-crsh"}, `"leader-crsh" is neither a scenario file nor a built-in scenario; did you mean "leader-crash"?`},
		{[]string{"run", "./nope.yaml"}, "./nope.yaml: scenario file not found"},
		{[]string{"suite", "ci/nope.yml"}, "ci/nope.yml: scenario file not found"},
		{[]string{"run", "leader-crash", "--sed", "3"}, "unknown flag --sed; did you mean --seed? (run 'chaos run --help' for its flags)"},
		{[]string{"bounds", "--ttl", "5"}, "--ttl 5: a duration needs a unit, e.g. 5s (run 'chaos bounds --help' for its flags)"},
		{[]string{"bounds", "--ttl", "five"}, `--ttl "five": not a duration (e.g. 5s, 500ms, 1m30s)`},
		{[]string{"advise", "--max-gap", "10"}, "--max-gap 10: a duration needs a unit, e.g. 10s"},
		{[]string{"list", "--zz"}, "unknown flag --zz (run 'chaos list --help' for its flags)"},
	} {
		code, out, errOut := chaos(t, tc.args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != exitUsage || len(lines) != 1 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant one line with %q", tc.args, code, errOut, tc.want)
		}
	}
	// --help is still the whole usage, exit 0.
	if code, _, errOut := chaos(t, "run", "--help"); code != exitOK || !strings.Contains(errOut, "Usage: chaos run") {
		t.Errorf("run --help: exit %d\n%s", code, errOut)
	}
}

// In chaos run every scenario was asked for: one the backend refused fails
// the command (exit 1, as a lone refused one does), and a run of several
// ends with a line counting them.
func TestRunCountsRefusals(t *testing.T) {
	passed := sim.SuiteRun{Scenario: model.Scenario{Name: "pause"}, Result: &verdict.Result{Evaluation: verdict.Evaluation{Verdict: model.Pass}}}
	refused := sim.SuiteRun{Scenario: model.Scenario{Name: "leader-crash"}, Refused: errors.New("process: the agent lacks runner")}
	var out strings.Builder
	err := runVerdict(context.Background(), []batch.Outcome{{SuiteRun: passed}, {SuiteRun: refused}}, &out)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFailed || !strings.Contains(err.Error(), "1 of 2 scenarios refused by the backend, not run: leader-crash") {
		t.Errorf("a refusal beside a pass: %v", err)
	}
	if want := "run: 2 scenarios: 1 passed, 0 failed, 0 unknown, 1 refused (leader-crash: not run)\n"; out.String() != want {
		t.Errorf("summary %q; want %q", out.String(), want)
	}
	if err := runVerdict(context.Background(), []batch.Outcome{{SuiteRun: passed}}, io.Discard); err != nil {
		t.Errorf("one pass: %v", err)
	}
	err = runVerdict(context.Background(), []batch.Outcome{{SuiteRun: refused}}, io.Discard)
	if !errors.As(err, &ee) || ee.code != exitFailed {
		t.Errorf("a lone refusal: %v", err)
	}
	// Beside a run that did not pass, the last line still names the
	// refusal (it used to count only the unknown).
	unknown := sim.SuiteRun{Scenario: model.Scenario{Name: "script-flush"}, Result: &verdict.Result{Evaluation: verdict.Evaluation{Verdict: model.Unknown}}}
	err = runVerdict(context.Background(), []batch.Outcome{{SuiteRun: unknown}, {SuiteRun: refused}}, io.Discard)
	if !errors.As(err, &ee) || ee.code != exitFailed || !strings.Contains(err.Error(), "1 unknown") || !strings.Contains(err.Error(), "1 of 2 scenarios refused by the backend, not run: leader-crash") {
		t.Errorf("a refusal beside an unknown: %v", err)
	}
}
