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
	// Poll forces the poll lane even where the server sends keyspace
	// notifications.
	Poll bool
	// EnableNotifications lets the watch turn keyspace notifications on
	// where they are off: it adds the classes the lane needs that
	// notify-keyspace-events lacks (CONFIG SET), never removes one, and
	// leaves them on when it ends, since another client (another observer)
	// may rely on them by then. Default false: the watch writes nothing
	// to the Redis it watches, and uses notifications only where the
	// server already sends them (read with CONFIG GET), else polls.
	EnableNotifications bool
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

	// Addrs are other data nodes of the same Redis (the primary's
	// replicas), tried when the node followed stops serving the lease: it
	// does not answer, or reports a role other than master (a replica was
	// promoted). The replicas the primary lists in ROLE are tried too, so a
	// replica promoted by hand or by an operator is found without them.
	// Each is dialled with Redis's options (auth, TLS), its address
	// replaced.
	Addrs []string
	// Sentinel, if set, says where the primary is: the watch asks the
	// Sentinels for it at the start and whenever the node it follows fails,
	// and moves as soon as one announces +switch-master. Redis, if nil, is
	// then dialled at the address the Sentinels name (with SentinelOptions'
	// NodeOptions).
	Sentinel *SentinelOptions
	// OnSwitch, if set, is called when the watch has moved to a new
	// primary, on the watch's own goroutine.
	OnSwitch func(Switch)
}

// SentinelOptions locate the primary through Redis Sentinel.
type SentinelOptions struct {
	// Addrs are the Sentinels' addresses. Required.
	Addrs []string
	// Master is the name the Sentinels monitor the primary under. Required.
	Master string
	// Password (and Username) authenticate to the Sentinels. Default none.
	Username, Password string
	// NodeOptions dial the data nodes when Options.Redis is nil (their
	// Addr is replaced). Default: no auth, no TLS.
	NodeOptions *redis.Options
}

// Progress is the live state of a watch.
type Progress struct {
	Elapsed   time.Duration
	Lane      string
	Node      string // the node followed
	Switches  int    // moves to a new primary so far
	Entries   int    // stream entries read
	Late      int    // of which written late
	Dropped   int    // stream entries that could not be read
	Instances int    // instances seen
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

// node is a data node a watch follows.
type node struct {
	addr string
	rdb  *redis.Client
	ps   *redis.PubSub // the notification lane's subscription; nil on the poll lane
	lane string
	own  bool // the watch dialled it, and closes it
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
	lastAt  time.Time // local time of the last read of the key on a node that served it
	late    int
	leaders map[string]bool
	seen    map[string]bool
	// maxSeq is each publisher's highest Seq kept: the re-read of a new
	// primary's stream after a switch skips what was read on the old one.
	maxSeq   map[string]uint64
	dropped  int
	err      error
	lastID   string          // the last stream entry read on the node followed
	notify   bool            // the notification lane is on: a del would be notified
	replicas map[string]bool // the nodes the primary's ROLE listed
	noRole   bool            // ROLE is refused: a promotion is noticed only when the node fails
	node     string          // the address followed

	suspect   chan string // why the node followed may no longer serve the lease
	sentinels []*redis.SentinelClient
}

// suspectf asks the watch to look for the primary, without waiting.
func (w *watcher) suspectf(format string, args ...any) {
	select {
	case w.suspect <- fmt.Sprintf(format, args...):
	default:
	}
}

// Watch follows the lease and its transitions until ctx ends, and returns
// what it saw. An error is returned only when the watch cannot begin
// (Redis unreachable, bad options); trouble later ends the recording with
// the reason in Ended. After a failover it moves to the new primary (see
// Options.Addrs and Options.Sentinel) and records the move (Switch).
func Watch(ctx context.Context, o Options) (*Recording, error) {
	if o.Redis == nil && o.Sentinel == nil {
		return nil, errors.New("observe: Options.Redis is nil (and no Sentinel names the primary)")
	}
	if s := o.Sentinel; s != nil && (len(s.Addrs) == 0 || s.Master == "") {
		return nil, errors.New("observe: Options.Sentinel needs the Sentinels' addresses and the master's name")
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
	w := &watcher{o: o, key: key, stream: StreamKeyOf(key), leaders: map[string]bool{}, seen: map[string]bool{},
		maxSeq: map[string]uint64{}, replicas: map[string]bool{}, suspect: make(chan string, 1)}
	var announce sync.WaitGroup
	defer func() {
		for _, sc := range w.sentinels {
			_ = sc.Close()
		}
		announce.Wait()
	}()
	cur := &node{rdb: o.Redis}
	how := "not followed: give the other nodes' addresses or the Sentinels"
	if s := o.Sentinel; s != nil {
		for _, a := range s.Addrs {
			w.sentinels = append(w.sentinels, redis.NewSentinelClient(&redis.Options{Addr: a, Username: s.Username, Password: s.Password,
				MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: time.Second}))
		}
		addr, err := w.askSentinels(ctx)
		if err != nil {
			return nil, err
		}
		if o.Redis == nil || o.Redis.Options().Addr != addr {
			cur = &node{rdb: w.dial(addr), own: true}
		}
		how = fmt.Sprintf("Sentinel (master %s at %s): moves on +switch-master, or when the node fails", s.Master, strings.Join(s.Addrs, ","))
		if o.Source == "" {
			o.Source = fmt.Sprintf("redis %s (Sentinel master %s)", addr, s.Master)
		}
	}
	cur.addr = cur.rdb.Options().Addr
	if o.Source == "" {
		o.Source = cur.addr
	}
	w.o, w.node = o, cur.addr
	fail := func(err error) (*Recording, error) {
		if cur.own {
			_ = cur.rdb.Close()
		}
		return nil, err
	}
	c, err := tie(ctx, cur.rdb, 5)
	if err != nil {
		return fail(err)
	}
	w.clock = c
	if o.Sentinel == nil {
		if _, _, _, err := role(ctx, cur.rdb); err != nil {
			w.noRole = true
			how = "ROLE refused (" + err.Error() + "): a promotion is noticed only when the node stops answering"
		} else {
			how = "ROLE read with every poll: moves when the node is no longer the primary, to the primary among its replicas"
		}
		if len(o.Addrs) > 0 {
			how += " and " + strings.Join(o.Addrs, ",")
		}
	}
	h := Header{Group: o.Group, Key: key, Stream: w.stream, Source: o.Source, Start: c.at(time.Now()), RTT: c.rtt, Failover: how}
	h.LaneNote = w.open(ctx, cur)
	h.Lane = cur.lane
	h.Resolution = o.Interval
	if cur.lane == LaneNotify {
		h.Resolution = c.rtt
	}
	w.rec = &Recording{Header: h}
	if o.Record != nil {
		if err := o.Record.Header(h); err != nil {
			w.close(cur)
			return nil, err
		}
	}
	w.read(ctx, cur, "start")
	if o.OnStart != nil {
		o.OnStart(h)
	}
	for _, sc := range w.sentinels {
		// +switch-master moves the watch at once; a Sentinel that cannot
		// be subscribed to is asked again at each resync.
		ps := sc.Subscribe(ctx, "+switch-master")
		announce.Add(1)
		go func() {
			defer announce.Done()
			for m := range ps.Channel() {
				if f := strings.Fields(m.Payload); len(f) == 5 && f[0] == o.Sentinel.Master {
					w.suspectf("Sentinel announced +switch-master %s:%s -> %s:%s", f[1], f[2], f[3], f[4])
				}
			}
		}()
		defer ps.Close()
	}

	// The key and the stream are followed apart: a move starts reading the
	// key on the new primary at once, while the old stream's blocking read
	// (up to 200ms) runs out.
	follow := func(n *node) func() { return background(ctx, func(c context.Context) { w.follow(c, n, "0") }) }
	truth := func(n *node) func() { return background(ctx, func(c context.Context) { w.truth(c, n) }) }
	stopFollow, stopTruth := follow(cur), truth(cur)
	var old []*node // nodes left after a switch: closed at the end
	progress := time.NewTicker(time.Second)
	resync := time.NewTicker(5 * time.Second)
	start := time.Now()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case why := <-w.suspect:
			n, c, err := w.locate(ctx, cur)
			if err != nil || n == nil {
				continue // the next failed read asks again
			}
			stopTruth()
			if cur.ps != nil {
				_ = cur.ps.Close()
				cur.ps = nil
			}
			old = append(old, cur)
			sw := w.move(ctx, cur, n, c, why)
			cur = n
			stopTruth = truth(cur)
			stopFollow() // the new stream is read from its start: what was read is skipped
			w.mu.Lock()
			w.lastID = "0" // the old node's IDs say nothing of the new one's (nor does its clock)
			w.mu.Unlock()
			stopFollow = follow(cur)
			if o.OnSwitch != nil {
				o.OnSwitch(sw)
			}
		case <-resync.C:
			if c, err := tie(ctx, cur.rdb, 3); err == nil {
				w.mu.Lock()
				w.clock = c
				w.mu.Unlock()
			}
			if len(w.sentinels) > 0 {
				// A backstop for an announcement missed.
				if a, err := w.askSentinels(ctx); err == nil && a != cur.addr {
					w.suspectf("Sentinel names %s", a)
				}
			}
		case <-progress.C:
			if o.Progress != nil {
				o.Progress(w.progress(time.Since(start), cur.lane))
			}
		}
	}
	progress.Stop()
	resync.Stop()
	stopTruth()
	stopFollow()
	// A last read of the stream, for entries written just before the end.
	dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer dcancel()
	w.drain(dctx, cur)
	for _, n := range append(old, cur) {
		w.close(n)
	}

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

// background runs f until the returned stop is called (or ctx ends); stop
// waits for it.
func background(ctx context.Context, f func(context.Context)) (stop func()) {
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); f(sctx) }()
	return func() { cancel(); <-done }
}

// dial returns a client of the data node at addr, with the options the
// watch was given (auth, TLS).
func (w *watcher) dial(addr string) *redis.Client {
	var o redis.Options
	switch {
	case w.o.Redis != nil:
		o = *w.o.Redis.Options()
	case w.o.Sentinel != nil && w.o.Sentinel.NodeOptions != nil:
		o = *w.o.Sentinel.NodeOptions
	default:
		o = redis.Options{MaxRetries: -1, DialTimeout: time.Second, ReadTimeout: 2 * time.Second}
	}
	o.Addr = addr
	return redis.NewClient(&o)
}

// close closes what the watch opened on n.
func (w *watcher) close(n *node) {
	if n.ps != nil {
		_ = n.ps.Close()
	}
	if n.own {
		_ = n.rdb.Close()
	}
}

// askSentinels returns the primary's address as the first Sentinel that
// answers names it.
func (w *watcher) askSentinels(ctx context.Context) (string, error) {
	var errs []error
	for _, sc := range w.sentinels {
		a, err := sc.GetMasterAddrByName(ctx, w.o.Sentinel.Master).Result()
		if err == nil && len(a) == 2 {
			return a[0] + ":" + a[1], nil
		}
		errs = append(errs, fmt.Errorf("%s: %v", sc.String(), err))
	}
	return "", fmt.Errorf("observe: asking the Sentinels for master %s: %w", w.o.Sentinel.Master, errors.Join(errs...))
}

// role reads ROLE: the node's role, the primary it replicates from (a
// replica), and the replicas it lists (a primary).
func role(ctx context.Context, rdb *redis.Client) (string, string, []string, error) {
	v, err := rdb.Do(ctx, "ROLE").Slice()
	if err != nil {
		return "", "", nil, err
	}
	return parseRole(v)
}

func parseRole(v []any) (r, master string, replicas []string, err error) {
	if len(v) == 0 {
		return "", "", nil, errors.New("observe: empty ROLE reply")
	}
	r = fmt.Sprint(v[0])
	switch {
	case r == "master" && len(v) >= 3:
		reps, _ := v[2].([]any)
		for _, x := range reps {
			if f, ok := x.([]any); ok && len(f) >= 2 {
				replicas = append(replicas, fmt.Sprintf("%v:%v", f[0], f[1]))
			}
		}
	case r == "slave" && len(v) >= 3:
		master = fmt.Sprintf("%v:%v", v[1], v[2])
	}
	return r, master, replicas, nil
}

// locate finds the node that serves the lease now. It returns nil when
// that is still cur (a passing error) or when no primary answers yet;
// otherwise the new node and the observer's tie to its clock.
func (w *watcher) locate(ctx context.Context, cur *node) (*node, clockTie, error) {
	var found string
	if len(w.sentinels) > 0 {
		a, err := w.askSentinels(ctx)
		if err != nil {
			return nil, clockTie{}, err
		}
		found = a
	} else {
		short := func(addr string) (string, string, error) {
			c := w.dial(addr)
			defer c.Close()
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			r, m, _, err := role(cctx, c)
			return r, m, err
		}
		var cands []string
		if r, m, _, err := role(ctx, cur.rdb); err == nil {
			if r == "master" {
				return nil, clockTie{}, nil
			}
			if m != "" {
				cands = append(cands, m) // where the old primary replicates from now
			}
		}
		w.mu.Lock()
		for a := range w.replicas {
			cands = append(cands, a)
		}
		w.mu.Unlock()
		cands = append(cands, w.o.Addrs...)
		seen := map[string]bool{cur.addr: true}
		for _, a := range cands {
			if seen[a] {
				continue
			}
			seen[a] = true
			if r, _, err := short(a); err == nil && r == "master" {
				found = a
				break
			}
		}
		if found == "" {
			return nil, clockTie{}, fmt.Errorf("observe: no primary among %v", cands)
		}
	}
	if found == cur.addr {
		return nil, clockTie{}, nil
	}
	n := &node{addr: found, rdb: w.dial(found), own: true}
	c, err := tie(ctx, n.rdb, 3)
	if err != nil {
		_ = n.rdb.Close()
		return nil, clockTie{}, err
	}
	return n, c, nil
}

// move makes n, the new primary, the node followed: its clock, its lane,
// a first read of the key there, and the Switch recorded.
func (w *watcher) move(ctx context.Context, from, n *node, c clockTie, why string) Switch {
	w.mu.Lock()
	prev := w.clock
	lastSeen := prev.at(w.lastAt)
	// The new clock minus the old, both read through the observer's own
	// monotonic clock; the old tie may have drifted since it was taken.
	step := c.redis.Sub(prev.at(c.local))
	drift := time.Duration(float64(c.local.Sub(prev.local).Abs()) * AssumedRateError)
	w.clock, w.node = c, n.addr
	w.mu.Unlock()
	w.open(ctx, n)
	w.read(ctx, n, "failover")
	w.mu.Lock()
	defer w.mu.Unlock()
	sw := Switch{At: c.at(w.lastAt), From: from.addr, To: n.addr, Why: why, LastSeen: lastSeen,
		ClockStep: step, ClockStepUncertainty: prev.rtt/2 + c.rtt/2 + drift, Lane: n.lane}
	if w.lastAt.Before(c.local) {
		sw.At = c.redis // the first read failed: the move's own time
	}
	w.rec.Switches = append(w.rec.Switches, sw)
	if w.o.Record != nil {
		werr := w.o.Record.Switch(sw)
		if werr == nil {
			werr = w.o.Record.Flush()
		}
		if werr != nil && w.err == nil {
			w.err = werr
		}
	}
	return sw
}

// open sets n's lane up: notifications unless the poll lane is forced or
// the server does not send them (then why), and a note on the lane.
func (w *watcher) open(ctx context.Context, n *node) string {
	n.lane = LanePoll
	if w.o.Poll {
		return ""
	}
	ps, note := w.notifications(ctx, n.rdb)
	if ps != nil {
		n.ps, n.lane = ps, LaneNotify
	}
	w.mu.Lock()
	w.notify = ps != nil
	w.mu.Unlock()
	return note
}

// notificationFlags are the keyspace notification classes the lane needs:
// keyspace events (K) for generic commands (g: del, expire), expirations
// (x) and strings (set: $).
const notificationFlags = "Kgx$"

// missingFlags returns the classes of notificationFlags that flags (a
// notify-keyspace-events value) lacks.
func missingFlags(flags string) string {
	var miss []byte
	for _, f := range []byte(notificationFlags) {
		has := strings.IndexByte(flags, f) >= 0 ||
			f != 'K' && f != 'E' && strings.IndexByte(flags, 'A') >= 0 // A = g$lshzxet
		if !has {
			miss = append(miss, f)
		}
	}
	return string(miss)
}

// notifications subscribes to the key's keyspace channel where the server
// sends the notifications the lane needs (read with CONFIG GET), and
// returns nil and why not otherwise. It writes nothing unless
// Options.EnableNotifications: then it adds the missing classes, keeping
// every class set, and says so.
func (w *watcher) notifications(ctx context.Context, rdb *redis.Client) (*redis.PubSub, string) {
	cur, err := rdb.ConfigGet(ctx, "notify-keyspace-events").Result()
	if err != nil {
		return nil, "keyspace notifications unknown (CONFIG GET notify-keyspace-events: " + err.Error() + "): polling"
	}
	old, ok := cur["notify-keyspace-events"]
	if !ok {
		return nil, "keyspace notifications unknown (CONFIG GET returned no notify-keyspace-events): polling"
	}
	note := ""
	if miss := missingFlags(old); miss != "" {
		if !w.o.EnableNotifications {
			return nil, fmt.Sprintf("keyspace notifications off (notify-keyspace-events %q lacks %q): polling; "+
				"--enable-notifications adds them (a CONFIG SET left in place)", old, miss)
		}
		// Another client's CONFIG SET between the GET and this one would be
		// undone: the window is one round trip.
		if err := rdb.ConfigSet(ctx, "notify-keyspace-events", old+miss).Err(); err != nil {
			return nil, fmt.Sprintf("keyspace notifications off, and turning them on was refused (CONFIG SET: %v): polling", err)
		}
		note = fmt.Sprintf("keyspace notifications turned on by this watch (notify-keyspace-events %q + %q, left so when it ends: "+
			"another client may rely on them by then)", old, miss)
	}
	ps := rdb.Subscribe(ctx, fmt.Sprintf("__keyspace@%d__:%s", w.o.DB, w.key))
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return nil, join(note, "keyspace notifications: subscribing failed ("+err.Error()+"): polling")
	}
	return ps, note
}

// truth follows n's key: by notifications when its lane has them, with a
// backstop poll, else by the poll alone.
func (w *watcher) truth(ctx context.Context, n *node) {
	var msgs <-chan *redis.Message
	if n.ps != nil {
		msgs = n.ps.Channel()
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
			w.read(ctx, n, m.Payload)
		case <-tick.C:
			w.read(ctx, n, "poll")
		case <-ctx.Done():
			return
		}
	}
}

// isServerError reports whether err is Redis's answer (a refusal), not a
// failure to reach it.
func isServerError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.Nil)
}

// read reads the holder and its PTTL on n (and its ROLE: a node that is no
// longer the primary does not tell who holds the lease), and records a
// change. note is the notification that prompted it, "poll", "start", or
// "failover" (the first read on a new primary).
func (w *watcher) read(ctx context.Context, n *node, note string) {
	got := time.Now() // a notification arrived, or a poll began
	pipe := n.rdb.Pipeline()
	w.mu.Lock()
	withRole := !w.noRole && len(w.sentinels) == 0
	w.mu.Unlock()
	var rl *redis.Cmd
	if withRole {
		rl = pipe.Do(ctx, "ROLE")
	}
	get := pipe.Get(ctx, w.key)
	pttl := pipe.PTTL(ctx, w.key)
	_, _ = pipe.Exec(ctx)
	done := time.Now()
	if err := pttl.Err(); err != nil {
		if ctx.Err() == nil && !isServerError(err) {
			w.suspectf("%s: %v", n.addr, err)
		}
		return // unreachable for now: the next poll tells
	}
	var replicas []string
	if rl != nil {
		v, err := rl.Slice()
		var r string
		if err == nil {
			r, _, replicas, err = parseRole(v)
		}
		switch {
		case err != nil && isServerError(err):
			w.mu.Lock()
			w.noRole = true
			w.mu.Unlock()
		case err != nil:
			return
		case r != "master":
			w.suspectf("%s reports role %s", n.addr, r)
			return
		}
	}
	if err := get.Err(); err != nil && !errors.Is(err, redis.Nil) {
		return
	}
	h, _ := get.Result()
	rtt := done.Sub(got)

	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range replicas {
		w.replicas[a] = true
	}
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
	case note == "failover":
		// Nothing was seen of the key between the last read on the old
		// primary and this one: the change (the promotion, as the lease
		// goes) lies in between.
		from, to := c.at(prevAt), c.at(done)
		hc.At = from.Add(to.Sub(from) / 2)
		hc.Uncertainty = to.Sub(from)/2 + tieU
		hc.Note = "failover (between the last read on the old primary and the first on the new)"
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

// follow reads n's stream from the entry after from (the history tells who
// led when the watch began; after a switch, what the new primary holds
// that was not read) until ctx ends.
func (w *watcher) follow(ctx context.Context, n *node, from string) {
	last := from
	for ctx.Err() == nil {
		got, next, err := w.readStream(ctx, n, last, 200*time.Millisecond)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			w.suspectf("%s: reading the stream: %v", n.addr, err)
			select { // unreachable: try again shortly
			case <-time.After(w.o.Interval):
			case <-ctx.Done():
				return
			}
			continue
		}
		if got >= 0 {
			last = next
		}
	}
}

// drain reads what n's stream holds beyond the last entry read.
func (w *watcher) drain(ctx context.Context, n *node) {
	for {
		w.mu.Lock()
		last := w.lastID
		w.mu.Unlock()
		got, _, err := w.readStream(ctx, n, last, -1)
		if err != nil || got == 0 {
			return
		}
	}
}

// readStream reads up to one batch after last, waiting up to block (-1: not
// at all), and keeps it. It returns how many entries it read and the new
// last ID.
func (w *watcher) readStream(ctx context.Context, n *node, last string, block time.Duration) (int, string, error) {
	args := &redis.XReadArgs{Streams: []string{w.stream, last}, Count: 1000, Block: block}
	if block < 0 {
		args.Block = -1
	}
	res, err := n.rdb.XRead(ctx, args).Result()
	if errors.Is(err, redis.Nil) {
		return 0, last, nil
	}
	if err != nil {
		return 0, last, err
	}
	got := 0
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range res {
		for _, m := range s.Messages {
			last = m.ID
			got++
			e, err := publish.ParseEntry(m.ID, m.Values)
			if err != nil {
				w.dropEntry(m.ID, err)
				continue
			}
			w.keep(e)
		}
	}
	w.lastID = last
	if w.o.Record != nil && got > 0 {
		// What was read is on disk before the next read: a killed
		// observer leaves all it saw.
		if err := w.o.Record.Flush(); err != nil && w.err == nil {
			w.err = err
		}
	}
	return got, last, nil
}

// dropEntry counts a stream entry that could not be read (another format
// version, a field missing or malformed) and records it; w.mu is held.
func (w *watcher) dropEntry(id string, err error) {
	reason := strings.TrimPrefix(err.Error(), "entry "+id+": ")
	w.rec.drop(reason, 1)
	if w.o.Record != nil {
		if err := w.o.Record.Dropped(id, reason); err != nil && w.err == nil {
			w.err = err
		}
	}
}

// keep stores one entry, once per (Publisher, Seq); w.mu is held.
func (w *watcher) keep(e publish.Entry) {
	if s, ok := w.maxSeq[e.Publisher]; ok && e.Seq <= s {
		return // read already (on the old primary), or a write repeated
	}
	w.maxSeq[e.Publisher] = e.Seq
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
	p := Progress{Elapsed: elapsed, Lane: lane, Entries: len(w.rec.Entries) + w.dropped, Late: w.late, Dropped: w.rec.DroppedEntries(),
		Instances: len(w.seen), Holder: w.holder, Node: w.node, Switches: len(w.rec.Switches)}
	for id := range w.leaders {
		p.Leaders = append(p.Leaders, id)
	}
	return p
}
