package sweep_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sweep"
)

// The same seeds give the same distribution.json, byte for byte, whatever
// order the workers finish in; the worst run's report is kept beside it,
// and the replay commands name the seed and the backend.
func TestSeedsDeterministic(t *testing.T) {
	e, ok := scenarios.Lookup("partition-blackhole")
	if !ok {
		t.Fatal("no built-in partition-blackhole")
	}
	sc := e.Scenario.WithDefaults()
	sc.Seed = 11
	var files [2][]byte
	for i := range files {
		out := t.TempDir()
		done := 0
		d, dir, _, err := sweep.Seeds(context.Background(), sc, sweep.SeedsOptions{Runs: 300, Out: out, Done: func() { done++ },
			Command: func(seed int64, backend string) string {
				return fmt.Sprintf("replay --seed %d --backend %s", seed, backend)
			}})
		if err != nil {
			t.Fatal(err)
		}
		if done != 300 || d.Runs != 300 {
			t.Fatalf("%d runs done, %d in the distribution; want 300", done, d.Runs)
		}
		if want := filepath.Join(out, "partition-blackhole", "runs-11-310"); dir != want {
			t.Fatalf("written to %s, want %s", dir, want)
		}
		if files[i], err = os.ReadFile(filepath.Join(dir, reports.FileDistJSON)); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{reports.FileDistMD, reports.FileDistHTML, reports.FileDistPNG, "worst/report.html", "worst/result.json"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("missing %s", f)
			}
		}
		if l, err := os.Readlink(filepath.Join(out, "partition-blackhole", "latest-runs")); err != nil || l != "runs-11-310" {
			t.Errorf("latest-runs -> %q (%v)", l, err)
		}
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("two sweeps of the same seeds wrote different distribution.json")
	}
	var d reports.Distribution
	if err := json.Unmarshal(files[0], &d); err != nil {
		t.Fatal(err)
	}
	if d.Runs != 300 || d.FirstSeed != 11 || d.LastSeed != 310 || d.Verdicts.Pass+d.Verdicts.Fail+d.Verdicts.Unknown != 300 {
		t.Fatalf("distribution: %d runs, seeds %d–%d, verdicts %+v", d.Runs, d.FirstSeed, d.LastSeed, d.Verdicts)
	}
	for _, m := range d.Metrics {
		if m.Measured > 0 && !(m.Min <= m.P50 && m.P50 <= m.P90 && m.P90 <= m.P99 && m.P99 <= m.Max) {
			t.Errorf("%s: quantiles out of order: %+v", m.Name, m)
		}
		if m.Name == "max_overlap" && (m.WorstSeed < 11 || m.WorstSeed > 310 ||
			m.ReproduceReal != fmt.Sprintf("replay --seed %d --backend real", m.WorstSeed) || !strings.HasSuffix(m.Reproduce, "--backend virtual")) {
			t.Errorf("max_overlap: worst seed %d, replays %q, %q", m.WorstSeed, m.Reproduce, m.ReproduceReal)
		}
	}
}

// A cancelled distribution in which no run ended is none, with ctx's error.
func TestSeedsCancelled(t *testing.T) {
	e, _ := scenarios.Lookup("partition-blackhole")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d, dir, _, err := sweep.Seeds(ctx, e.Scenario.WithDefaults(), sweep.SeedsOptions{Runs: 10, Out: t.TempDir()})
	if d != nil || dir != "" || err != context.Canceled {
		t.Fatalf("Seeds = %v, %q, %v; want nothing and context.Canceled", d, dir, err)
	}
}
