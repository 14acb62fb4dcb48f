package runner

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// heldScript lists the task IDs a group's keys hold: every entry of the
// stream (ready, or pending under a consumer: acknowledged entries are
// deleted) and every member of the delayed ZSET (delayed tasks and retries,
// msgpack(id, task, payload, attempt)), and every entry of the dead-letter
// stream. KEYS: stream, delayed, dead. Returns {stream ids, delayed ids,
// dead ids}. Read-only (EVAL_RO), so a replica can answer.
var heldScript = redis.NewScript(`
local function ids(stream)
  local out = {}
  for _, e in ipairs(redis.call('XRANGE', stream, '-', '+')) do
    local f = e[2]
    for i = 1, #f, 2 do
      if f[i] == 'id' then out[#out + 1] = f[i + 1] break end
    end
  end
  return out
end
local d = {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  d[#d + 1] = cmsgpack.unpack(m)
end
return {ids(KEYS[1]), d, ids(KEYS[3])}`)

// HeldTasks are the tasks a group still holds in Redis (see Held).
type HeldTasks struct {
	// Stream are the IDs of tasks in the stream: waiting to be read, or
	// read and not yet acknowledged (running, read ahead, or left by a
	// crashed instance for reclaim).
	Stream []string
	// Delayed are the IDs of delayed tasks and retries not yet due or not
	// yet moved to the stream by a leader.
	Delayed []string
	// Dead are the IDs of dead-lettered tasks: failed with no retries
	// left, kept in the dead-letter stream. Not lost, and not to run again.
	Dead []string
}

// Held lists the tasks group still holds in Redis: dispatched and not yet
// completed, so still to run (Stream, Delayed), and dead-lettered (Dead). A
// task missing from both a completion record and Held is lost. It reads the
// whole stream, delayed ZSET and dead-letter stream in one read-only script:
// a diagnostic (the chaos harness uses it at the end of a run), O(queue
// length), not for a hot path.
func Held(ctx context.Context, rdb redis.Scripter, group string) (HeldTasks, error) {
	k := keysFor(group)
	v, err := heldScript.RunRO(ctx, rdb, []string{k.stream, k.delayed, k.dead}).Slice()
	if err != nil {
		return HeldTasks{}, fmt.Errorf("runner: listing the tasks group %q holds: %w", group, err)
	}
	var h HeldTasks
	if len(v) == 3 {
		h.Stream, h.Delayed, h.Dead = strs(v[0]), strs(v[1]), strs(v[2])
	}
	return h, nil
}

func strs(v any) []string {
	xs, _ := v.([]any)
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
