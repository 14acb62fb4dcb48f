package runner

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// landRead is a go-redis hook that, once armed, lets a read of the runner's
// consumer land right after the first of Stop's leave calls that names the
// consumer and the stream: as a fetch still on the wire, or a client's
// retry of one, would. It adds an entry first, so the read delivers it.
type landRead struct {
	armed atomic.Bool
	admin *redis.Client
	keys  keys
	group string
	id    string
	entry atomic.Value // the entry it delivered
}

func (h *landRead) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *landRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *landRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.armed.Load() && h.leaveCall(cmd) && h.armed.CompareAndSwap(true, false) {
			id := h.admin.XAdd(ctx, &redis.XAddArgs{Stream: h.keys.stream, Values: []any{"id", "late", "task", "t", "attempt", "1"}}).Val()
			h.entry.Store(id)
			h.admin.XReadGroup(ctx, &redis.XReadGroupArgs{Group: h.group, Consumer: h.id, Streams: []string{h.keys.stream, ">"}, Count: 1})
		}
		return err
	}
}

// leaveCall: a command naming this consumer and the stream that is not a
// read of it.
func (h *landRead) leaveCall(cmd redis.Cmder) bool {
	if slices.Contains([]string{"xreadgroup", "xautoclaim", "xclaim"}, cmd.Name()) {
		return false
	}
	args := cmd.Args()
	return slices.Contains(args, any(h.keys.stream)) && slices.Contains(args, any(h.id))
}

// A graceful Stop never leaves an entry delivered to its consumer and no
// longer pending. Before the fix, leave checked the consumer's pending
// entries and deleted the consumer in two calls: a read landing between them
// was deleted with the consumer, its entry orphaned (in the stream, pending
// nowhere: no XAUTOCLAIM ever returns it).
func TestLeaveOrphansNoEntry(t *testing.T) {
	f := newFleet(t)
	admin := dial(t, f.addr)
	c := redis.NewClient(&redis.Options{Addr: f.addr})
	t.Cleanup(func() { _ = c.Close() })
	cfg := f.config(map[string]Task{"t": {Handler: func(context.Context, []byte) error { return nil }}})
	r, err := New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &landRead{admin: admin, keys: r.keys, group: cfg.Group, id: r.ElectorID()}
	c.AddHook(h)
	ctx := t.Context()
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "leads", r.IsLeader)
	h.armed.Store(true)
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	id, _ := h.entry.Load().(string)
	if id == "" {
		t.Fatal("no leave call seen: nothing tested")
	}
	pending, err := admin.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: r.keys.stream, Group: cfg.Group, Start: "-", End: "+", Count: 10}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].ID != id || pending[0].Consumer != r.ElectorID() {
		t.Fatalf("pending %+v; want entry %s pending under %s, for XAUTOCLAIM to return", pending, id, r.ElectorID())
	}
	if n := admin.ZScore(ctx, r.keys.instances, r.ElectorID()).Err(); n != redis.Nil {
		t.Errorf("heartbeat still there after Stop (%v)", n)
	}
}
