package real_test

import (
	"github.com/leaselab/leaselab/internal/rediscluster"
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/real"
)

// virtualOnly are the repros a real run does not reproduce: the mid-call
// ones need the fault within a hop (~50 µs) of a renewal's send, which a
// real run cannot time; one-way-jittered-latency did not exercise its case
// on the real backend (the leader kept every renewal, 0 errors, where the
// virtual one's replies straddle the read timeout: its one-way jitter is
// not calibrated against Toxiproxy's; its bound held on both);
// failover-repeated-resets
// needs each of five resets to hit the next leader before it was stable,
// which depends on who wins each handover: the real run (2026-12-01) had
// 14.94 s where the virtual one has 22.98 s, within the bound on both.
// safe-fresh-acquire-latency (the phantom lease of an acquire on a new
// connection under jittered latency: go-redis v9.23.0 writes the command
// after a handshake that outlasted the context's deadline) ran on the
// virtual backend only until a restarted instance kept the latency jitter
// in force (instance.Jitter): 7.996 s real before, 19.868 s now, 19.866 s
// virtual.
// chained-overlap-pauses needs the second suspend to find the slow-clocked
// instance leading, which depends on who wins each handover: real runs gave
// 4.288 s once and 0.948 s in another (virtual 4.580 s); with pause's
// SIGSTOP meaning the overlap (real 3.896 s, virtual 3.946 s) no longer
// passes the single-instance bound the file demonstrates, so it uses
// suspend, the frozen clock it was found with.
// safe-replies-latency-phantom (TTL 863 ms) needs the jittered round trips
// to straddle a deadline of ~0.8 s: its real runs gave 3.004 s once (the
// phantom, as the virtual 3.002 s) and 0.883 s and 0.613 s in others; the
// gate draws its jitter per chunk, not per message: not timed reliably.
// The follower-*-mid-acquire and follower-*-after-leader-* repros stop or
// crash a follower between its SET NX's landing and the reply (a window of
// ~50 µs on the virtual backend): not run on the real backend, where
// follower-crash-slow-reply (the reply 1 s late) and
// follower-partition-mid-acquire (the reply dropped) time the same case. Of the two safe
// short-pause ones, safe-short-pause-hidden reproduces at scale 1 (its 3 s
// pause leaves 0.25 s to 0.4 s of margin: gap 5.333 to 5.348 s in three
// runs at once under load, virtual 5.348 s; its first version, explore's
// 2.45 s pause ending within ~10 ms of the expiry, missed under load);
// safe-short-pause-hidden-by-suspend did not (gap 0: its 2.45 s pause must
// end within ~7 ms past the guard, 2.5 s into the run, with the followers'
// phases explore placed). follower-pause-wins-at-resume pauses the follower
// 20 µs after its SET NX's send (follower-pause-slow-reply-wins times it on
// the real backend with 1 s replies). redis-pause-slow-clock needs the slow
// clock's renewal to fall just before the redis-pause (virtual 7.907 s
// stale; a real run gave 3.001 s, within its bound); the other redis-pause
// repros time their cases on the real backend (10.123 s, 3.338 s, 12.63 s
// and 10.521 s of 10.287, 3.339, 12.584 and 11.504 s virtual).
// follower-partition-reply-in-flight cuts the follower 10 µs after its
// SET NX landed, with the reply on its way: not timed on a real run.
// flush-then-latency-cold-timeout runs on both: 9.26 s real at load ~3 of
// 9.27 s virtual (a run at load ~8, its faults 0.4-0.5 s late behind
// harness stalls, missed its case: 3.299 s).
var virtualOnly = map[string]bool{"mid-call-partition.yaml": true, "mid-call-refusal.yaml": true,
	"one-way-jittered-latency.yaml": true,
	"failover-repeated-resets.yaml": true, "safe-replies-latency-phantom.yaml": true,
	"chained-overlap-pauses.yaml":     true,
	"follower-pause-mid-acquire.yaml": true, "follower-pause-after-leader-pause.yaml": true,
	"follower-crash-mid-acquire.yaml": true, "follower-crashes-mid-acquire.yaml": true,
	"follower-shorter-pause-after-leader-pause.yaml": true, "follower-suspend-after-leader-suspend.yaml": true,
	"safe-short-pause-hidden-by-suspend.yaml": true, "follower-pause-wins-at-resume.yaml": true,
	"redis-pause-slow-clock.yaml": true, "follower-partition-reply-in-flight.yaml": true}

// The schedules that broke a "predicted" limit before the bound modelled
// their case, on real Redis through real Toxiproxy at scale 1: each must
// exercise its case (the min on its metric) and keep every predicted limit
// (sim/virtual's TestBoundReprosHold runs all of them, these included).
//
// The runs wait on real time (30-45 s each) and use little CPU, so they run
// reproConcurrency at a time, more than -parallel's one per core would let
// subtests run; each file's checks are then reported in its own subtest.
func TestBoundReprosReal(t *testing.T) {
	files, err := filepath.Glob("../testdata/bound-repros/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no repros: %v", err)
	}
	type repro struct {
		name string
		sc   model.Scenario
		res  *verdict.Result
		err  error
		// missed are the earlier tries' summaries, which missed the case.
		missed []analysis.Summary
	}
	var repros []*repro
	for _, f := range files {
		name := filepath.Base(f)
		if virtualOnly[name] {
			continue
		}
		sc, err := scenarios.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Redis == model.RedisReplicated {
			rediscluster.NeedTools(t)
		}
		sc.Name = "repro-" + strings.TrimSuffix(name, ".yaml")
		repros = append(repros, &repro{name: name, sc: sc})
	}
	sem := make(chan struct{}, reproConcurrency)
	var wg sync.WaitGroup
	for _, r := range repros {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			for try := 1; ; try++ {
				r.res, r.err = real.Run(context.Background(), r.sc, real.Options{})
				if r.err != nil || try == reproTries || !missedCase(r.res) {
					return
				}
				r.missed = append(r.missed, r.res.Analysis.Summary)
			}
		})
	}
	wg.Wait()
	for _, r := range repros {
		t.Run(r.name, func(t *testing.T) {
			for i, s := range r.missed {
				t.Logf("try %d missed the case, every limit kept but for the machine's load: overlaps %d (max %v), gaps %d (max %v), stale %d (max %v)",
					i+1, s.Overlaps, s.MaxOverlap, s.Gaps, s.MaxGap, s.StaleWindows, s.MaxStale)
			}
			if r.err != nil {
				t.Fatalf("Run: %v", r.err)
			}
			if len(r.res.Errors) > 0 {
				t.Fatalf("harness errors: %v", r.res.Errors)
			}
			s := r.res.Analysis.Summary
			t.Logf("%s: overlaps %d (max %v), gaps %d (max %v), stale %d (max %v), failover %+v",
				r.sc.Name, s.Overlaps, s.MaxOverlap, s.Gaps, s.MaxGap, s.StaleWindows, s.MaxStale, s.Failover)
			for _, c := range r.res.Evaluation.Checks {
				t.Logf("%s", c)
				if c.Verdict != model.Pass {
					t.Errorf("%s", c)
				}
			}
		})
	}
}

// reproTries is how many times a repro runs when its tries miss its case:
// its phase on a loaded machine can drift off the case (CI at load ~20 gave
// restart-then-redis-pause 2.273 s of the 10.123 s overlap a quiet run
// gave; redis-pause-under-latency 8.442 s stale of 10.521 s, though that one
// was a 15 ms phase margin, since widened) while every
// limit held. A missed case is no break; a limit broken on any try fails.
const reproTries = 3

// missedCase says the run kept every upper limit and fell short only of a
// lower one (the schedule did not reach its case this time), or went over
// one only by what the machine's load explains (model.Check.Stalled: the
// harness measured itself that late inside the window), which is no more
// a break than a pass.
func missedCase(res *verdict.Result) bool {
	missed := false
	for _, c := range res.Evaluation.Checks {
		switch {
		case c.Verdict == model.Pass:
		case c.Stalled:
			missed = true
		case c.HasMin && !c.Count && !c.NotMeasured && c.Measured < c.Min && (!c.HasMax || c.Measured <= c.Max):
			missed = true
		default:
			return false
		}
	}
	return missed && len(res.Errors) == 0
}

// reproConcurrency is how many real repro runs TestBoundReprosReal runs at
// once: 3, one more than -parallel's one per core on CI's 2 cores. A
// repro whose case needs a phase must leave margins a loaded machine's
// drift cannot eat: failover-slow-redis, failover-hung-renewal and
// failover-slow-clock, 10 to 20 ms off their edges, missed their cases
// under load (slow-redis at 6 runs at once, 10.513 s, and at 3 on a CI
// machine at load ~20, 12.143 s); they now leave 0.3 s to 0.75 s, which
// sim/virtual's backend confirms by moving the starts and the fault.
const reproConcurrency = 3
