package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/scenarios"
)

// TestInitIsACIGate: chaos init's suite for short timings validates, and
// chaos suite runs it on the real backend (real redis-server, real
// Toxiproxy) and passes: a gate that is green on day one for sound timings.
func TestInitIsACIGate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chaos-scenarios")
	code, out, errOut := chaos(t, "init", dir, "--ttl", "1s", "--wait", "1200ms", "--read-timeout", "500ms", "--max-gap", "3s")
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
			m[e.Metric] = e.Max
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
