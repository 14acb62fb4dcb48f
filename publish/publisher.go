package publish

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
)

// Defaults of Options.
const (
	DefaultMaxLen  = 10000
	DefaultBuffer  = 1024
	DefaultTimeout = time.Second
	DefaultRetry   = 250 * time.Millisecond
)

// Options configure a Publisher. Every zero value means the documented
// default.
type Options struct {
	// Redis stores the streams (required): usually the elector's or the
	// runner's client. Any redis.Scripter works (a *redis.ClusterClient
	// too: each stream is in its lease's slot).
	Redis redis.Scripter
	// MaxLen caps the stream, approximately (XADD MAXLEN ~). Default
	// DefaultMaxLen entries.
	MaxLen int64
	// Buffer is how many transitions wait for Redis at most. When it is
	// full the oldest is dropped and counted (Dropped). Default
	// DefaultBuffer.
	Buffer int
	// Timeout bounds each write with a context deadline (go-redis honours
	// it with ContextTimeoutEnabled; otherwise the client's ReadTimeout
	// rules). Default DefaultTimeout. Close without a deadline of its own
	// takes 2 × Timeout at most.
	Timeout time.Duration
	// Retry is how long the writer waits after a failed write before the
	// next try. Default DefaultRetry.
	Retry time.Duration
	// Clock stamps the transitions (wall and monotonic) and times the
	// retries. Default: the real clock. (A simulator passes the instance's
	// own, which may drift or jump, as a real host's may.)
	Clock clock.Clock
	// Logger receives debug logs of failed writes. Default: none.
	Logger *slog.Logger
}

// Publisher writes an elector's transitions to StreamKey(group). Create it
// with Attach; Close it after the elector has stopped.
type Publisher struct {
	rdb     redis.Scripter
	id      string            // this publisher's, in every entry: its Seq is per publisher
	keys    map[string]string // group -> stream key; writer goroutine only
	max     int64
	cap     int
	timeout time.Duration
	retry   time.Duration
	clock   clock.Clock
	start   time.Time
	log     *slog.Logger

	mu      sync.Mutex
	buf     []Entry // oldest first, at most cap
	seq     uint64
	dropped uint64
	failing bool // the last write failed: what waits now is late
	closed  bool
	closeBy time.Time // Close's deadline: no write outlasts it

	written atomic.Uint64
	failed  atomic.Uint64

	wake    chan struct{}
	closing chan struct{}
	ctx     context.Context // cancelled by Close when its ctx is done
	cancel  context.CancelFunc
	done    chan struct{}
}

// New returns a Publisher writing to po.Redis; its writer goroutine runs
// until Close. Install its Observe as the elector's hook:
//
//	pub, err := publish.New(publish.Options{Redis: rdb})
//	opts.OnTransition = pub.Observe // election.Opts, or runner Options.Election
//	...
//	elector.Stop()                  // or runner.Stop
//	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
//	defer cancel()
//	pub.Close(ctx)                  // writes what waits, the demotion of Stop too
//
// One Publisher per elector: its sequence numbers let an observer see holes.
func New(po Options) (*Publisher, error) {
	if po.Redis == nil {
		return nil, errors.New("publish: Options.Redis is nil")
	}
	if po.MaxLen < 0 || po.Buffer < 0 || po.Timeout < 0 || po.Retry < 0 {
		return nil, fmt.Errorf("publish: negative option in %+v", po)
	}
	p := newPublisher(po)
	go p.run()
	return p, nil
}

func newPublisher(po Options) *Publisher {
	if po.MaxLen == 0 {
		po.MaxLen = DefaultMaxLen
	}
	if po.Buffer == 0 {
		po.Buffer = DefaultBuffer
	}
	if po.Timeout == 0 {
		po.Timeout = DefaultTimeout
	}
	if po.Retry == 0 {
		po.Retry = DefaultRetry
	}
	if po.Clock == nil {
		po.Clock = clock.New()
	}
	if po.Logger == nil {
		po.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Publisher{
		rdb: po.Redis, max: po.MaxLen, cap: po.Buffer, timeout: po.Timeout, retry: po.Retry, clock: po.Clock,
		log: po.Logger, wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{}), keys: map[string]string{},
	}
	var id [8]byte
	_, _ = rand.Read(id[:]) // never fails (crypto/rand docs)
	p.id = hex.EncodeToString(id[:])
	p.start = p.clock.Now()
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p
}

// Observe takes one transition. It never blocks and never touches Redis:
// it stamps the entry and appends it to the buffer (dropping the oldest if
// the buffer is full). It is the hook Attach installs; call it yourself
// only for an elector you wired without Attach.
func (p *Publisher) Observe(t election.Transition) {
	e := Entry{Kind: t.Kind, Instance: t.ID, Group: t.Key, Term: t.Term, Token: t.Token, Reason: t.Reason,
		TTL: t.TTL, Wait: t.Wait, Safe: t.Safe, Publisher: p.id}
	if t.Err != nil {
		e.Err = t.Err.Error()
	}
	e.Wall, e.Mono = t.At, p.clock.Since(p.start)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.seq++
	e.Seq, e.Late = p.seq, p.failing
	if len(p.buf) == p.cap {
		p.buf = append(p.buf[:0], p.buf[1:]...)
		p.dropped++
	}
	p.buf = append(p.buf, e)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Stats are a publisher's counters.
type Stats struct {
	Written uint64 // entries written to the stream
	Failed  uint64 // writes that failed (each is retried)
	Dropped uint64 // transitions dropped because the buffer was full
	Pending int    // transitions waiting in the buffer now
}

// Stats returns the publisher's counters.
func (p *Publisher) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Written: p.written.Load(), Failed: p.failed.Load(), Dropped: p.dropped, Pending: len(p.buf)}
}

// Close stops taking transitions, writes what waits while ctx allows, and
// stops the writer. Close it after the elector's Stop, so the demotion of
// Stop is written too. It returns an error naming how many transitions were
// not written. Close is idempotent.
//
// Close returns by ctx's deadline, whatever the client's timeouts; a ctx
// without a deadline (context.Background()) is given one of
// 2 × Options.Timeout (2s by default), so Close never waits on a Redis
// that refuses or never answers for longer than that. Pass the time a
// shutdown can spare:
//
//	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
//	defer cancel()
//	err := pub.Close(ctx)
//
// Every write Close waits for ends by its deadline when the client honours
// context deadlines (go-redis's ContextTimeoutEnabled, as the elector's
// op_timeout needs too): then nothing of the publisher outlives Close but
// a write already on the wire when Close was called, which ends within
// Options.Timeout. A client that does not honour them (go-redis's default)
// keeps a write on the wire until its own ReadTimeout (3s by default, or
// never with -1) or its Close ends it; the writer goroutine ends with that
// write and writes nothing more.
func (p *Publisher) Close(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 2*p.timeout)
		defer cancel()
	}
	by, _ := ctx.Deadline()
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		p.closeBy = by
		close(p.closing)
	}
	p.mu.Unlock()
	stop := context.AfterFunc(ctx, p.cancel)
	defer stop()
	select {
	case <-p.done:
	case <-ctx.Done():
		// The writer stops at its next step; a write the client keeps on
		// the wire is not waited for.
		p.cancel()
	}
	if n := p.Stats().Pending; n > 0 {
		return fmt.Errorf("publish: closing: %d transitions not written", n)
	}
	return nil
}

// run is the writer goroutine: it writes the buffer oldest first, one XADD
// per entry, and after a failure marks what waits as late and retries.
func (p *Publisher) run() {
	defer close(p.done)
	var rtt time.Duration
	closing := p.closing
	for {
		p.mu.Lock()
		if len(p.buf) == 0 {
			p.mu.Unlock()
			if closing == nil {
				return
			}
			select {
			case <-p.wake:
			case <-closing:
				closing = nil
			case <-p.ctx.Done():
				return
			}
			continue
		}
		e := p.buf[0]
		e.Dropped = p.dropped
		p.mu.Unlock()

		e.RTT = rtt
		e.PubWall, e.PubMono = p.clock.Now(), p.clock.Since(p.start)
		took, err := p.write(e)
		if err == nil {
			rtt = took
			p.written.Add(1)
			p.mu.Lock()
			if len(p.buf) > 0 && p.buf[0].Seq == e.Seq { // not dropped meanwhile
				p.buf = p.buf[1:]
			} else if len(p.buf) == 0 || p.buf[0].Seq > e.Seq {
				// Dropped from the buffer while its write was on the
				// wire, yet written: it was not lost, so it is not
				// counted as dropped.
				p.dropped--
			}
			p.failing = false
			p.mu.Unlock()
			continue
		}
		p.failed.Add(1)
		p.log.Debug("publishing a transition failed", "seq", e.Seq, "err", err)
		p.mu.Lock()
		p.failing = true
		for i := range p.buf {
			p.buf[i].Late = true
		}
		p.mu.Unlock()
		if p.ctx.Err() != nil {
			return
		}
		t := p.clock.Timer(p.retry)
		select {
		case <-t.C:
		case <-p.ctx.Done():
			t.Stop()
			return
		}
	}
}

// xaddScript writes one entry with Redis's TIME, in one round trip.
// ARGV[1] is MAXLEN, the rest the entry's field/value pairs.
var xaddScript = redis.NewScript(`
local t = redis.call('TIME')
local args = {'XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'rs', t[1], 'ru', t[2]}
for i = 2, #ARGV do args[#args + 1] = ARGV[i] end
return redis.call(unpack(args))
`)

// write runs the script for e and returns its round trip by the
// publisher's clock. Its deadline is Options.Timeout, or Close's deadline
// when that comes first.
func (p *Publisher) write(e Entry) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.timeout)
	defer cancel()
	p.mu.Lock()
	by := p.closeBy
	p.mu.Unlock()
	if !by.IsZero() {
		var cancelBy context.CancelFunc
		ctx, cancelBy = context.WithDeadline(ctx, by)
		defer cancelBy()
	}
	sent := p.clock.Now()
	key, ok := p.keys[e.Group]
	if !ok {
		key = StreamKey(e.Group)
		p.keys[e.Group] = key
	}
	args := append([]any{p.max}, e.fields()...)
	if err := xaddScript.Run(ctx, p.rdb, []string{key}, args...).Err(); err != nil {
		return 0, fmt.Errorf("publishing transition %d to %s: %w", e.Seq, key, err)
	}
	return p.clock.Since(sent), nil
}
