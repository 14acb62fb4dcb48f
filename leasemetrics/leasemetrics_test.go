package leasemetrics_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/leasemetrics"
	"github.com/leaselab/leaselab/runner"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gauge returns the value of the one series of name in reg.
func value(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue next
				}
			}
			switch {
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return 0
}

// TestElectorMetrics: a real elector wired to the collector reports its
// leadership, the lease it counts on, its calls by operation and a lost
// lease by reason.
func TestElectorMetrics(t *testing.T) {
	addr := redistest.Addr(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	admin := redistest.ClientAt(t, addr)
	group := t.Name()
	m, err := leasemetrics.NewElector(leasemetrics.ElectorOptions{Group: group})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	const ttl = 400 * time.Millisecond
	o := election.Opts{Redis: rdb, Key: group, TTL: ttl, Wait: 100 * time.Millisecond}
	m.Wire(&o, rdb)
	e, _, _, _ := election.NewElector(o)
	e.Start()
	defer e.Stop()
	g := map[string]string{"group": group}
	waitFor(t, time.Second, "leads", e.IsLeader)
	waitFor(t, 2*ttl, "a renewal timed", func() bool {
		return value(t, reg, "leaselab_elector_call_duration_seconds", map[string]string{"op": "renew"}) >= 1
	})
	if v := value(t, reg, "leaselab_elector_is_leader", g); v != 1 {
		t.Fatalf("is_leader %v while leading", v)
	}
	if v := value(t, reg, "leaselab_elector_lease_remaining_seconds", g); v <= 0 || v > ttl.Seconds() {
		t.Fatalf("lease remaining %v s while leading, want (0, %v]", v, ttl.Seconds())
	}
	if v := value(t, reg, "leaselab_elector_call_duration_seconds", map[string]string{"op": "acquire"}); v != 1 {
		t.Fatalf("%v acquire calls timed, want 1", v)
	}
	admin.Set(context.Background(), election.LeaderKey(group), "someone-else", time.Minute)
	waitFor(t, ttl+time.Second, "demoted", func() bool { return !e.IsLeader() })
	waitFor(t, time.Second, "demotion counted", func() bool {
		return value(t, reg, "leaselab_elector_demotions_total", map[string]string{"reason": "lost"}) == 1
	})
	if v := value(t, reg, "leaselab_elector_is_leader", g); v != 0 {
		t.Fatalf("is_leader %v after the demotion", v)
	}
	if v := value(t, reg, "leaselab_elector_lease_remaining_seconds", g); v != 0 {
		t.Fatalf("lease remaining %v s after the demotion", v)
	}
	if v := value(t, reg, "leaselab_elector_elections_total", g); v != 1 {
		t.Fatalf("elections %v, want 1", v)
	}
	if n, err := testutil.GatherAndCount(reg); err != nil || n == 0 {
		t.Fatalf("pedantic gather: %d series, %v", n, err)
	}
}

// TestRunnerEvents: runner events are counted by chore and outcome, and
// fenced chores apart from those that ran.
func TestRunnerEvents(t *testing.T) {
	r, err := leasemetrics.NewRunner(leasemetrics.ElectorOptions{Group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(r)
	for _, e := range []runner.Event{
		{Kind: runner.EventChore, Chore: runner.ChoreScheduler},
		{Kind: runner.EventChore, Chore: runner.ChoreScheduler},
		{Kind: runner.EventChoreFenced, Chore: runner.ChoreCapacity},
		{Kind: runner.EventTaskCompleted},
		{Kind: runner.EventTaskFailed},
		{Kind: runner.EventError, Err: errors.New("x")},
	} {
		r.OnEvent(e)
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"leaselab_runner_chores_total", map[string]string{"chore": "scheduler"}, 2},
		{"leaselab_runner_chores_total", map[string]string{"chore": "capacity"}, 0},
		{"leaselab_runner_chores_fenced_total", map[string]string{"chore": "capacity"}, 1},
		{"leaselab_runner_tasks_total", map[string]string{"outcome": "completed"}, 1},
		{"leaselab_runner_tasks_total", map[string]string{"outcome": "failed"}, 1},
		{"leaselab_runner_errors_total", nil, 1},
	} {
		if v := value(t, reg, c.name, c.labels); v != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, v, c.want)
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP leaselab_runner_chores_fenced_total Leader-only chores whose write the fence refused (safe mode: a stale leader's chore, which changed nothing), by chore.
# TYPE leaselab_runner_chores_fenced_total counter
leaselab_runner_chores_fenced_total{chore="capacity",group="g"} 1
leaselab_runner_chores_fenced_total{chore="metrics",group="g"} 0
leaselab_runner_chores_fenced_total{chore="scheduler",group="g"} 0
`), "leaselab_runner_chores_fenced_total"); err != nil {
		t.Fatal(err)
	}
}
