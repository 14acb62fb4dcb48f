package main

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
)

// FuzzRunValidation fuzzes what a run validates: the parsed scenario, with
// --time-scale applied, as the CLI checks it before anything runs. What it
// accepts must be runnable: a positive length within model.MaxRunLength, every
// scaled fault time inside it, and a reproducing command on one line.
func FuzzRunValidation(f *testing.F) {
	quick, _ := os.ReadFile("testdata/quick.yaml")
	for _, k := range []float64{1, 0.2, 1e-300, math.NaN(), math.Inf(1), 1000, 100, -1, 0.01} {
		f.Add(quick, k)
	}
	f.Add([]byte("duration: 1000000h\ntime_scale: 100\n"), 0.0)
	f.Add([]byte("duration: 2562047h\nrecovery: 2562047h\n"), 1.0)
	f.Add([]byte("duration: 10s\nfaults:\n  - {at: 1s, for: 2562047h, kind: pause, target: leader}\n"), 100.0)
	f.Add([]byte("name: 'a b; rm -rf'\nduration: 2s\n"), 1.0)
	f.Fuzz(func(t *testing.T, data []byte, k float64) {
		sc, err := scenarios.Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		fl := runFlags{timeScale: k, set: map[string]bool{}}
		if k != 0 {
			fl.set["time-scale"] = true
		}
		if err := checkTimeScale(k); k != 0 && err == nil && (math.IsNaN(k) || k < model.MinTimeScale || k > model.MaxTimeScale) {
			t.Fatalf("time scale %v accepted", k)
		}
		scs := []model.Scenario{sc}
		if err := fl.override(scs); err != nil {
			return
		}
		n := scs[0].Length()
		if n <= 0 || n > model.MaxRunLength {
			t.Fatalf("accepted a run of %v (scale %v)", n, k)
		}
		e := scs[0].WithDefaults().Scaled()
		for i, f := range e.Faults {
			if f.At < 0 || f.For < 0 || f.At > n || f.At+f.For < f.At {
				t.Fatalf("faults[%d] at %v for %v in a run of %v", i, f.At, f.For, n)
			}
		}
		if cmd := scenarios.Command(scs[0], 1, k, "real"); strings.ContainsAny(cmd, "\n\r") {
			t.Fatalf("reproduce command over lines: %q", cmd)
		}
	})
}
