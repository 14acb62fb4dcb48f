package main

import (
	"github.com/leaselab/leaselab/model/bounds"

	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	reportspkg "github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sweep"
)

// TestInitIsACIGate: chaos init's suite for short timings validates, and
// chaos suite runs it on the real backend (real redis-server, real
// Toxiproxy) and passes: a gate that is green on day one for sound timings.
func TestInitIsACIGate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chaos-scenarios")
	// A tolerance for both claims: at these timings, with each fault at its
	// worst phase, partition-refuse holds two leaders for 1.17 s of a 1 s
	// TTL, which the claim gate (TestInitGatesOnPromises) fails.
	code, out, errOut := chaos(t, "init", dir, "--ttl", "1s", "--wait", "1200ms", "--read-timeout", "500ms", "--max-gap", "3s", "--max-overlap", "2s")
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	if strings.Contains(out, "limits below the predicted worst case") {
		t.Errorf("a 3s gap limit is above every predicted gap here, yet init warns:\n%s", out)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) != 10 {
		t.Fatalf("%d files written (%v), want 10\n%s", len(files), err, out)
	}
	if code, out, errOut := chaos(t, append([]string{"validate"}, files...)...); code != exitOK {
		t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
	}
	sc, err := scenarios.Load(filepath.Join(dir, "leader-crash.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.Params.TTL.String() != "1s" || sc.Params.Client.ReadTimeout.String() != "500ms" || sc.Expect[0].Max != "3s" {
		t.Errorf("leader-crash.yaml: TTL %v, read timeout %v, %s %s; want the flags' timings and limit",
			sc.Params.TTL, sc.Params.Client.ReadTimeout, sc.Expect[0].Metric, sc.Expect[0].Max)
	}
	reports := t.TempDir()
	code, out, errOut = chaos(t, "suite", dir, "--out", reports, "--junit", filepath.Join(reports, "junit.xml"), "--quiet")
	if code != exitOK {
		t.Fatalf("chaos suite of the starter suite on the real backend: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "10 passed") {
		t.Errorf("want 10 passed:\n%s", out)
	}
}

// TestInitFromAdvice: the suite of an advice keeps its constraints for the
// failure modes of its envelope, and passes on the virtual backend. (Its
// safe-mode partition-blackhole-replies failed here, measured 3.07 s against
// a predicted 1.81 s on both backends, until the bound was fixed.)
func TestInitFromAdvice(t *testing.T) {
	adv := t.TempDir()
	if code, _, errOut := chaos(t, "advise", "--max-gap", "12s", "--max-overlap", "0s", "--latency-p99", "2ms", "--latency-max", "50ms",
		"--max-pause", "1s", "--partitions", "blackhole,refuse,reset", "--confirm=false", "--out", adv); code != exitOK {
		t.Fatalf("advise: exit %d\n%s", code, errOut)
	}
	dir := filepath.Join(t.TempDir(), "suite")
	if code, _, errOut := chaos(t, "init", dir, "--from-advice", filepath.Join(adv, "advice.json")); code != exitOK {
		t.Fatalf("init --from-advice: exit %d\n%s", code, errOut)
	}
	expect := func(name string) map[string]string {
		sc, err := scenarios.Load(filepath.Join(dir, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, e := range sc.Expect {
			m[string(e.Metric)] = e.Max
		}
		return m
	}
	if got := expect("partition-refuse"); got["max_gap"] != "12s" || got["max_overlap"] != "0s" {
		t.Errorf("partition-refuse (in the envelope) expects %v, want the advice's 12s and 0s", got)
	}
	if got := expect("redis-restart"); got["max_overlap"] != "predicted" {
		t.Errorf("redis-restart (outside the envelope) expects %v, want predicted", got)
	}
	if got := expect("pause"); got["max_overlap"] != "0s" {
		t.Errorf("pause (1s, in the envelope) expects %v, want 0s", got)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if code, out, errOut := chaos(t, append([]string{"validate"}, files...)...); code != exitOK || len(files) != 10 {
		t.Fatalf("validate %d files: exit %d\n%s%s", len(files), code, out, errOut)
	}
	code, out, errOut := chaos(t, "suite", dir, "--backend", "virtual", "--out", t.TempDir(), "--quiet")
	if code != exitOK {
		t.Fatalf("the advice's suite on the virtual backend: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestInitRefuses(t *testing.T) {
	dir := t.TempDir()
	advice := filepath.Join(dir, "advice.json")
	if err := os.WriteFile(advice, []byte(`{"constraints": {"max_gap": 12000000000}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"init"}, "name one directory"},
		{[]string{"init", dir, "--from-advice", advice, "--ttl", "2s"}, "drop the timing flags"},
		{[]string{"init", dir, "--from-advice", filepath.Join(dir, "none.json")}, "reading the advice"},
		{[]string{"init", dir, "--max-gap", "ttl + wiat"}, "leader-crash.yaml:"},
		{[]string{"init", dir, "--ttl", "-1s"}, "ttl"},
	} {
		code, _, errOut := chaos(t, tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("chaos %v: exit %d, want 2 saying %q\n%s", tt.args, code, tt.want, errOut)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.yaml")); len(files) != 0 {
		t.Errorf("refused inits wrote %v", files)
	}
	if code, _, errOut := chaos(t, "init", dir); code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	code, _, errOut := chaos(t, "init", dir)
	if code != exitUsage || !strings.Contains(errOut, "exists (--force overwrites it)") {
		t.Errorf("init over an existing suite: exit %d, want 2 saying it exists\n%s", code, errOut)
	}
	if code, _, errOut := chaos(t, "init", dir, "--force", "--ttl", "2s"); code != exitOK {
		t.Errorf("init --force: exit %d\n%s", code, errOut)
	}
}

// TestInitGatesOnPromises: with no tolerance stated, a starter suite
// checks the spec's claims, and at timings that break one it fails naming
// the claim. At TTL 2 s, Wait 3 s it passed 10 of 10 with 6.05 s of two
// leaders, every limit being the prediction.
func TestInitGatesOnPromises(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errOut := chaos(t, "init", dir, "--ttl", "2s", "--wait", "3s")
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "split brain ≤ TTL") || !strings.Contains(out, "--max-overlap") {
		t.Errorf("init does not say the suite gates on the spec's claims, nor how to state a tolerance:\n%s", out)
	}
	code, out, errOut = chaos(t, "suite", dir, "--backend", "virtual", "--out", t.TempDir(), "--quiet")
	if code != exitFailed {
		t.Fatalf("the 2s/3s starter suite: exit %d, want %d (failed)\n%s\n%s", code, exitFailed, out, errOut)
	}
	if !strings.Contains(out, "partition-blackhole") || !strings.Contains(out, "split-brain") {
		t.Errorf("the failure does not name partition-blackhole and the split-brain claim:\n%s", out)
	}
	// A tolerance stated for both metrics replaces the claims.
	dir2 := filepath.Join(t.TempDir(), "s")
	if code, _, errOut := chaos(t, "init", dir2, "--ttl", "2s", "--wait", "3s", "--max-overlap", "10s", "--max-gap", "20s"); code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	sc, err := scenarios.Load(filepath.Join(dir2, "partition-blackhole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.StrictClaims {
		t.Errorf("with both tolerances stated the claims still gate")
	}
}

// TestInitAtTheWorstPhase: each starter fault is placed where explore
// finds its worst case for the timings. At TTL 5 s, Wait 6 s, read timeout
// 5 s the fault at 5 s measured 3.07 s of overlap; the built-in's 6.25 s
// measures 5.55 s.
func TestInitAtTheWorstPhase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, _, errOut := chaos(t, "init", dir, "--ttl", "5s", "--wait", "6s", "--read-timeout", "5s", "--max-overlap", "10s", "--max-gap", "20s")
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, "partition-blackhole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "chaos explore") {
		t.Errorf("the file does not say how its phase was found:\n%s", data)
	}
	reports := t.TempDir()
	code, out, errOut := chaos(t, "run", filepath.Join(dir, "partition-blackhole.yaml"), "--backend", "virtual", "--out", reports, "--quiet")
	if code != exitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	res, err := reportspkg.ReadResult(filepath.Join(reports, "partition-blackhole", "latest", "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Analysis.Summary.MaxOverlap; got < 5*time.Second {
		t.Errorf("partition-blackhole at its written phase: overlap %v, want ≥ 5s", got)
	}
}

// init's warnings are the run's own limits: every starter whose predicted
// worst case at its placed phase is above --max-overlap is named, and those
// are the ones the suite fails. partition-blackhole-replies, placed at the
// first (cold) renewal, showed the warm 5.06 s and was not named; the run
// judged it against 7.565 s and measured 7.543 s.
func TestInitWarnsWhatTheSuiteFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errOut := chaos(t, "init", dir, "--max-overlap", "6s")
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	for _, name := range []string{"partition-blackhole", "partition-blackhole-requests", "partition-blackhole-replies"} {
		if !strings.Contains(out, "  "+name+": predicted max_overlap 7.565s > your 6s") {
			t.Errorf("init does not warn about %s:\n%s", name, out)
		}
	}
	if n := strings.Count(out, "> your 6s"); n != 3 {
		t.Errorf("%d warnings, want 3:\n%s", n, out)
	}
}

// init checks its own bounds with the search that places each fault: the
// output says the search stayed within every predicted bound, or names the
// schedule that beat one and writes it as a scenario file under
// DIR/search, outside the suite's files.
func TestInitSelfCheck(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	code, out, errOut := chaos(t, "init", dir)
	if code != exitOK {
		t.Fatalf("init: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "self-check: a search of each scenario's schedule") || !strings.Contains(out, "stayed within every predicted bound") {
		t.Errorf("init does not say it checked its bounds:\n%s", out)
	}
	// A bound made too low (the blackhole's overlap at 1 s, which stale leadership takes too) is beaten, named
	// and written.
	sc, err := scenarios.Open("partition-blackhole")
	if err != nil {
		t.Fatal(err)
	}
	low := func(p model.Params, s model.FaultSize) []bounds.Prediction {
		preds := bounds.Predict(p, s)
		for i := range preds {
			if preds[i].Mode == model.ModePartitionBlackhole {
				preds[i].MaxOverlap, preds[i].OverlapFormula = time.Second, "too low: 1s"
			}
		}
		return preds
	}
	res, err := sweep.Explore(context.Background(), sweep.Space{Base: sc, Budget: 200, Seeds: 1}, sweep.ExploreOptions{Predict: low})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	found := filepath.Join(t.TempDir(), "search")
	if err := selfCheck([]*sweep.ExploreResult{res}, found, &buf, io.Discard); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(found, "partition-blackhole", sweep.WorstFile("max_overlap"))
	if !strings.Contains(buf.String(), "finding: the search beat the max_overlap formula (partition-blackhole: too low: 1s)") ||
		!strings.Contains(buf.String(), "self-check: the search beat 2 predicted bound") || !strings.Contains(buf.String(), file) {
		t.Errorf("self-check output:\n%s", buf.String())
	}
	if _, err := scenarios.Load(file); err != nil {
		t.Errorf("the finding's scenario file: %v", err)
	}
}
