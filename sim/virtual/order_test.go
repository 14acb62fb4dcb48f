package virtual_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/virtual"
)

// pathOf runs sc with the path hooks and returns its path's signature:
// the pops, and the sign of every comparison.
func pathOf(t *testing.T, sc model.Scenario, partial bool) (string, []byte) {
	t.Helper()
	var pops []virtual.Pop
	var signs []int
	o := virtual.Options{
		PartialOrder: partial,
		OnPop: func(p virtual.Pop) {
			p.At = 0
			pops = append(pops, p)
		},
		OnCompare: func(a, b time.Duration) { signs = append(signs, cmp.Compare(a, b)) },
	}
	res, err := virtual.Run(sc, o)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := json.Marshal(res.Analysis.Summary)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(pops, signs), sum
}

// TestPartialOrder: along the second follower's start, the followers'
// attempts cross again and again: each crossing is a new full order, but
// not a new partial order (two attempts that only read the key do not
// depend on each other); the hooks change nothing a run measures; and the
// partial order is told in one piece, owners first.
func TestPartialOrder(t *testing.T) {
	base := builtin(t, "partition-blackhole")
	at := func(s2 time.Duration) model.Scenario {
		sc := base
		sc.Starts = []time.Duration{0, 3950 * time.Millisecond, s2}
		return sc
	}
	full, partial := map[string]bool{}, map[string]bool{}
	for k := range 100 {
		sc := at(4*time.Second + time.Duration(k)*time.Millisecond)
		f, _ := pathOf(t, sc, false)
		p, _ := pathOf(t, sc, true)
		full[f], partial[p] = true, true
	}
	t.Logf("second follower's start 4s..4.099s by 1ms: %d full orders, %d partial orders", len(full), len(partial))
	if len(partial) >= len(full) {
		t.Errorf("%d partial orders for %d full ones: want fewer", len(partial), len(full))
	}
	a := at(4 * time.Second)
	_, sumA := pathOf(t, a, false)
	_, sumPA := pathOf(t, a, true)
	plain := run(t, a, virtual.Options{})
	sum, err := json.Marshal(plain.Analysis.Summary)
	if err != nil {
		t.Fatal(err)
	}
	if string(sum) != string(sumA) || string(sum) != string(sumPA) {
		t.Errorf("the hooks change the run: %s without, %s with the full order, %s with the partial", sum, sumA, sumPA)
	}

	var pops []virtual.Pop
	var comps int
	_, err = virtual.Run(a, virtual.Options{PartialOrder: true,
		OnPop:     func(p virtual.Pop) { pops = append(pops, p) },
		OnCompare: func(time.Duration, time.Duration) { comps++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	owners := slices.IndexFunc(pops, func(p virtual.Pop) bool { return p.Kind == virtual.PopOwner })
	orders := slices.IndexFunc(pops, func(p virtual.Pop) bool { return p.Kind == virtual.PopOrder })
	if owners != 0 || orders < 0 || comps == 0 {
		t.Errorf("the partial order starts with pop %d of kind PopOwner (want 0), tells orders from pop %d (want some), %d comparisons", owners, orders, comps)
	}
}
