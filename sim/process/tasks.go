package process

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/model"
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
	// unanswered are dispatch commands whose agent was killed (a crash)
	// or exited before it answered, as TaskDispatched events with no task
	// yet: such an agent may have added the task to the stream and died
	// before its task-dispatched line, and another agent then reclaims a
	// task no line named (leader-crash on the process backend, the leader
	// killed mid-dispatch). Each explains one unknown task, first come
	// first served.
	unanswered []model.Event
}

// unansweredDispatch notes a dispatch command the agent e names was killed
// before answering, sent at e.At.
func (t *taskBook) unansweredDispatch(e model.Event) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unanswered = append(t.unanswered, e)
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

// settle returns tl with a TaskDispatched for each task worked on and
// never dispatched that an unanswered dispatch explains (at the command's
// time, by its agent), and a protocol error for each of the rest, naming
// the agent and the line that first named it.
func (t *taskBook) settle(tl model.Timeline) (model.Timeline, []error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var errs []error
	for _, id := range t.order {
		err := t.unknown[id]
		if err == nil {
			continue
		}
		if len(t.unanswered) == 0 {
			errs = append(errs, err)
			continue
		}
		e := t.unanswered[0]
		t.unanswered = t.unanswered[1:]
		e.Task = id
		i, _ := slices.BinarySearchFunc(tl, e.At, func(x model.Event, at time.Duration) int { return cmp.Compare(x.At, at+1) })
		tl = slices.Insert(tl, i, e)
	}
	return tl, errs
}
