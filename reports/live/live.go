// Package live is what a terminal shows while scenarios run: a run's
// status line from its events as they arrive, an event's line, a finished
// run's verdict lines, a suite's totals and a seed distribution's table,
// and the View that draws them as the runs go (a live area redrawn in
// place on a terminal, plain lines in a log). It formats what the model
// measured and derives no finding of its own; whether the output is a
// terminal, and its size, is the caller's (Options.Size).
package live

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/leaselab/leaselab/model"
)

// Run follows one run through its events: how far it is, who leads, which
// faults are active. It is safe for concurrent use: Observe is called on
// the recording goroutine while a drawing one asks for Status.
type Run struct {
	// Name is the scenario's.
	Name string
	// Total is the run's length (model.Scenario.Length).
	Total time.Duration

	mu      sync.Mutex
	now     time.Duration
	leaders map[int]bool
	faults  map[int]string
}

// NewRun follows a run of sc.
func NewRun(sc model.Scenario) *Run {
	return &Run{Name: sc.Name, Total: sc.Length(), leaders: map[int]bool{}, faults: map[int]string{}}
}

// Observe takes in one event of the run. It is fast: it is a run's Observe
// hook.
func (r *Run) Observe(e model.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = e.At
	switch e.Kind {
	case model.LeaderGained:
		r.leaders[e.Instance] = true
	case model.LeaderLost, model.InstanceCrashed, model.InstanceStopped:
		delete(r.leaders, e.Instance)
	case model.FaultApplied:
		r.faults[e.FaultID] = fmt.Sprintf("%s %v", e.Fault, e.Target)
	case model.FaultHealed:
		delete(r.faults, e.FaultID)
	}
}

// Left is the run's time still to go, by its last event.
func (r *Run) Left() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Total - r.now
}

// Status is the run's line: elapsed and total time, the current leader(s),
// the active faults ("leader-crash 3s/30s leader #1 faults none").
func (r *Run) Status() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var leaders []string
	for i := range r.leaders {
		leaders = append(leaders, fmt.Sprint(i))
	}
	sort.Strings(leaders)
	leader := "none"
	if len(leaders) > 0 {
		leader = "#" + strings.Join(leaders, ",#")
	}
	var faults []string
	for _, f := range r.faults {
		faults = append(faults, f)
	}
	sort.Strings(faults)
	fs := "none"
	if len(faults) > 0 {
		fs = strings.Join(faults, "; ")
	}
	return fmt.Sprintf("%s %v/%v leader %s faults %s", r.Name, r.now.Round(time.Second), r.Total.Round(time.Second), leader, fs)
}

// EventLine is an event of the named run as -v prints it: every field it
// has.
func EventLine(name string, e model.Event) string {
	return strings.TrimRight(fmt.Sprintf("%s %9s %-16s %s", name, e.At.Round(time.Millisecond), e.Kind, eventText(e)), " ")
}

// FaultLine is a fault applied or healed, as plain log lines show it.
func FaultLine(name string, e model.Event) string {
	return strings.TrimRight(fmt.Sprintf("%s %9s %s %s %v %s", name, e.At.Round(time.Millisecond), e.Kind, e.Fault, e.Target, e.Detail), " ")
}

func eventText(e model.Event) string {
	var b strings.Builder
	if e.Instance >= 0 {
		fmt.Fprintf(&b, "#%d ", e.Instance)
	}
	for _, kv := range [][2]string{{"id", short(e.ID)}, {"holder", short(e.Holder)}, {"fault", e.Fault}, {"chore", e.Chore}, {"task", e.Task}, {"err", e.Err}, {"", e.Detail}} {
		if kv[1] == "" {
			continue
		}
		if kv[0] != "" {
			b.WriteString(kv[0] + "=")
		}
		b.WriteString(kv[1] + " ")
	}
	return strings.TrimSpace(b.String())
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
