package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// claimErrHook makes the first XAUTOCLAIM reply that returned entries fail
// too (go-redis can return both: a reply cut short after its entries), and
// records whether the runner still had a pass's window open when its
// fetcher sent an XREADGROUP (no pass is on the wire then).
type claimErrHook struct {
	r        atomic.Pointer[Runner]
	injected atomic.Bool
	reads    atomic.Int64 // XREADGROUPs sent after the injected error
	mu       sync.Mutex
	open     int // of those, sent with a pass's window still open
}

func (h *claimErrHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *claimErrHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *claimErrHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "xreadgroup" && h.injected.Load() {
			if r := h.r.Load(); r != nil {
				r.mu.Lock()
				claiming := r.claiming
				r.mu.Unlock()
				h.mu.Lock()
				if claiming {
					h.open++
				}
				h.mu.Unlock()
				h.reads.Add(1)
			}
		}
		err := next(ctx, cmd)
		if c, ok := cmd.(*redis.XAutoClaimCmd); ok && err == nil {
			if msgs, _ := c.Val(); len(msgs) == 0 || !h.injected.CompareAndSwap(false, true) {
				return err
			}
			err = errors.New("injected: reply cut short after its entries")
			c.SetErr(err)
		}
		return err
	}
}

// A pass whose reply carries entries and an error ends its window like any
// other: the fetcher handles the error and its next reads run with no pass
// on the wire, so what settles meanwhile is not taken for an entry the pass
// may still return. Before, such a pass left the window open until the next
// pass that returned entries.
func TestClaimErrorEndsPassWindow(t *testing.T) {
	f := newFleet(t)
	runs := newCounter()
	cfg := f.config(map[string]Task{"t": countedTask(runs)})
	cfg.ClaimIdle = 200 * time.Millisecond
	// Passes far enough apart that the fetcher reads between them.
	cfg.ChoreInterval = 8 * cfg.Block
	hook := &claimErrHook{}
	client := redis.NewClient(&redis.Options{Addr: f.addr})
	defer client.Close()
	client.AddHook(hook)
	a, err := New(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	hook.r.Store(a)
	// An entry pending under a consumer that never acknowledges it: the
	// instance's pass takes it over after ClaimIdle.
	probe := dial(t, f.addr)
	bg := context.Background()
	if err := probe.XGroupCreateMkStream(bg, a.keys.stream, cfg.Group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	id, err := a.Dispatch(bg, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := probe.XReadGroup(bg, &redis.XReadGroupArgs{Group: cfg.Group, Consumer: "ghost", Streams: []string{a.keys.stream, ">"}, Count: 1}).Err(); err != nil {
		t.Fatal(err)
	}
	ctx, kill := context.WithCancel(bg)
	defer kill()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The pass that took the entry over failed; a later one takes it again
	// and runs it.
	eventually(t, 5*time.Second, "the task to run after a failed pass", func() bool { return runs.get(id) == 1 })
	eventually(t, 5*time.Second, "reads after the failed pass", func() bool { return hook.reads.Load() >= 3 })
	stopCtx, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	if err := a.Stop(stopCtx); err != nil {
		t.Fatalf("stop: %v", err)
	}
	hook.mu.Lock()
	defer hook.mu.Unlock()
	if hook.open > 0 {
		t.Errorf("%d of %d reads after the failed pass were sent with its window still open", hook.open, hook.reads.Load())
	}
}
