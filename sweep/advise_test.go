package sweep_test

import (
	"github.com/leaselab/leaselab/model/bounds"

	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
	"github.com/leaselab/leaselab/sweep"
)

// envelope: blackhole, refuse and reset partitions, 1s pauses, 50ms latency
// spikes (2ms p99), clocks 1% slow.
func envelope() sweep.Envelope {
	return sweep.Envelope{LatencyP99: 2 * time.Millisecond, LatencyMax: 50 * time.Millisecond, MaxPause: time.Second,
		MaxClockDrift: 0.01, Partitions: []string{"blackhole", "refuse", "reset"}}
}

// TestAdviseKnownAnswer: max gap 12s, no overlap, no stale writes. By hand:
// a crash leaves a gap of TTL + Wait, which the 20% target margin keeps
// within 9.6s. The longest candidate TTL with a Wait of at least TTL/4 is
// 6s (6 + 1.5 = 7.5s; 8 + 2 = 10s is over). A 1s pause needs
// TTL/2 + jitter + 1s <= TTL, i.e. TTL >= 2.01s: 6s does. No overlap and no
// stale writes prefer safe mode, under which go-redis's defaults (5s read
// timeout, 3 retries) keep every partition overlap at 0.
func TestAdviseKnownAnswer(t *testing.T) {
	c := sweep.Constraints{MaxGap: 12 * time.Second, MaxOverlap: 0, MaxStale: sweep.NoLimit, NoStaleWrites: true}
	a, err := sweep.Advise(context.Background(), c, envelope(), sweep.AdviseOptions{Confirm: true, Seeds: 2, Budget: 1000})
	if err != nil {
		t.Fatal(err)
	}
	p := a.Params
	if !a.Feasible || p.TTL != 6*time.Second || p.Wait != 1500*time.Millisecond || !p.Safe ||
		p.Client.ReadTimeout != 5*time.Second || p.Client.MaxRetries != 3 || p.OpTimeout != 0 {
		t.Fatalf("feasible %v, params %+v", a.Feasible, p)
	}
	gap := a.Margins[0]
	if gap.Predicted != 7500*time.Millisecond || gap.Mode != "leader-crash" || gap.Headroom != 4500*time.Millisecond {
		t.Errorf("gap margin %+v", gap)
	}
	if !a.Confirmed {
		t.Fatal("not confirmed")
	}
	// The search may find a model error (a measurement above its
	// prediction): that is a failed confirmation, never "confirmed", even
	// when the constraints themselves held.
	modelError := false
	for _, m := range a.Modes {
		if m.Measured == nil {
			continue
		}
		if len(m.Measured.Exceeds) > 0 {
			modelError = true
			t.Logf("model error found by the confirmation: %s: %v", m.Mode, m.Measured.Exceeds)
		}
		if m.Measured.MaxGap > c.MaxGap || m.Measured.MaxOverlap > c.MaxOverlap {
			t.Errorf("%s breaks the constraints: gap %v, overlap %v", m.Mode, m.Measured.MaxGap, m.Measured.MaxOverlap)
		}
	}
	if a.ConfirmedOK == modelError {
		t.Errorf("confirmed ok %v with a model error %v", a.ConfirmedOK, modelError)
	}
	for _, sc := range a.Scenarios {
		// The confirming scenarios check the user's constraints.
		if len(sc.Expect) != 2 || sc.Expect[0].Metric != "max_gap" || sc.Expect[0].Max != "12s" || sc.Expect[1].Max != "0s" {
			t.Errorf("%s: expectations %+v, want the constraints", sc.Name, sc.Expect)
		}
	}
	// The pause edge: overlap starts at P = TTL/2 - jitter = 2.995s.
	if a.BreaksFirst != "pause" || a.Breaks[0].Threshold != "2.995s" {
		t.Errorf("breaks first %q, %+v", a.BreaksFirst, a.Breaks[0])
	}
	if len(a.Scenarios) == 0 {
		t.Error("no confirming scenarios")
	}
	md := a.Markdown()
	verdict := "The search of the worst schedules confirms it"
	if modelError {
		verdict = "**Confirmation failed:**"
	}
	for _, w := range []string{"## Recommendation", "| ttl | 6s |", "TTL + Wait = 6s + 1.5s = 7.5s", "What breaks first: **pause**", verdict} {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q", w)
		}
	}
}

// TestAdviseImpossible: Redis restarts lose the key behind the leader's
// back, so the overlap is at least TTL/2 + jitter whatever the client does
// (and a 1s pause at TTL 1s overlaps P + TTL/2 + jitter - TTL = 505ms too):
// no overlap is impossible. The cheapest relaxation is max overlap to
// 505ms (TTL 1s); or drop Redis restarts from the envelope.
func TestAdviseImpossible(t *testing.T) {
	e := envelope()
	e.RedisRestarts = true
	c := sweep.Constraints{MaxGap: 12 * time.Second, MaxOverlap: 0, MaxStale: sweep.NoLimit}
	a, err := sweep.Advise(context.Background(), c, e, sweep.AdviseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Feasible || a.FeasibleCount != 0 {
		t.Fatalf("feasible %v (%d)", a.Feasible, a.FeasibleCount)
	}
	r := a.Relax[0]
	if r.Constraint != "max overlap" || r.To != 505*time.Millisecond || r.Params.TTL != time.Second {
		t.Errorf("first relaxation %+v", r)
	}
	var restarts bool
	for _, r := range a.Relax {
		restarts = restarts || r.Constraint == "envelope: Redis restarts"
	}
	if !restarts {
		t.Errorf("no envelope relaxation for Redis restarts: %+v", a.Relax)
	}
	if md := a.Markdown(); !strings.Contains(md, "No setting meets the constraints") || !strings.Contains(md, "**max overlap** from 0s to **505ms**") {
		t.Errorf("markdown:\n%s", md)
	}
}

func TestAdviseRejectsBadInput(t *testing.T) {
	if _, err := sweep.Advise(context.Background(), sweep.Constraints{}, sweep.Envelope{}, sweep.AdviseOptions{}); err == nil {
		t.Error("no max gap accepted")
	}
	if _, err := sweep.Advise(context.Background(), sweep.Constraints{MaxGap: time.Second}, sweep.Envelope{Partitions: []string{"blackhoel"}}, sweep.AdviseOptions{}); err == nil {
		t.Error("unknown partition accepted")
	}
}

// TestAdviseSuspend: an envelope with host suspends of up to 8 s beside
// 1 s pauses gets a suspend row of its own, predicted with P = 8 s (the
// pause row keeps its 1 s), and the confirming search of the suspend
// scenario on the virtual backend stays within that bound and comes near
// it. The starter suite has a suspend scenario of that size.
func TestAdviseSuspend(t *testing.T) {
	e := envelope()
	e.MaxSuspend = 8 * time.Second
	c := sweep.Constraints{MaxGap: 12 * time.Second, MaxOverlap: sweep.NoLimit, MaxStale: sweep.NoLimit}
	a, err := sweep.Advise(context.Background(), c, e, sweep.AdviseOptions{Confirm: true, Seeds: 2, Budget: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Feasible {
		t.Fatalf("not feasible: %+v", a.Relax)
	}
	p := a.Params.WithDefaults()
	modes := map[string]sweep.ModeCheck{}
	for _, m := range a.Modes {
		modes[m.Mode] = m
	}
	pause, suspend := modes[model.ModePause], modes[model.ModeSuspend]
	if suspend.Mode == "" || pause.Mode == "" {
		t.Fatalf("modes %v, want a pause and a suspend row", slices.Collect(maps.Keys(modes)))
	}
	want := max(0, e.MaxSuspend+p.TTL/2+p.Jitter()-p.TTL)
	if suspend.Prediction.MaxOverlap != want || want == 0 {
		t.Errorf("suspend overlap predicted %v, want P + TTL/2 + jitter - TTL = %v (TTL %v)", suspend.Prediction.MaxOverlap, want, p.TTL)
	}
	if pause.Prediction.MaxOverlap >= suspend.Prediction.MaxOverlap {
		t.Errorf("pause overlap predicted %v, want the 1s pause's, below the 8s suspend's %v", pause.Prediction.MaxOverlap, suspend.Prediction.MaxOverlap)
	}
	m := suspend.Measured
	if m == nil {
		t.Fatal("suspend not confirmed")
	}
	t.Logf("suspend (TTL %v): overlap %v of %v, gap %v of %v, %d runs", p.TTL, m.MaxOverlap, want, m.MaxGap, suspend.Prediction.MaxGap, m.Runs)
	if len(m.Exceeds) > 0 || m.MaxOverlap > want || m.MaxGap > suspend.Prediction.MaxGap {
		t.Errorf("suspend measured above its bound: %v", m.Exceeds)
	}
	if m.MaxOverlap < want*95/100 {
		t.Errorf("suspend overlap %v, want within 5%% of its bound %v", m.MaxOverlap, want)
	}
	if md := a.Markdown(); !strings.Contains(md, "suspends up to 8s") || !strings.Contains(md, model.ModeSuspend) {
		t.Errorf("markdown lacks the suspend envelope or row:\n%s", md)
	}
	suite, err := scenarios.Starter(a.Starter())
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(suite, func(sc model.Scenario) bool { return sc.Name == "suspend" })
	if i < 0 || suite[i].Faults[0].Kind != model.FaultSuspend || suite[i].Faults[0].For != e.MaxSuspend {
		t.Errorf("starter suite has no 8s suspend scenario (index %d)", i)
	}
}

// ModeScenario injects the fault of its mode: a suspend for suspend (the
// clock stopped), a pause for pause, each on the leader for P, so chaos
// bounds --explore searches both.
func TestModeScenarioInjectsSuspend(t *testing.T) {
	p := model.Params{}.WithDefaults()
	for mode, kind := range map[string]model.FaultKind{model.ModeSuspend: model.FaultSuspend, model.ModePause: model.FaultPause} {
		sc, ok := sweep.ModeScenario(mode, p, model.FaultSize{Pause: 8 * time.Second})
		if !ok || len(sc.Faults) != 1 {
			t.Fatalf("%s: %v %+v", mode, ok, sc.Faults)
		}
		if f := sc.Faults[0]; f.Kind != kind || f.For != 8*time.Second || f.Target.Role != model.RoleLeader {
			t.Errorf("%s: fault %+v, want a %s of the leader for 8s", mode, f, kind)
		}
	}
	if _, ok := sweep.ModeScenario(model.ModeSuspend, p, model.FaultSize{}); ok {
		t.Errorf("suspend without a size: want no scenario")
	}
}

// An advice's verdict: nothing feasible, a failed confirmation, or a real
// run that did not pass each fail it, in that order.
func TestAdviceVerdict(t *testing.T) {
	ok := sweep.Advice{Feasible: true, Confirmed: true, ConfirmedOK: true, Real: []sweep.RealCheck{{Scenario: "a", Verdict: "pass"}}}
	if err := ok.Verdict(); err != nil {
		t.Errorf("a confirmed advice: %v", err)
	}
	for _, tt := range []struct {
		a    sweep.Advice
		want string
	}{
		{sweep.Advice{}, "no setting meets the constraints under this envelope (see Relax above)"},
		{sweep.Advice{Feasible: true, Confirmed: true}, "the confirmation failed: "},
		{sweep.Advice{Feasible: true, Real: []sweep.RealCheck{{Scenario: "a", Verdict: "pass"}, {Scenario: "b", Verdict: "fail", Error: ": boom"}}}, "b on the real backend: fail: boom"},
		{sweep.Advice{Feasible: true, Real: []sweep.RealCheck{{Scenario: "c", Error: "not run"}}}, "c on the real backend: not run"},
	} {
		if err := tt.a.Verdict(); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%+v: %v, want %q", tt.a, err, tt.want)
		}
	}
}

// Each rationale line is true by the model's own numbers: the read
// timeout's says how long a hung renewal takes (bounds.CallBound of a
// blackhole) and whether that ends within the TTL ("short enough that a hung
// renewal ends in time" stood beside two 5s attempts and a 5s TTL); the
// wait's ratio is Wait / TTL.
func TestAdviseRationaleMatchesTheModel(t *testing.T) {
	for name, tc := range map[string]struct {
		c sweep.Constraints
		e sweep.Envelope
	}{
		"partitions":     {sweep.Constraints{MaxGap: 12 * time.Second, MaxOverlap: sweep.NoLimit, MaxStale: sweep.NoLimit}, envelope()},
		"empty":          {sweep.Constraints{MaxGap: 20 * time.Second, MaxOverlap: sweep.NoLimit, MaxStale: sweep.NoLimit}, sweep.Envelope{}},
		"strict":         {sweep.Constraints{MaxGap: 12 * time.Second, NoStaleWrites: true}, envelope()},
		"tight, latency": {sweep.Constraints{MaxGap: 4 * time.Second, MaxOverlap: sweep.NoLimit, MaxStale: sweep.NoLimit}, sweep.Envelope{LatencyP99: 5 * time.Millisecond, LatencyMax: time.Second}},
		// chaos advise --max-gap 8s --latency-max 1s: the latency edge breaks
		// with a gap the model cannot bound.
		"latency edge": {sweep.Constraints{MaxGap: 8 * time.Second, MaxStale: sweep.NoLimit}, sweep.Envelope{LatencyMax: time.Second}},
	} {
		a, err := sweep.Advise(context.Background(), tc.c, tc.e, sweep.AdviseOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := a.Params.WithDefaults()
		hang := bounds.CallBound(p, model.ModePartitionBlackhole)
		for _, s := range a.Settings {
			switch s.Name {
			case "read_timeout":
				if hang == model.Unbounded {
					if !strings.Contains(s.Why, "never ends") {
						t.Errorf("%s: no timeout, yet: %s", name, s.Why)
					}
					continue
				}
				within := strings.Contains(s.Why, "within the TTL ("+p.TTL.String()+")")
				if !strings.Contains(s.Why, hang.String()) || within != (hang < p.TTL) || strings.Contains(s.Why, "in time") {
					t.Errorf("%s: a hung renewal takes %v against a TTL of %v (read timeout %v, %d retries), yet: %s",
						name, hang, p.TTL, p.Client.ReadTimeout, p.Client.MaxRetries, s.Why)
				}
			case "wait":
				if want := fmt.Sprintf("%.2g × TTL", float64(p.Wait)/float64(p.TTL)); !strings.HasPrefix(s.Why, want) {
					t.Errorf("%s: wait %v, TTL %v, yet: %s", name, p.Wait, p.TTL, s.Why)
				}
			}
		}
		md := a.Markdown()
		if strings.Contains(md, model.Unbounded.String()) {
			t.Errorf("%s: the advice prints the internal maximum %v:\n%s", name, model.Unbounded, md)
		}
		if empty := strings.Contains(md, "**Envelope: empty.**"); empty != (name == "empty") || strings.Contains(md, "partitions: none") && name == "empty" {
			t.Errorf("%s: the envelope line:\n%s", name, md)
		}
	}
}

// TestAdviseDuplicateChores: a limit on a runner's duplicate chores per
// failover is met by the chore bound over the envelope's modes
// (bounds.ChoreBoundFor: 3 chores × (2·⌈O/I⌉ + 1), one more each after a
// pause) and confirmed by a runner-mode search of every mode; a limit the
// pause's extra tick alone breaks has no setting.
func TestAdviseDuplicateChores(t *testing.T) {
	e := sweep.Envelope{MaxPause: time.Second, Partitions: []string{"blackhole"}}
	six := 6
	c := sweep.Constraints{MaxGap: 12 * time.Second, MaxOverlap: 0, MaxStale: sweep.NoLimit, MaxDuplicateChores: &six}
	a, err := sweep.Advise(context.Background(), c, e, sweep.AdviseOptions{Confirm: true, Seeds: 2, Budget: 400})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Feasible || a.Chores == nil {
		t.Fatalf("feasible %v, chores %+v", a.Feasible, a.Chores)
	}
	if ch := a.Chores; ch.Predicted > 6 || ch.Measured < 0 || ch.Measured > ch.Predicted || ch.MeasuredMode == "" {
		t.Errorf("chores %+v: want predicted ≤ 6 and a runner-mode measurement within it", ch)
	}
	if !a.ConfirmedOK {
		t.Errorf("not confirmed:\n%s", a.Markdown())
	}
	ran := 0
	for _, m := range a.Modes {
		if m.Measured != nil && m.Measured.ChoreRuns > 0 {
			ran++
		}
	}
	if ran == 0 {
		t.Error("no mode was searched in runner mode")
	}
	chores := 0
	for _, sc := range a.Scenarios {
		if strings.HasSuffix(sc.Name, "-chores") {
			chores++
			if sc.Mode != model.ModeRunner || len(sc.Expect) != 1 || sc.Expect[0].Metric != "duplicate_chores" || sc.Expect[0].Max != "6" {
				t.Errorf("kept chore scenario %s: mode %s, expect %+v; want runner mode, duplicate_chores ≤ 6", sc.Name, sc.Mode, sc.Expect)
			}
			if err := sc.Validate(); err != nil {
				t.Errorf("kept chore scenario %s: %v", sc.Name, err)
			}
		}
	}
	if chores == 0 {
		t.Errorf("no runner-mode scenario kept for the chores (%d scenarios): --confirm-real would not count them on real", len(a.Scenarios))
	}
	if md := a.Markdown(); !strings.Contains(md, "at most 6 duplicate chores per failover") || !strings.Contains(md, "**Duplicate chores per failover**") {
		t.Errorf("the advice does not show the constraint:\n%s", md)
	}
	three := 3
	c.MaxDuplicateChores = &three
	a, err = sweep.Advise(context.Background(), c, e, sweep.AdviseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Feasible {
		t.Errorf("3 duplicate chores per failover met with 1 s pauses (their resume adds one run per chore): %+v", a.Chores)
	}
	// The way out is the chores' own limit: the relaxations name it, to
	// a count some candidate meets with every other constraint kept.
	var relax *sweep.Relax
	for i, r := range a.Relax {
		if r.Constraint == "max duplicate chores" {
			relax = &a.Relax[i]
		}
		if r.To >= 0 && !r.Count && !strings.HasPrefix(r.Constraint, "envelope") {
			if again, err := sweep.Advise(context.Background(), relaxed(c, r), e, sweep.AdviseOptions{}); err != nil || !again.Feasible {
				t.Errorf("relaxing %s to %v (%+v) keeps the chore limit unmet: feasible %v, %v", r.Constraint, r.To, r, again.Feasible, err)
			}
		}
	}
	for _, r := range a.Relax {
		if r.Constraint == "envelope: pauses" && r.To != 0 {
			t.Errorf("%+v: any pause adds the resume's tick to the chores, so only no pauses meets 3", r)
		}
	}
	if relax == nil || !relax.Count || relax.FromCount != 3 || relax.ToCount <= 3 || relax.ToCount > 6 {
		t.Fatalf("relaxations %+v: want max duplicate chores from 3 to at most 6", a.Relax)
	}
	n := relax.ToCount
	c.MaxDuplicateChores = &n
	if again, err := sweep.Advise(context.Background(), c, e, sweep.AdviseOptions{}); err != nil || !again.Feasible {
		t.Errorf("the relaxed chore limit %d is not met: feasible %v, %v", n, again.Feasible, err)
	}
	if md := a.Markdown(); !strings.Contains(md, fmt.Sprintf("**max duplicate chores** from 3 to **%d**", n)) {
		t.Errorf("the advice does not offer the chore relaxation:\n%s", md)
	}
}

// relaxed is c with r's constraint at r.To.
func relaxed(c sweep.Constraints, r sweep.Relax) sweep.Constraints {
	switch r.Constraint {
	case "max gap":
		c.MaxGap = r.To
	case "max overlap":
		c.MaxOverlap = r.To
	case "max stale leadership":
		c.MaxStale = r.To
	}
	return c
}

// advise --confirm-real puts a runner scenario's chores beside virtual's:
// the duplicate-chore constraint is what such an advice is about, and the
// real table showed only gap, overlap and stale.
func TestRealCheckCountsChores(t *testing.T) {
	e, ok := scenarios.Lookup("leader-crash")
	if !ok || e.Scenario.Mode != model.ModeRunner {
		t.Fatal("want the runner built-in leader-crash")
	}
	sc := e.Scenario.WithDefaults()
	// The virtual backend's own run stands in for the real one: the
	// plumbing, not the backend, is under test (the CLI test runs real).
	v, err := virtual.Run(sc, virtual.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rc := sweep.RealCheckOf(sc, v, nil)
	if !rc.Runner || rc.DuplicateChores != v.Analysis.Summary.DuplicateChores || rc.VirtualDuplicateChores != v.Analysis.Summary.DuplicateChores {
		t.Errorf("RealCheckOf(runner leader-crash) = %+v, want runner with the run's %d duplicate chores on both sides", rc, v.Analysis.Summary.DuplicateChores)
	}
	elector := sweep.RealCheck{Scenario: "e", Verdict: "pass"}
	md := sweep.Advice{Feasible: true, Real: []sweep.RealCheck{rc, elector}}.Markdown()
	if !strings.Contains(md, "duplicate chores real / virtual") || !strings.Contains(md, "| e | pass |") || !strings.Contains(md, "elector mode") {
		t.Errorf("the real table lacks the chores' columns or the elector row's note:\n%s", md)
	}
	if md := (sweep.Advice{Feasible: true, Real: []sweep.RealCheck{elector}}).Markdown(); strings.Contains(md, "chores real") {
		t.Errorf("an elector-only table has chore columns:\n%s", md)
	}
}
