package leasemetrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/leaselab/leaselab/runner"
)

// Runner is a prometheus.Collector of one runner's metrics: its elector's
// (Elector) and the runner's own, from its events.
type Runner struct {
	// Elector collects the runner's elector metrics.
	Elector *Elector

	chores *prometheus.CounterVec
	fenced *prometheus.CounterVec
	tasks  *prometheus.CounterVec
	errs   prometheus.Counter
}

// NewRunner returns a collector for the runner of o.Group.
func NewRunner(o ElectorOptions) (*Runner, error) {
	e, err := NewElector(o)
	if err != nil {
		return nil, err
	}
	l := prometheus.Labels{"group": o.Group}
	r := &Runner{
		Elector: e,
		chores: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "leaselab", Subsystem: "runner", Name: "chores_total",
			Help: "Leader-only chores that ran, by chore.", ConstLabels: l}, []string{"chore"}),
		fenced: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "leaselab", Subsystem: "runner", Name: "chores_fenced_total",
			Help: "Leader-only chores whose write the fence refused (safe mode: a stale leader's chore, which changed nothing), by chore.", ConstLabels: l}, []string{"chore"}),
		tasks: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "leaselab", Subsystem: "runner", Name: "tasks_total",
			Help: "Task runs on this instance, by outcome: completed, failed, dead_lettered.", ConstLabels: l}, []string{"outcome"}),
		errs: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "leaselab", Subsystem: "runner", Name: "errors_total",
			Help: "Errors the runner reported (the elector's included).", ConstLabels: l}),
	}
	for _, c := range []runner.Chore{runner.ChoreScheduler, runner.ChoreMetrics, runner.ChoreCapacity} {
		r.chores.WithLabelValues(string(c))
		r.fenced.WithLabelValues(string(c))
	}
	for _, o := range []string{"completed", "failed", "dead_lettered"} {
		r.tasks.WithLabelValues(o)
	}
	return r, nil
}

// Wire feeds r from the runner o configures and its client rdb: r's
// elector from o.Election (see Elector.Wire) and r.OnEvent chained into
// o.OnEvent (after any hook there). Call it before runner.New.
func (r *Runner) Wire(o *runner.Options, rdb Hooker) {
	r.Elector.Wire(&o.Election, rdb)
	prev := o.OnEvent
	o.OnEvent = func(e runner.Event) {
		if prev != nil {
			prev(e)
		}
		r.OnEvent(e)
	}
}

// OnEvent counts one runner event. It is a runner.Options.OnEvent hook:
// fast and safe for concurrent use.
func (r *Runner) OnEvent(e runner.Event) {
	switch e.Kind {
	case runner.EventChore:
		r.chores.WithLabelValues(string(e.Chore)).Inc()
	case runner.EventChoreFenced:
		r.fenced.WithLabelValues(string(e.Chore)).Inc()
	case runner.EventTaskCompleted:
		r.tasks.WithLabelValues("completed").Inc()
	case runner.EventTaskFailed:
		r.tasks.WithLabelValues("failed").Inc()
	case runner.EventTaskDeadLettered:
		r.tasks.WithLabelValues("dead_lettered").Inc()
	case runner.EventError:
		r.errs.Inc()
	}
}

// Describe implements prometheus.Collector.
func (r *Runner) Describe(ch chan<- *prometheus.Desc) {
	r.Elector.Describe(ch)
	r.chores.Describe(ch)
	r.fenced.Describe(ch)
	r.tasks.Describe(ch)
	r.errs.Describe(ch)
}

// Collect implements prometheus.Collector.
func (r *Runner) Collect(ch chan<- prometheus.Metric) {
	r.Elector.Collect(ch)
	r.chores.Collect(ch)
	r.fenced.Collect(ch)
	r.tasks.Collect(ch)
	r.errs.Collect(ch)
}
