package runner

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnknownTask is returned by Dispatch and friends for a task name that is
// not in Options.Tasks.
var ErrUnknownTask = errors.New("runner: unknown task")

// Task IDs are 32 hex digits: a prefix of 64 random bits (crypto/rand) drawn
// once per process, then a 64-bit counter. Within a process the counter never
// repeats; two processes (instances, or one instance and its restart) share a
// prefix with probability 2^-64, and n processes have any two share one with
// probability below n²/2^65 (a million processes: 3 in 10^8). That is the
// uniqueness of 128 random bits per ID where it matters, at the cost of an
// atomic increment instead of a crypto/rand read per ID. The IDs are not
// secret: one reveals its process's others.
var (
	taskIDPrefix = sync.OnceValue(func() [8]byte {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand docs)
		return b
	})
	taskIDCounter atomic.Uint64
)

// newTaskID returns a new task ID. It is stored in the task's stream entry
// and delayed member and survives retries, reclaims and hand-backs, so a
// harness can match a dispatch to its completions.
func newTaskID() string {
	var b [16]byte
	p := taskIDPrefix()
	copy(b[:8], p[:])
	binary.BigEndian.PutUint64(b[8:], taskIDCounter.Add(1))
	return hex.EncodeToString(b[:])
}

// newTaskIDs returns n new task IDs.
func newTaskIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = newTaskID()
	}
	return ids
}

func (r *Runner) checkTask(task string) error {
	if _, ok := r.cfg.Tasks[task]; !ok {
		return fmt.Errorf("%w %q", ErrUnknownTask, task)
	}
	return nil
}

// Dispatch appends a task to the group's stream, for any instance to run, and
// returns its ID. It may be called before Start and after Stop.
func (r *Runner) Dispatch(ctx context.Context, task string, payload []byte) (string, error) {
	if err := r.checkTask(task); err != nil {
		return "", err
	}
	id := newTaskID()
	err := r.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: r.keys.stream,
		Values: []any{"id", id, "task", task, "payload", payload, "attempt", "1"},
	}).Err()
	if err != nil {
		return "", fmt.Errorf("runner: dispatching %s: %w", task, err)
	}
	r.stats.dispatched.Add(1)
	r.emit(Event{Kind: EventTaskDispatched, TaskID: id, Task: task, Attempt: 1})
	return id, nil
}

// dispatchPipeline is the most XADDs DispatchMany sends in one round trip.
const dispatchPipeline = 1000

// DispatchMany appends one task per payload to the group's stream, like as
// many Dispatch calls, but pipelined: up to 1,000 XADDs per round trip. It
// returns the tasks' IDs in the order of payloads. On error, ids[i] is ""
// for every task whose XADD failed; like a failed Dispatch, such a task may
// still have been stored (a write can land although the client saw an
// error). The others were stored, and each one is reported as dispatched.
// It may be called before Start and after Stop.
func (r *Runner) DispatchMany(ctx context.Context, task string, payloads [][]byte) ([]string, error) {
	if err := r.checkTask(task); err != nil {
		return nil, err
	}
	ids := newTaskIDs(len(payloads))
	cmds := make([]*redis.StringCmd, 0, min(len(payloads), dispatchPipeline))
	var errs error
	for lo := 0; lo < len(payloads); lo += dispatchPipeline {
		hi := min(lo+dispatchPipeline, len(payloads))
		pipe := r.rdb.Pipeline()
		cmds = cmds[:0]
		for i := lo; i < hi; i++ {
			cmds = append(cmds, pipe.XAdd(ctx, &redis.XAddArgs{
				Stream: r.keys.stream,
				Values: []any{"id", ids[i], "task", task, "payload", payloads[i], "attempt", "1"},
			}))
		}
		_, _ = pipe.Exec(ctx) // each command carries its own error
		for j, c := range cmds {
			i := lo + j
			if err := c.Err(); err != nil {
				if errs == nil {
					errs = fmt.Errorf("runner: dispatching %s: %w", task, err)
				}
				ids[i] = ""
				continue
			}
			r.stats.dispatched.Add(1)
			r.emit(Event{Kind: EventTaskDispatched, TaskID: ids[i], Task: task, Attempt: 1})
		}
	}
	return ids, errs
}

// DispatchDelayed stores a task that becomes due after delay, measured by the
// Redis server's clock (so an instance's drifting clock does not move it).
// The leader's scheduler moves it into the stream on its first tick after it
// is due; see Options.ChoreInterval for the lateness that implies. A delay of
// zero or less dispatches at once.
func (r *Runner) DispatchDelayed(ctx context.Context, task string, payload []byte, delay time.Duration) (string, error) {
	if delay <= 0 {
		return r.Dispatch(ctx, task, payload)
	}
	return r.enqueueDelayed(ctx, task, payload, "", delay)
}

// ScheduleAt stores a task that becomes due at the given time (Unix
// milliseconds, compared with the Redis server's clock). A time in the past
// is due at the scheduler's next tick.
func (r *Runner) ScheduleAt(ctx context.Context, task string, payload []byte, at time.Time) (string, error) {
	return r.enqueueDelayed(ctx, task, payload, strconv.FormatInt(at.UnixMilli(), 10), 0)
}

func (r *Runner) enqueueDelayed(ctx context.Context, task string, payload []byte, at string, delay time.Duration) (string, error) {
	if err := r.checkTask(task); err != nil {
		return "", err
	}
	id := newTaskID()
	due, err := enqueueDelayedScript.Run(ctx, r.rdb, []string{r.keys.delayed},
		at, delay.Milliseconds(), id, task, payload, "1").Int64()
	if err != nil {
		return "", fmt.Errorf("runner: dispatching delayed %s: %w", task, err)
	}
	r.stats.dispatched.Add(1)
	r.emit(Event{Kind: EventTaskDispatched, TaskID: id, Task: task, Attempt: 1, Due: time.UnixMilli(due)})
	return id, nil
}
