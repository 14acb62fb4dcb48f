package sweep

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestProveBoxDebug(t *testing.T) {
	sc := builtinScenario(t, os.Getenv("BOX_NAME"))
	var vs []Range
	for _, a := range strings.Fields(os.Getenv("BOX_VARY")) {
		r, err := ParseProveRange(a)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, r)
	}
	start := time.Now()
	res, err := Prove(context.Background(), ProveSpace{Base: sc, Vary: vs}, ProveOptions{Progress: func(f float64) { t.Logf("%v coverage %.6f", time.Since(start).Round(time.Second), f) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cells, %d runs, %v, complete %v %s", res.Segments, res.Runs, time.Since(start), res.Complete, res.Incomplete)
	for _, p := range res.Proofs {
		t.Logf("%s worst %v at %v,%v sup %v bound %v %s excess %v varies %v %s", p.Metric, p.Worst, p.At, p.At2, p.Sup, p.Bound, p.Verdict, p.Excess, p.BoundVaries, p.Why)
	}
}
