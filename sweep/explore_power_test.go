package sweep

import (
	"github.com/leaselab/leaselab/model/bounds"

	"context"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election/timing"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

// The explorer's power: against a bound calculator weakened to a formula
// as it stood before the sound-bounds fixes (kept here, in the test, as
// the double), the search finds the violated class unaided, from the
// built-in it derives from, within a CI budget.

// oldBlackholeGap is the pre-fix gap of a failing renewal: the leader
// demotes as early as TTL/2 + Cmin after its last renewal, which reached
// Redis, so the key lives TTL - TTL/2 - Cmin more, then a follower comes
// within Wait. It misses the renewal a partition catches on the wire: it
// applies, the caller times out, and the key outlives the belief by a whole
// TTL.
func oldBlackholeGap(p model.Params) time.Duration {
	p = p.WithDefaults()
	c := p.Client
	attempts := min(max(c.MaxRetries, 0), 1) + 1
	cmin := time.Duration(attempts) * c.ReadTimeout
	if p.OpTimeout > 0 && p.OpTimeout < cmin {
		if c.ContextTimeoutEnabled {
			cmin = p.OpTimeout
		} else {
			cmin = max(c.ReadTimeout, p.OpTimeout)
		}
	}
	return max(0, p.TTL-p.TTL/2+p.Wait-cmin)
}

// oldLatency is the pre-fix latency bound when replies come back within
// the read timeout: renewals every TTL/2 + jitter + 2L keep the key when
// that is within the TTL, so nothing happens. It misses the cold script
// cache: the run's first renewal is EVALSHA, NOSCRIPT, then EVAL, two
// slow round trips.
func oldLatency(p model.Params, l time.Duration) (gap, overlap time.Duration, ok bool) {
	p = p.WithDefaults()
	if l <= 0 || 2*l >= p.Client.ReadTimeout || p.TTL/2+p.Jitter()+2*l > p.TTL {
		return 0, 0, false
	}
	return 0, 0, true
}

// oldSafeGap is the pre-fix safe-mode gap of a failing renewal: the spec's
// gap or margin + Wait, whichever is longer. It misses the renewal the
// guard abandons after it applied.
func oldSafeGap(p model.Params) time.Duration {
	p = p.WithDefaults()
	margin := (timing.Lease{TTL: p.TTL, SafeMargin: p.SafeMargin}).Margin()
	return max(oldBlackholeGap(p), margin+p.Wait)
}

// weakened returns bounds.Predict with one mode's bounds replaced.
func weakened(mode string, set func(p model.Params, s model.FaultSize, pr *bounds.Prediction)) func(model.Params, model.FaultSize) []bounds.Prediction {
	return func(p model.Params, s model.FaultSize) []bounds.Prediction {
		preds := bounds.Predict(p, s)
		for i := range preds {
			if preds[i].Mode == mode {
				set(p, s, &preds[i])
			}
		}
		return preds
	}
}

func TestExploreFindsWeakenedBounds(t *testing.T) {
	cases := []struct {
		class, builtin, metric string
		mutate                 func(*model.Scenario)
		vary                   []Range
		predict                func(model.Params, model.FaultSize) []bounds.Prediction
	}{
		{
			class: "mid-call partition", builtin: "partition-blackhole-tuned", metric: exGap,
			predict: weakened(model.ModePartitionBlackhole, func(p model.Params, _ model.FaultSize, pr *bounds.Prediction) {
				pr.MaxGap, pr.GapFormula = oldBlackholeGap(p), "pre-fix: max(0, TTL/2 + Wait - Cmin)"
			}),
		},
		{
			class: "heal before timeout", builtin: "partition-blackhole", metric: exGap,
			mutate: func(sc *model.Scenario) { sc.Params.Client.MaxRetries = -1 },
			vary:   []Range{{Param: ParamFor, Lo: "500ms", Hi: "2s"}},
			predict: weakened(model.ModePartitionBlackhole, func(p model.Params, _ model.FaultSize, pr *bounds.Prediction) {
				pr.MaxGap, pr.GapFormula = oldBlackholeGap(p), "pre-fix: max(0, TTL/2 + Wait - Cmin)"
			}),
		},
		{
			class: "cold script cache under latency", builtin: "latency", metric: exStale,
			predict: weakened(model.ModeLatency, func(p model.Params, s model.FaultSize, pr *bounds.Prediction) {
				if g, o, ok := oldLatency(p, s.Latency); ok {
					pr.MaxGap, pr.MaxOverlap, pr.GapFormula, pr.OverlapFormula = g, o, "pre-fix: 0", "pre-fix: 0"
				}
			}),
		},
		{
			class: "safe mode, a renewal abandoned after it applied", builtin: "partition-blackhole-safe-elector", metric: exGap,
			predict: weakened(model.ModePartitionBlackhole, func(p model.Params, _ model.FaultSize, pr *bounds.Prediction) {
				pr.MaxGap, pr.GapFormula = oldSafeGap(p), "pre-fix: max(spec gap, margin + Wait)"
			}),
		},
	}
	for _, c := range cases {
		t.Run(c.builtin+"/"+c.metric, func(t *testing.T) {
			base := builtinScenario(t, c.builtin)
			if c.mutate != nil {
				c.mutate(&base)
			}
			s := Space{Base: base, Metrics: []string{c.metric}, Vary: c.vary, Seeds: 2, Budget: 2 * 750}
			r, err := Explore(context.Background(), s, ExploreOptions{Predict: c.predict})
			if err != nil {
				t.Fatal(err)
			}
			w := worstOf(t, r, c.metric)
			t.Logf("%s: %s %v against the weakened bound %v (%s), %s, %d runs, %v", c.class, c.metric, w.Measured, w.Predicted, w.Formula, r.scheduleText(w.Schedule), r.Runs, r.Elapsed)
			if !w.Violated {
				t.Fatalf("%s not found: worst %s %v, weakened bound %v", c.class, c.metric, w.Measured, w.Predicted)
			}
			// The file reproduces the violation on its own, against the
			// same weakened bound.
			sc, err := r.WorstScenario(w)
			if err != nil {
				t.Fatal(err)
			}
			l := &lane{s: r.Space.withDefaults(), o: ExploreOptions{Predict: c.predict}}
			again, err := l.run(w.Schedule, nil)
			if err != nil {
				t.Fatal(err)
			}
			if again[0].Measured != w.Measured || !again[0].Violated || sc.Seed != w.Schedule.Seed {
				t.Fatalf("re-run: %+v, want %v violated", again[0], w.Measured)
			}
		})
	}
}

// knownViolations are the elector-mode built-ins whose bounds the search
// still breaks with today's calculator, by metric, and why: findings to fix
// in the bound calculator, not tolerances. Every other metric of every
// elector-mode built-in must come out clean. None today: the failover
// metric's seven (a floor of TTL + Wait + jitter that left out the old
// leader's demotion) are bounded by Prediction.MaxFailover.
var knownViolations = map[string]map[string]string{}

// With the bound calculator as it is, the search finds no violation over
// the elector-mode built-ins but the known ones, each within a CI budget.
// The ratios are printed (go test -v).
func TestExploreBuiltinsWithinBounds(t *testing.T) {
	for _, e := range scenarios.Builtin() {
		sc := e.Scenario
		if virtual.Refuses(sc) != nil || sc.Mode == model.ModeRunner {
			continue // the elector's bounds: runner mode's cost 10x a run
		}
		t.Run(e.Name, func(t *testing.T) {
			budget := 1000
			if sc.Instances > 5 {
				budget = 250 // thundering-herd: 30 instances, each run costs 10 of the others
			}
			r, err := Explore(context.Background(), Space{Base: sc, Seeds: 2, Budget: budget}, ExploreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range r.Worst {
				switch {
				case !w.Found:
					t.Logf("%-16s not measured: %s", w.Metric, w.Why)
				default:
					t.Logf("%-16s %v of %v: ratio %.3f%s", w.Metric, w.Measured, w.Predicted, w.Ratio, map[bool]string{true: " VIOLATED"}[w.Violated])
				}
			}
			for _, v := range r.Violations() {
				if why, known := knownViolations[e.Name][v.Metric]; known {
					t.Logf("known finding: %s %v > %v: %s", v.Metric, v.Measured, v.Predicted, why)
					continue
				}
				t.Errorf("bound violated: %s %v > %v (%s); schedule %s", v.Metric, v.Measured, v.Predicted, v.Formula, r.scheduleText(v.Schedule))
			}
		})
	}
}
