package runner

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The leader computes the metrics from every instance's samples, calls the
// hook over the threshold, and no sample is lost (or counted twice) across
// the resets that run while tasks complete.
func TestMetricsCountEverySampleAndFireHook(t *testing.T) {
	f := newFleet(t)
	var (
		mu    sync.Mutex
		fired []MetricsReport
	)
	cfg := f.config(map[string]Task{
		"fast": {Handler: func(context.Context, []byte) error { return nil }},
		"slow": {Handler: func(context.Context, []byte) error {
			time.Sleep(15 * time.Millisecond)
			return nil
		}},
	})
	cfg.AvgThreshold = 10 * time.Millisecond
	cfg.OnThreshold = func(m MetricsReport) {
		mu.Lock()
		fired = append(fired, m)
		mu.Unlock()
	}
	for range 3 {
		f.start(cfg)
	}
	f.waitLeader()

	// Dispatch while the metrics chore resets every tick, so that resets
	// interleave with the samples being recorded.
	const fast, slow = 600, 30
	for i := range fast {
		if _, err := f.runners[i%3].Dispatch(context.Background(), "fast", nil); err != nil {
			t.Fatal(err)
		}
		if i%(fast/slow) == 0 {
			if _, err := f.runners[i%3].Dispatch(context.Background(), "slow", nil); err != nil {
				t.Fatal(err)
			}
		}
		if i%100 == 0 {
			time.Sleep(testInterval / 2) // spread the work over several metrics periods
		}
	}
	counted := func() (map[string]int64, int) {
		sums, periods := map[string]int64{}, 0
		for _, e := range f.rec.all(EventChore) {
			if e.Chore != ChoreMetrics {
				continue
			}
			if e.Metrics.Samples > 0 {
				periods++
			}
			for task, tt := range e.Metrics.Tasks {
				sums[task] += tt.Count
			}
		}
		return sums, periods
	}
	eventually(t, 10*time.Second, "every sample to be counted", func() bool {
		sums, _ := counted()
		return sums["fast"] >= fast && sums["slow"] >= slow
	})
	// Let a few more resets run, then check nothing was counted twice.
	chores := len(f.rec.all(EventChore))
	eventually(t, 5*time.Second, "more metrics ticks", func() bool { return len(f.rec.all(EventChore)) > chores+6 })
	sums, periods := counted()
	if sums["fast"] != fast || sums["slow"] != slow {
		t.Errorf("metrics counted %v; want fast %d, slow %d", sums, fast, slow)
	}
	if periods < 2 {
		t.Errorf("samples fell in %d metrics periods; the test needs resets between samples", periods)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(fired) == 0 {
		t.Fatal("OnThreshold never fired although slow tasks average over the threshold")
	}
	for _, m := range fired {
		if len(m.SlowTasks) != 1 || m.SlowTasks[0] != "slow" {
			t.Errorf("hook fired with slow tasks %v; want [slow]", m.SlowTasks)
		}
		if m.Tasks["slow"].Avg < 15*time.Millisecond {
			t.Errorf("slow average %v; want at least 15ms", m.Tasks["slow"].Avg)
		}
	}
}

// The predicted wait follows the queue, the average and the fleet size.
func TestMetricsPredictWait(t *testing.T) {
	f := newFleet(t)
	release := make(chan struct{})
	var fired sync.Once
	hooked := make(chan MetricsReport, 1)
	cfg := f.config(map[string]Task{"block": {Handler: func(ctx context.Context, _ []byte) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}}})
	cfg.Workers, cfg.MinWorkers, cfg.MaxWorkers = 1, 1, 1
	cfg.WaitThreshold = time.Millisecond
	cfg.OnThreshold = func(m MetricsReport) { fired.Do(func() { hooked <- m }) }
	r := f.start(cfg)
	f.waitLeader()
	// One sample sets the average, then a backlog builds behind a blocked worker.
	if _, err := r.Dispatch(context.Background(), "block", nil); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, func() { release <- struct{}{} })
	eventually(t, 5*time.Second, "one completion", func() bool { return r.Stats().Completed == 1 })
	for range 10 {
		if _, err := r.Dispatch(context.Background(), "block", nil); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case m := <-hooked:
		if !m.WaitExceeded || m.Queued < 1 || m.Instances != 1 || m.PredictedWait <= 0 {
			t.Errorf("report %+v; want a queue, one instance, a predicted wait over the threshold", m)
		}
		if l := r.Leadership(); m.Term == 0 || m.Term != l.Term || m.Token != l.Token {
			t.Errorf("report of term %d, token %d; want the leadership it ran under, %+v", m.Term, m.Token, l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait threshold hook never fired")
	}
	close(release)
}
