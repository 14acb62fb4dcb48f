package observe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/publish"
)

// Defaults of Options.
const (
	DefaultInterval   = 50 * time.Millisecond
	DefaultMaxEntries = 1_000_000
)

// Options configure a Watch.
type Options struct {
	// Redis is a connection to the node that serves the lease (not through
	// anything that may cut it off). Required.
	Redis *redis.Client
	// DB is the database number the key lives in (for the notification
	// channel). Default 0.
	DB int
	// Group names the lease (the key is election.LeaderKey(Group)), or Key
	// is the lease's Redis key itself. One of them is required.
	Group, Key string
	// Interval is the poll lane's period, and the backstop poll's on the
	// notification lane (notifications are fire-and-forget). Default
	// DefaultInterval.
	Interval time.Duration
	// Poll forces the poll lane even where notifications could be turned on.
	Poll bool
	// Source names what is watched, for the report. Default the address.
	Source string
	// Record, if set, receives the recording as it goes (JSON lines), so a
	// killed observer still leaves what it saw.
	Record *Writer
	// Progress, if set, is called about once a second with what the watch
	// sees, on the watch's own goroutine.
	Progress func(Progress)
	// MaxEntries bounds the entries kept in memory for the report (the
	// Record gets them all). Default DefaultMaxEntries.
	MaxEntries int
	// OnStart, if set, is called once the watch has begun, with its header
	// (the lane chosen, its resolution, and why notifications could not be
	// used if they could not).
	OnStart func(Header)
}

// Progress is the live state of a watch.
type Progress struct {
	Elapsed   time.Duration
	Lane      string
	Entries   int // stream entries read
	Late      int // of which written late
	Instances int // instances seen
	// Leaders are the instances whose last transition was a promotion.
	Leaders []string
	// Holder is what the key holds now ("" none).
	Holder string
}

// StreamKeyOf returns the transitions stream of the lease whose Redis key is
// key (publish.StreamKey(group) when key is election.LeaderKey(group)).
func StreamKeyOf(key string) string { return "taskrunner:{" + key + "}:transitions" }

// clockTie maps the observer's monotonic clock to Redis's.
type clockTie struct {
	local time.Time // the midpoint of the TIME call, by the local clock
	redis time.Time
	rtt   time.Duration
}

func (c clockTie) at(t time.Time) time.Time { return c.redis.Add(t.Sub(c.local)) }

// tie calls TIME n times and keeps the call with the shortest round trip.
func tie(ctx context.Context, rdb *redis.Client, n int) (clockTie, error) {
	var best clockTie
	for i := range n {
		sent := time.Now()
		rt, err := rdb.Time(ctx).Result()
		got := time.Now()
		if err != nil {
			return best, fmt.Errorf("observe: reading Redis TIME: %w", err)
		}
		if rtt := got.Sub(sent); i == 0 || rtt < best.rtt {
			best = clockTie{local: sent.Add(rtt / 2), redis: rt, rtt: rtt}
		}
	}
	return best, nil
}

// watcher is one Watch's state.
type watcher struct {
	o      Options
	key    string
	stream string

	mu      sync.Mutex // guards everything below, and Record
	rec     *Recording
	clock   clockTie
	holder  string
	known   bool
	expire  time.Time // Redis time the key expires, from the last PTTL read; zero if none
	lastAt  time.Time // local time of the last read of the key
	late    int
	leaders map[string]bool
	seen    map[string]bool
	dropped int
	err     error
	lastID  string // the last stream entry read; follow's, then drain's
	notify  bool   // the notification lane is on: a del would be notified
}

// Watch follows the lease and its transitions until ctx ends, and returns
// what it saw. An error is returned only when the watch cannot begin
// (Redis unreachable, bad options); trouble later ends the recording with
// the reason in Ended.
func Watch(ctx context.Context, o Options) (*Recording, error) {
	if o.Redis == nil {
		return nil, errors.New("observe: Options.Redis is nil")
	}
	key := o.Key
	if key == "" {
		if o.Group == "" {
			return nil, errors.New("observe: give the group or the lease key")
		}
		key = election.LeaderKey(o.Group)
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.Source == "" {
		o.Source = o.Redis.Options().Addr
	}
	w := &watcher{o: o, key: key, stream: StreamKeyOf(key), leaders: map[string]bool{}, seen: map[string]bool{}}
	c, err := tie(ctx, o.Redis, 5)
	if err != nil {
		return nil, err
	}
	w.clock = c
	h := Header{Group: o.Group, Key: key, Stream: w.stream, Source: o.Source, Start: c.at(time.Now()), RTT: c.rtt}

	var ps *redis.PubSub
	var restore func()
	h.Lane, h.Resolution = LanePoll, o.Interval
	var why string
	if !o.Poll {
		ps, restore, why = w.notifications(ctx)
		if ps != nil {
			h.Lane, h.Resolution, w.notify = LaneNotify, c.rtt, true
		}
	}
	h.LaneNote = why
	w.rec = &Recording{Header: h}
	if o.Record != nil {
		if err := o.Record.Header(h); err != nil {
			return nil, err
		}
	}
	w.read(ctx, "start")
	if o.OnStart != nil {
		o.OnStart(h)
	}

	var wg sync.WaitGroup
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Add(2)
	go func() { defer wg.Done(); w.follow(wctx) }()
	go func() { defer wg.Done(); w.truth(wctx, ps) }()
	progress := time.NewTicker(time.Second)
	resync := time.NewTicker(5 * time.Second)
	start := time.Now()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-resync.C:
			if c, err := tie(ctx, o.Redis, 3); err == nil {
				w.mu.Lock()
				w.clock = c
				w.mu.Unlock()
			}
		case <-progress.C:
			if o.Progress != nil {
				o.Progress(w.progress(time.Since(start), h.Lane))
			}
		}
	}
	progress.Stop()
	resync.Stop()
	cancel()
	wg.Wait()
	if ps != nil {
		_ = ps.Close()
	}
	if restore != nil {
		restore()
	}
	// A last read of the stream, for entries written just before the end.
	dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer dcancel()
	w.drain(dctx)

	w.mu.Lock()
	defer w.mu.Unlock()
	w.rec.End = w.clock.at(time.Now())
	w.rec.Ended = "complete"
	if w.dropped > 0 {
		w.rec.Ended = fmt.Sprintf("incomplete: %d stream entries beyond MaxEntries %d were not kept in memory (the recording file has them all)", w.dropped, o.MaxEntries)
	}
	if w.err != nil {
		w.rec.Ended = "incomplete: " + w.err.Error()
	}
	if o.Record != nil {
		if err := o.Record.End(w.rec.End, w.rec.Ended); err != nil {
			return w.rec, err
		}
		if err := o.Record.Flush(); err != nil {
			return w.rec, err
		}
	}
	return w.rec, nil
}

// notificationFlags are the keyspace notification classes the lane needs:
// keyspace events (K) for generic commands (g: del, expire), expirations
// (x) and strings (set: $).
const notificationFlags = "Kgx$"

// notifications turns keyspace notifications on where the server allows it
// (keeping the flags already set, and restoring them at the end) and
// subscribes to the key's channel. On refusal it returns why.
func (w *watcher) notifications(ctx context.Context) (*redis.PubSub, func(), string) {
	rdb := w.o.Redis
	cur, err := rdb.ConfigGet(ctx, "notify-keyspace-events").Result()
	if err != nil {
		return nil, nil, "keyspace notifications unavailable (CONFIG GET: " + err.Error() + "): polling"
	}
	old := cur["notify-keyspace-events"]
	want := old
	has := func(f byte) bool {
		if strings.IndexByte(want, f) >= 0 {
			return true
		}
		return f != 'K' && f != 'E' && strings.IndexByte(want, 'A') >= 0 // A = g$lshzxet
	}
	for _, f := range []byte(notificationFlags) {
		if !has(f) {
			want += string(f)
		}
	}
	var restore func()
	if want != old {
		if err := rdb.ConfigSet(ctx, "notify-keyspace-events", want).Err(); err != nil {
			return nil, nil, "keyspace notifications refused (CONFIG SET: " + err.Error() + "): polling"
		}
		restore = func() {
			rctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = rdb.ConfigSet(rctx, "notify-keyspace-events", old).Err()
		}
	}
	ps := rdb.Subscribe(ctx, fmt.Sprintf("__keyspace@%d__:%s", w.o.DB, w.key))
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		if restore != nil {
			restore()
		}
		return nil, nil, "keyspace notifications: subscribing failed (" + err.Error() + "): polling"
	}
	return ps, restore, ""
}

// truth follows the key: by notifications when ps is set, with a backstop
// poll, else by the poll alone.
func (w *watcher) truth(ctx context.Context, ps *redis.PubSub) {
	var msgs <-chan *redis.Message
	if ps != nil {
		msgs = ps.Channel()
	}
	tick := time.NewTicker(w.o.Interval)
	defer tick.Stop()
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				msgs = nil
				continue
			}
			w.read(ctx, m.Payload)
		case <-tick.C:
			w.read(ctx, "poll")
		case <-ctx.Done():
			return
		}
	}
}

// read reads the holder and its PTTL, and records a change. note is the
// notification that prompted it, "poll", or "start".
func (w *watcher) read(ctx context.Context, note string) {
	got := time.Now() // a notification arrived, or a poll began
	pipe := w.o.Redis.Pipeline()
	get := pipe.Get(ctx, w.key)
	pttl := pipe.PTTL(ctx, w.key)
	_, err := pipe.Exec(ctx)
	done := time.Now()
	if err != nil && !errors.Is(err, redis.Nil) {
		return // unreachable for now: the next poll tells
	}
	h, _ := get.Result()
	rtt := done.Sub(got)

	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.clock
	prevExpire, prevAt := w.expire, w.lastAt
	if d, err := pttl.Result(); err == nil && d > 0 {
		w.expire = c.at(got.Add(rtt / 2)).Add(d)
	} else {
		w.expire = time.Time{}
	}
	w.lastAt = got
	if w.known && h == w.holder {
		return
	}
	first := !w.known
	w.known, w.holder = true, h
	hc := HolderChange{Holder: h, Note: note}
	tieU := c.rtt / 2
	switch {
	case first:
		hc.At, hc.Uncertainty = c.at(got.Add(rtt/2)), rtt/2+tieU
	case note == "poll" || note == "start":
		// The change happened since the last read. A key gone whose last
		// PTTL said it expires in between expired then, or was deleted
		// before: somewhere in [last read, expiry].
		from, to := c.at(prevAt), c.at(done)
		expired := h == "" && !prevExpire.IsZero() && prevExpire.After(from) && !prevExpire.After(to)
		switch {
		case expired && w.notify:
			// Gone at the instant PTTL predicted, and no del was
			// notified: it expired then (the poll's own read deleted it,
			// as any access to an expired key does).
			hc.At, hc.Uncertainty, hc.Note = prevExpire, time.Millisecond+tieU, "poll (expired at the PTTL's instant)"
		case expired:
			// Expired then, or deleted earlier: the poll cannot tell.
			hc.At = from.Add(prevExpire.Sub(from) / 2)
			hc.Uncertainty, hc.Note = prevExpire.Sub(from)/2+tieU, "poll (expired at the PTTL's instant, or deleted before)"
		default:
			hc.At = from.Add(to.Sub(from) / 2)
			hc.Uncertainty = to.Sub(from)/2 + tieU
		}
	case note == "expired" && !prevExpire.IsZero() && !prevExpire.After(c.at(got)):
		// Redis's expiry is the instant the last PTTL read predicted (PTTL
		// is in milliseconds); the notification comes later.
		hc.At, hc.Uncertainty = prevExpire, time.Millisecond+tieU
	default:
		// The notification left Redis at the change and took a one-way
		// trip, at most the round trip measured now.
		hc.At, hc.Uncertainty = c.at(got).Add(-rtt/2), rtt/2+tieU
	}
	w.rec.Holders = append(w.rec.Holders, hc)
	if w.o.Record != nil {
		werr := w.o.Record.Holder(hc)
		if werr == nil {
			werr = w.o.Record.Flush()
		}
		if werr != nil && w.err == nil {
			w.err = werr
		}
	}
}

// follow reads the stream from its beginning (the history tells who led
// when the watch began) until ctx ends.
func (w *watcher) follow(ctx context.Context) {
	last := "0"
	defer func() { w.lastID = last }()
	for ctx.Err() == nil {
		n, next, err := w.readStream(ctx, last, 200*time.Millisecond)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			select { // unreachable: try again shortly
			case <-time.After(w.o.Interval):
			case <-ctx.Done():
				return
			}
			continue
		}
		if n >= 0 {
			last = next
		}
	}
}

// drain reads what the stream holds beyond the last entry read.
func (w *watcher) drain(ctx context.Context) {
	for {
		n, next, err := w.readStream(ctx, w.lastID, -1)
		if err != nil || n == 0 {
			return
		}
		w.lastID = next
	}
}

// readStream reads up to one batch after last, waiting up to block (-1: not
// at all), and keeps it. It returns how many entries it read and the new
// last ID.
func (w *watcher) readStream(ctx context.Context, last string, block time.Duration) (int, string, error) {
	args := &redis.XReadArgs{Streams: []string{w.stream, last}, Count: 1000, Block: block}
	if block < 0 {
		args.Block = -1
	}
	res, err := w.o.Redis.XRead(ctx, args).Result()
	if errors.Is(err, redis.Nil) {
		return 0, last, nil
	}
	if err != nil {
		return 0, last, err
	}
	n := 0
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range res {
		for _, m := range s.Messages {
			last = m.ID
			e, err := publish.ParseEntry(m.ID, m.Values)
			if err != nil {
				continue // not ours, or another version: skipped
			}
			n++
			w.keep(e)
		}
	}
	if w.o.Record != nil && n > 0 {
		// What was read is on disk before the next read: a killed
		// observer leaves all it saw.
		if err := w.o.Record.Flush(); err != nil && w.err == nil {
			w.err = err
		}
	}
	return n, last, nil
}

// keep stores one entry; w.mu is held.
func (w *watcher) keep(e publish.Entry) {
	if e.Late {
		w.late++
	}
	w.seen[e.Instance] = true
	switch e.Kind {
	case election.Promoted:
		w.leaders[e.Instance] = true
	case election.Demoted:
		delete(w.leaders, e.Instance)
	}
	if len(w.rec.Entries) < w.o.MaxEntries {
		w.rec.Entries = append(w.rec.Entries, e)
	} else {
		w.dropped++
	}
	if w.o.Record != nil {
		if err := w.o.Record.Entry(e); err != nil && w.err == nil {
			w.err = err
		}
	}
}

func (w *watcher) progress(elapsed time.Duration, lane string) Progress {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := Progress{Elapsed: elapsed, Lane: lane, Entries: len(w.rec.Entries) + w.dropped, Late: w.late,
		Instances: len(w.seen), Holder: w.holder}
	for id := range w.leaders {
		p.Leaders = append(p.Leaders, id)
	}
	return p
}
