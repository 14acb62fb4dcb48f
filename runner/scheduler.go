package runner

import (
	"fmt"
	"strconv"
	"time"

	"github.com/leaselab/leaselab/election"
)

// scheduleBatch is the most delayed tasks one script call moves; a tick calls
// it again while it comes back full, so a long script never blocks Redis.
const scheduleBatch = 512

// schedule is the delayed scheduler chore: it moves every due delayed task
// (and due retry) into the stream. Due means due by the Redis server's
// clock, and each batch moves and removes in one script, so two instances
// that both believe they lead never enqueue a task twice.
//
// Lateness: a task due at T reaches the stream at the first tick after T, so
// at most one ChoreInterval (plus a script round trip) late while there is a
// leader. Without one — after a leader crash, up to the spec's TTL + Wait —
// due tasks wait for the next leader's first tick.
//
// It reports whether the tick may go on (false: the chore was fenced).
func (r *Runner) schedule(lead election.Leadership) bool {
	start := time.Now()
	moved := 0
	for {
		res, err := r.chore(scheduleScript, lead, []string{r.keys.delayed, r.keys.stream}, scheduleBatch).Slice()
		if r.refused(err, ChoreScheduler, lead) {
			if moved > 0 {
				r.stats.delayedMoved.Add(uint64(moved))
				r.choreRan(Event{Chore: ChoreScheduler, N: moved, Term: lead.Term, Token: lead.Token}, start)
			}
			return false
		}
		if err != nil {
			r.fail(fmt.Errorf("runner: scheduler: moving due delayed tasks: %w", err))
			if moved == 0 {
				return true // it did nothing: not a chore run
			}
			break
		}
		for i := 0; i+3 < len(res); i += 4 {
			id, _ := res[i].(string)
			task, _ := res[i+1].(string)
			attempt, _ := strconv.Atoi(fmt.Sprint(res[i+2]))
			late, _ := res[i+3].(int64)
			r.emit(Event{Kind: EventDelayedDue, TaskID: id, Task: task, Attempt: attempt, Lateness: time.Duration(late) * time.Millisecond})
		}
		n := len(res) / 4
		moved += n
		if n < scheduleBatch {
			break
		}
	}
	r.stats.delayedMoved.Add(uint64(moved))
	r.choreRan(Event{Chore: ChoreScheduler, N: moved, Term: lead.Term, Token: lead.Token}, start)
	return true
}

// choreRan counts and reports a chore run whose first Redis call was sent
// at start. Its Duration is real time, not the runner's clock: it bounds
// when the chore's writes landed (an observer judging them against who held
// the lease needs the whole window, a process pause included).
func (r *Runner) choreRan(e Event, start time.Time) {
	r.stats.choreRuns.Add(1)
	e.Kind, e.Duration = EventChore, time.Since(start)
	r.emit(e)
}
