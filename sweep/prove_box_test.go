package sweep

import (
	"context"
	"testing"
	"time"
)

func TestProveBoxSmoke(t *testing.T) {
	sc := builtinScenario(t, "partition-blackhole")
	at, err := ParseProveRange("at=2.4s..2.7s")
	if err != nil {
		t.Fatal(err)
	}
	fr, _ := ParseProveRange("for=9s..11s")
	start := time.Now()
	res, err := Prove(context.Background(), ProveSpace{Base: sc, Vary: []Range{at, fr}}, ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d cells, %d runs, %v, complete %v %s", res.Segments, res.Runs, time.Since(start), res.Complete, res.Incomplete)
	for _, p := range res.Proofs {
		t.Logf("%+v", p)
	}
}
