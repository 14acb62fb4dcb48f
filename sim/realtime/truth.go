package realtime

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/env"
)

// truthPoll is how often the watcher also GETs the key, to catch what a
// missed notification (they are fire-and-forget) would hide.
const truthPoll = 100 * time.Millisecond

// Truth watches who holds the lease in Redis, on its own unproxied
// connection, and records a RedisHolder event at every change. It learns of
// changes from keyspace notifications (set, expire, expired, del) and GETs
// the key after each to learn the holder. For expirations it records the
// notification's lateness: how long after the key's TTL ran out (as last seen
// by PTTL) the notification arrived — the measurement error of this lane.
type Truth struct {
	key  string
	rec  *Recorder
	auth env.Auth

	rdb    *redis.Client      // guarded by checkMu: Follow replaces it
	closed bool               // guarded by checkMu: Close has run
	lanes  chan *redis.PubSub // Follow hands the watcher its new subscription

	checkMu  sync.Mutex // serializes check
	mu       sync.Mutex
	holder   string
	expireAt time.Duration // run time the key should expire, from the last PTTL; 0 if none

	cancel context.CancelFunc
	done   chan struct{}
}

// WatchTruth starts watching key on the Redis at addr.
func WatchTruth(ctx context.Context, addr, key string, rec *Recorder) (*Truth, error) {
	return WatchTruthAuth(ctx, addr, env.Auth{}, key, rec)
}

// WatchTruthAuth is WatchTruth on a Redis that needs auth (a password, an
// ACL user, TLS) or another database than 0.
func WatchTruthAuth(ctx context.Context, addr string, auth env.Auth, key string, rec *Recorder) (*Truth, error) {
	t := &Truth{
		key:   key,
		rec:   rec,
		auth:  auth,
		lanes: make(chan *redis.PubSub),
		done:  make(chan struct{}),
	}
	rdb, ps, err := t.subscribe(ctx, addr)
	if err != nil {
		return nil, err
	}
	t.rdb = rdb
	ctx, t.cancel = context.WithCancel(context.Background())
	go func() {
		defer close(t.done)
		defer func() { _ = ps.Close() }()
		msgs := ps.Channel()
		tick := time.NewTicker(truthPoll)
		defer tick.Stop()
		for {
			select {
			case m, ok := <-msgs:
				if !ok {
					msgs = nil // until Follow hands over a new lane; polls go on
					continue
				}
				t.check(ctx, m.Payload)
			case next := <-t.lanes:
				_ = ps.Close()
				ps, msgs = next, next.Channel()
			case <-tick.C:
				t.check(ctx, "")
			case <-ctx.Done():
				return
			}
		}
	}()
	t.check(ctx, "")
	return t, nil
}

// subscribe opens a client on the node at addr and subscribes to the key's
// keyspace notifications there (they are local to the node that holds it).
func (t *Truth) subscribe(ctx context.Context, addr string) (*redis.Client, *redis.PubSub, error) {
	rdb := redis.NewClient(t.auth.Apply(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second, ReadTimeout: time.Second}))
	// The spawned Redis has this already; an external one may not.
	if err := rdb.ConfigSet(ctx, "notify-keyspace-events", "Kgx$").Err(); err != nil {
		_ = rdb.Close()
		return nil, nil, err
	}
	ps := rdb.Subscribe(ctx, fmt.Sprintf("__keyspace@%d__:%s", t.auth.DB, t.key))
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		_ = rdb.Close()
		return nil, nil, err
	}
	return rdb, ps, nil
}

// followTries bounds Follow's attempts at a node that does not answer
// within the watcher's one-second timeout: on a loaded machine a node
// just promoted answered its first command later than that (.ci/load at
// load 9: the run ended on a harness error, its proxies never moved to the
// new primary, and FAILed).
const followTries = 5

// Follow moves the watcher to the node at addr, which now serves the key
// (after a failover or a slot migration), and reads the holder there at
// once: a key the new node lacks is recorded as gone at this moment. why
// ("failover", "migration") is the event's Detail.
func (t *Truth) Follow(ctx context.Context, addr, why string) error {
	var rdb *redis.Client
	var ps *redis.PubSub
	var err error
	for try := 1; ; try++ {
		rdb, ps, err = t.subscribe(ctx, addr)
		var ne net.Error
		if err == nil || try == followTries || ctx.Err() != nil || !errors.As(err, &ne) || !ne.Timeout() {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("following the lease to %s: %w", addr, err)
	}
	// Reads move first, and the first read on the new node is this one, so
	// a change the move reveals is recorded as why, at the move (a poll in
	// between would record it as a poll; one on the old node would see a
	// resyncing replica).
	t.checkMu.Lock()
	if t.closed {
		t.checkMu.Unlock()
		_ = ps.Close()
		_ = rdb.Close()
		return errors.New("following the lease: the watcher is closed")
	}
	old := t.rdb
	t.rdb = rdb
	t.checkLocked(ctx, why)
	t.checkMu.Unlock()
	_ = old.Close()
	select {
	case t.lanes <- ps:
	case <-t.done:
		_ = ps.Close() // Close closes rdb
		return errors.New("following the lease: the watcher has stopped")
	}
	return nil
}

// check reads the holder and records a change. note is the notification
// that prompted it, "" for a poll. It reports whether Redis answered.
func (t *Truth) check(ctx context.Context, note string) bool {
	// One check at a time, read to record: Reset (on the fault goroutine)
	// and the watcher must not let an older read overwrite a newer holder.
	t.checkMu.Lock()
	defer t.checkMu.Unlock()
	return t.checkLocked(ctx, note)
}

// checkLocked is check with checkMu held.
func (t *Truth) checkLocked(ctx context.Context, note string) bool {
	now := t.rec.Since()
	var late time.Duration
	t.mu.Lock()
	if note == "expired" && t.expireAt > 0 && now > t.expireAt {
		late = now - t.expireAt
	}
	t.mu.Unlock()

	pipe := t.rdb.Pipeline()
	get := pipe.Get(ctx, t.key)
	pttl := pipe.PTTL(ctx, t.key)
	_, err := pipe.Exec(ctx)
	if err != nil && !errors.Is(err, redis.Nil) {
		return false // Redis unreachable (restarting): the next poll or notification tells
	}
	h, _ := get.Result()
	t.mu.Lock()
	if d, err := pttl.Result(); err == nil && d > 0 {
		t.expireAt = now + d
	} else {
		t.expireAt = 0
	}
	changed := h != t.holder
	t.holder = h
	t.mu.Unlock()
	if changed {
		t.rec.Record(model.Event{Kind: model.RedisHolder, Instance: -1, Holder: h, Lateness: late, Detail: note})
	}
	return true
}

// Reset re-reads the holder right after Redis restarted. The watcher's
// pooled connections died with the old server, so the first tries fail;
// it retries for up to a second rather than wait for the next poll, which
// would hide the first truthPoll of the window with no holder.
func (t *Truth) Reset(ctx context.Context) {
	for range 100 {
		if t.check(ctx, "restart") || ctx.Err() != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Holder returns the last holder seen.
func (t *Truth) Holder() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.holder
}

// Close stops the watcher and waits for it.
func (t *Truth) Close() error {
	t.cancel()
	<-t.done
	t.checkMu.Lock()
	defer t.checkMu.Unlock()
	t.closed = true
	return t.rdb.Close()
}
