package process

import (
	"fmt"
	"sync"

	"github.com/leaselab/leaselab/agent"
)

// taskBook checks, across one run's agents, that every task an agent works
// on (started, acknowledging, completed, failed, reclaimed) is one an agent
// dispatched (task-dispatched): the analysis would count the completion of
// a task never dispatched as a task done twice. The check is made at the
// run's end, not line by line: the dispatching agent's line and a worker's
// come on separate pipes, which the harness reads in no set order.
type taskBook struct {
	mu         sync.Mutex
	dispatched map[string]bool
	unknown    map[string]error // task → the first line about it before its dispatch
	order      []string         // unknown's tasks, first seen first
}

// note notes e, read by dec.
func (t *taskBook) note(dec *agent.Decoder, e agent.Event) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dispatched == nil {
		t.dispatched, t.unknown = map[string]bool{}, map[string]error{}
	}
	switch e.Type {
	case agent.TaskDispatched:
		t.dispatched[e.Task] = true
		delete(t.unknown, e.Task)
	case agent.TaskStarted, agent.TaskAcknowledging, agent.TaskCompleted, agent.TaskFailed, agent.TaskReclaimed:
		if t.dispatched[e.Task] || t.unknown[e.Task] != nil {
			return
		}
		t.unknown[e.Task] = dec.Refuse(fmt.Errorf("%s of task %q, which no agent dispatched (no task-dispatched for it in the run)", e.Type, e.Task))
		t.order = append(t.order, e.Task)
	}
}

// errors returns a protocol error for each task worked on and never
// dispatched, naming the agent and the line that first named it.
func (t *taskBook) errors() []error {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for _, id := range t.order {
		if err := t.unknown[id]; err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
