package virtual

import (
	"context"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
)

// Steps of a call (event.b).
const (
	stBegin     = iota + 1 // an attempt begins: take a pooled connection or dial
	stDial                 // one dial try (parked while paused)
	stInitSend             // send one handshake command on a new connection
	stInitExec             // a handshake command reaches Redis
	stInitReply            // its reply reaches the client
	stSend                 // write the command
	stExec                 // the command reaches Redis (applies even if its reader gave up)
	stReply                // the reply reaches the client
	stTimeout              // the read deadline passed
	stHelloFail            // HELLO's own retries are over: the attempt failed
	stCtxDone              // the call's context is done during a sleep
)

// call is one elector operation through the modelled go-redis client:
// redis.Script.Run, i.e. EVALSHA and, on NOSCRIPT, EVAL — each a go-redis
// command with processWithRetry's attempts.
type call struct {
	id       int32
	ord      int32 // its number among its instance's calls (Options.PartialOrder)
	in       *inc
	op       election.Op
	sent     time.Duration // when the elector started it (a schedule search aligns faults to it)
	eval     bool          // EVAL (after NOSCRIPT) rather than EVALSHA
	attempt  int
	gen      uint32
	ctxAt    time.Duration // the context's deadline (real time); never if none
	canceled bool
	deadline time.Duration // read deadline of the read in progress
	reading  bool          // a read is in progress (a closed connection fails it)
	initing  bool          // the read is a handshake's
	init     int           // handshake round trips left
	epoch    uint32        // the connection's epoch
	dialTry  int
	sleeping bool
	failErr  error // stHelloFail: the error and whether the command retries it
	failOK   bool
	rOK      bool // the reply in flight
	rToken   int64
	rNoScr   bool
	done     bool // finished (or its incarnation crashed)
	killed   bool // its incarnation crashed: nothing of it reaches Redis
	detached bool // the shell no longer waits for it
	// transit is the step the call's message in flight will reach (its
	// request reaching Redis, or its reply reaching the client), and
	// transitAt when; 0 when nothing is in flight. A latency toxic holding
	// the message can release it early (releaseHeld).
	transit    int32
	transitAt  time.Duration
	transitGen uint32 // the call's generation when the message left
	// dropped are request arrivals superseded by an early release: their
	// events still fire (an arrival at Redis runs whatever the caller's
	// generation), and must then do nothing.
	dropped []held
	// rc is the runner's command this call carries (runner mode), nil for
	// an elector call (op).
	rc *rcmd
}

// held names a superseded arrival by its generation and time.
type held struct {
	gen uint32
	at  time.Duration
}

// transitTo schedules the arrival of a message in flight.
func (w *world) transitTo(c *call, t time.Duration, st int32) {
	c.transit, c.transitAt, c.transitGen = st, t, c.gen
	w.callAt(c, t, st)
}

// releaseHeld models removing a Toxiproxy latency toxic: it does not drop
// what it holds, it lets it through at once ("exit fast without applying
// latency"), so a message delayed by the healed latency arrives after the
// healthy hop alone. Measured: a safe-mode renewal sent under 2 s of latency
// 0.3 s before the heal succeeded before its guard ran out (the real
// slow-redis-safe-elector kept its leader; a model without this demoted it).
func (w *world) releaseHeld(in *inc) {
	if in == nil {
		return
	}
	for _, c := range in.calls {
		if c.done || c.transit == 0 {
			continue
		}
		if w.cmp(c.transitAt, w.now+w.o.OneWay); c.transitAt <= w.now+w.o.OneWay {
			continue
		}
		st := c.transit
		if st == stExec {
			c.dropped = append(c.dropped, held{c.transitGen, c.transitAt})
		}
		if !c.reading || c.transitGen != c.gen {
			// Nobody waits for it any more (its read timed out; the call
			// sleeps, dials or moved on): a held command still reaches
			// Redis, early, and applies with no reply; anything else is
			// dropped. The call's own generation must not move: a sleep or
			// a timeout it armed still counts. (Moving it left a call whose
			// HELLO had timed out waiting forever: found by the random
			// bound search, a leader that believed 39 s.)
			if st == stExec {
				w.at(w.now+w.o.OneWay, event{kind: evCall, a: c.id, b: stExec, gen: c.transitGen})
			}
			c.transit = 0
			continue
		}
		c.gen++ // the held arrival (and the read deadline, re-armed below) no longer count
		w.transitTo(c, w.now+w.o.OneWay, st)
		if c.deadline != never {
			w.callAt(c, c.deadline, stTimeout)
		}
	}
}

func (w *world) startCall(in *inc, op election.Op, deadline time.Duration) {
	c := w.newCall()
	c.in, c.op, c.ctxAt, c.sent = in, op, never, w.now
	if w.po != nil {
		w.po.numberCall(c)
	}
	w.stats.Calls++
	timeout := w.p.OpTimeout
	if w.p.Safe && op != election.OpRelease {
		d := deadline
		if op == election.OpRenew && in.guardTT != 0 {
			d = in.guardTT - in.tt(w.now)
		}
		w.cmp(d, 0)
		if d > 0 && timeout != 0 {
			w.cmp(d, timeout)
		}
		if d > 0 && (timeout == 0 || d < timeout) {
			timeout = d
		}
	}
	if timeout > 0 {
		// clock.WithTimeout: a real deadline converted at the current rate.
		c.ctxAt = w.now + in.rate.realTruncated(timeout)
	}
	if op == election.OpRelease && in.stopping {
		w.cmp(c.ctxAt, in.stopAt)
		c.ctxAt = min(c.ctxAt, in.stopAt)
	}
	in.sentTT = in.tt(w.now)
	w.onCall(c, CallBegin)
	in.call = c
	in.calls = append(in.calls, c)
	// Always asynchronous, as the shell's goroutine is: the Step that
	// started the call is fully carried out before its result comes.
	w.callAt(c, w.now, stBegin)
}

// onCall tells Options.OnCall about a moment of the call, if anyone asked.
func (w *world) onCall(c *call, st CallStep) {
	if w.o.OnCall != nil && c.rc == nil {
		w.o.OnCall(CallEvent{At: w.now, Instance: c.in.slot.idx, Op: c.op, Step: st})
	}
}

func (w *world) callAt(c *call, t time.Duration, st int32) {
	w.at(t, event{kind: evCall, a: c.id, b: st, gen: c.gen})
}

// parkable steps wait while the instance is paused (its gate holds I/O).
func parkable(st int32) bool {
	switch st {
	case stDial, stInitSend, stInitReply, stSend, stReply, stTimeout:
		return true
	}
	return false
}

func (w *world) callStep(c *call, e event) {
	if parkable(e.b) && c.in.paused {
		c.in.parked = append(c.in.parked, e)
		return
	}
	c.sleeping = false
	switch e.b {
	case stBegin:
		w.begin(c)
	case stDial:
		w.dial(c)
	case stInitSend:
		w.initSend(c)
	case stInitExec:
		w.initExec(c, e.gen)
	case stInitReply:
		w.onCall(c, CallReply)
		c.reading, c.initing = false, false
		c.gen++
		c.init--
		if c.init == 0 {
			w.send(c)
		} else {
			w.initSend(c)
		}
	case stSend:
		w.send(c)
	case stReply:
		w.onCall(c, CallReply)
		c.reading = false
		c.gen++
		c.in.idle = append(c.in.idle, c.epoch)
		if c.rNoScr {
			// Script.Run falls back to EVAL: a new command, its own retries.
			c.eval, c.attempt = true, 0
			w.begin(c)
			return
		}
		w.finish(c, c.rOK, c.rToken, nil)
	case stTimeout:
		c.reading = false
		c.gen++
		if w.cte {
			w.cmp(c.deadline, c.ctxAt)
		}
		if w.cte && c.deadline == c.ctxAt {
			w.finish(c, false, 0, context.DeadlineExceeded)
			return
		}
		if c.rc != nil && c.rc.block > 0 && !c.initing {
			// A blocking command's timeout is not retried (go-redis's
			// shouldRetry: its read timeout is its own).
			w.finish(c, false, 0, errTimeout)
			return
		}
		if c.initing {
			// HELLO timed out on the new connection: its own retry sleeps
			// backoff(1) and gets the timeout back, and the command does
			// not retry it (model/bounds/bounds.go's callBound).
			c.initing = false
			if w.retries > 0 {
				c.failErr, c.failOK = errTimeout, false
				w.sleep(c, w.backoff(c.in, 1), stHelloFail)
				return
			}
			w.finish(c, false, 0, errTimeout)
			return
		}
		w.attemptFailed(c, errTimeout, true)
	case stHelloFail:
		w.attemptFailed(c, c.failErr, c.failOK)
	case stCtxDone:
		w.finish(c, false, 0, c.ctxErr())
	}
}

func (c *call) ctxErr() error {
	if c.canceled {
		return context.Canceled
	}
	return context.DeadlineExceeded
}

// ctxDone reports whether the call's context is done now.
func (c *call) ctxDone(now time.Duration) bool { return c.canceled || c.ctxAt <= now }

// sleep is go-redis's internal.Sleep: d, or until the context is done.
func (w *world) sleep(c *call, d time.Duration, next int32) {
	w.cmp(c.ctxAt, w.now)
	w.cmp(c.ctxAt, w.now+d)
	switch {
	case c.ctxDone(w.now):
		w.finish(c, false, 0, c.ctxErr())
	case c.ctxAt < w.now+d:
		c.sleeping = true
		w.callAt(c, c.ctxAt, stCtxDone)
	default:
		c.sleeping = true
		w.callAt(c, w.now+d, next)
	}
}

// cancel cancels the call's context (Stop, or a safe-mode abandonment). A
// sleep ends at once; a read goes on (go-redis reads ignore cancellation).
func (w *world) cancel(c *call) {
	c.canceled = true
	if c.sleeping && !c.done {
		c.sleeping = false
		c.gen++
		w.callAt(c, w.now, stCtxDone)
	}
}

// backoff is go-redis's retry backoff before retry a: MinRetryBackoff + a
// uniform [0, MinRetryBackoff<<a), capped at MaxRetryBackoff.
func (w *world) backoff(in *inc, a int) time.Duration {
	return min(maxRetryBackoff, minRetryBackoff+time.Duration(in.backoff.Int64N(int64(minRetryBackoff<<a))))
}

// begin starts an attempt: the pool's idle connection or a new one. The
// pool health-checks an idle connection as it takes it (a MSG_PEEK of the
// socket) and drops one the proxy or Redis closed, so a closed connection
// is never sent on: the attempt dials instead.
func (w *world) begin(c *call) {
	w.cmp(c.ctxAt, w.now)
	if c.ctxDone(w.now) {
		w.finish(c, false, 0, c.ctxErr())
		return
	}
	in := c.in
	for k := len(in.idle); k > 0; k-- {
		epoch := in.idle[k-1]
		in.idle = in.idle[:k-1]
		if epoch == in.slot.net.epoch {
			c.epoch = epoch
			w.send(c)
			return
		}
	}
	c.dialTry = 0
	w.dial(c)
}

func (w *world) dial(c *call) {
	in, n := c.in, &c.in.slot.net
	if c.dialTry == 0 && in.dialErrs >= w.pool {
		// The dial breaker: after PoolSize failed dial rounds the pool
		// fails dials at once with the last error, until its tryDial (one
		// try a second) gets through.
		w.attemptFailed(c, errRefused, true)
		return
	}
	if n.refuse > 0 {
		// The dialer's own retries: DialerRetries tries, DialerRetryPeriod apart.
		if c.dialTry < dialerRetries-1 {
			c.dialTry++
			w.sleep(c, dialerRetryPeriod, stDial)
			return
		}
		if in.dialErrs++; in.dialErrs == w.pool {
			w.at(w.now, event{kind: evProbe, a: in.n})
		}
		w.attemptFailed(c, errRefused, true)
		return
	}
	cost := w.o.DialCost
	if !in.warm {
		in.warm = true
		cost += w.o.Warmup
	}
	c.epoch, c.init = n.epoch, initRoundTrips
	w.callAt(c, w.now+cost, stInitSend)
}

func (w *world) readDeadline(c *call) time.Duration {
	d := never
	switch {
	case c.rc != nil && c.rc.block > 0 && !c.initing:
		// go-redis's blocking commands read for their Block + 10 s.
		d = w.now + c.rc.block + 10*time.Second
	case w.rt != never:
		d = w.now + w.rt
	}
	if w.cte {
		w.cmp(d, c.ctxAt)
		d = min(d, c.ctxAt)
	}
	return d
}

func (w *world) initSend(c *call) {
	n := &c.in.slot.net
	if n.reset > 0 || c.epoch != n.epoch || w.redis.down {
		// Reset (or closed) at once; HELLO's own client retries it
		// MaxRetries times on the connection it removed, then the command
		// retries the attempt.
		var d time.Duration
		for a := 1; a <= w.retries; a++ {
			d += w.backoff(c.in, a)
		}
		c.failErr, c.failOK = errEOF, true
		w.sleep(c, d, stHelloFail)
		return
	}
	c.reading, c.initing = true, true
	c.deadline = w.readDeadline(c)
	w.onCall(c, CallSend)
	if n.bhUp == 0 {
		w.transitTo(c, w.now+w.o.OneWay+n.latReq+jitter(n, true), stInitExec)
	}
	if c.deadline != never {
		w.callAt(c, c.deadline, stTimeout)
	}
}

func (w *world) initExec(c *call, gen uint32) {
	n := &c.in.slot.net
	if c.gen != gen || !c.reading || n.bhDown > 0 {
		return
	}
	if w.po != nil {
		w.po.touchRedis()
	}
	if w.redis.holds(c, gen, true) {
		return
	}
	if w.redis.down {
		c.reading = false
		c.gen++
		w.attemptFailed(c, errEOF, true)
		return
	}
	w.onCall(c, CallArrive)
	t := w.now + w.o.OneWay + n.latRep + jitter(n, false)
	if w.cmp(t, c.deadline); t <= c.deadline {
		w.transitTo(c, t, stInitReply)
	}
}

func jitter(n *netState, req bool) time.Duration {
	j := n.jRep
	if req {
		j = n.jReq
	}
	if j <= 0 || n.jRNG == nil {
		return 0
	}
	return time.Duration(n.jRNG.Int64N(int64(2*j) + 1))
}

// send writes the command on the connection the attempt holds.
func (w *world) send(c *call) {
	if c.in.paused {
		// A call begun while paused (a runner's handler returned, its
		// acknowledgement goes out): the gate holds its write.
		c.in.parked = append(c.in.parked, event{kind: evCall, a: c.id, b: stSend, gen: c.gen})
		return
	}
	n := &c.in.slot.net
	if n.reset > 0 {
		w.attemptFailed(c, errEOF, true)
		return
	}
	c.reading, c.initing = true, false
	c.deadline = w.readDeadline(c)
	w.onCall(c, CallSend)
	if n.bhUp == 0 {
		w.transitTo(c, w.now+w.o.OneWay+n.latReq+jitter(n, true), stExec)
	}
	if c.deadline != never {
		w.callAt(c, c.deadline, stTimeout)
	}
}

// exec runs the command in Redis. It applies whether or not anyone still
// waits for the reply (a write whose reply timed out may still have landed).
func (w *world) exec(c *call, gen uint32) {
	if c.killed {
		return
	}
	if w.po != nil {
		w.po.touchRedis()
	}
	for i, h := range c.dropped {
		if h.gen == gen {
			w.cmp(h.at, w.now)
		}
		if h.gen == gen && h.at == w.now {
			c.dropped = append(c.dropped[:i], c.dropped[i+1:]...)
			return // released earlier: it already reached Redis
		}
	}
	if w.redis.down {
		if c.gen == gen && c.reading {
			c.reading = false
			c.gen++
			w.attemptFailed(c, errEOF, true)
		}
		return
	}
	if w.redis.holds(c, gen, false) {
		return
	}
	w.apply(c, gen)
}

// apply runs the command that reached Redis and sends its reply, if its
// attempt still reads.
func (w *world) apply(c *call, gen uint32) {
	if c.rc != nil {
		noscr, blocked := w.rexec(c, gen)
		if !blocked {
			w.reply(c, gen, true, 0, noscr)
		}
		return
	}
	ok, tok, noscr := w.redis.exec(w, c)
	w.onCall(c, CallArrive)
	w.reply(c, gen, ok, tok, noscr)
}

// reply sends a command's reply to its attempt, if that attempt still
// reads: at once, or later for a blocking read that Redis served late.
func (w *world) reply(c *call, gen uint32, ok bool, tok int64, noscr bool) {
	n := &c.in.slot.net
	if c.gen != gen || !c.reading || c.done || n.bhDown > 0 {
		return
	}
	t := w.now + w.o.OneWay + n.latRep + jitter(n, false)
	if w.cmp(t, c.deadline); t <= c.deadline {
		c.rOK, c.rToken, c.rNoScr = ok, tok, noscr
		w.transitTo(c, t, stReply)
	}
}

// attemptFailed ends an attempt: retried after go-redis's backoff while
// attempts remain, else the call fails with err.
func (w *world) attemptFailed(c *call, err error, retryable bool) {
	if retryable && c.attempt < w.retries {
		c.attempt++
		w.sleep(c, w.backoff(c.in, c.attempt), stBegin)
		return
	}
	w.finish(c, false, 0, err)
}

// finish ends the call and hands its outcome to the machine, unless the
// shell dropped it.
func (w *world) finish(c *call, ok bool, token int64, err error) {
	if c.done {
		return
	}
	c.done = true
	c.gen++
	w.onCall(c, CallEnd)
	in := c.in
	for i, x := range in.calls {
		if x == c {
			in.calls = append(in.calls[:i], in.calls[i+1:]...)
			break
		}
	}
	if c.rc != nil {
		w.rfinish(c, err)
		return
	}
	if c.detached || in.call != c || !in.alive {
		return
	}
	in.call = nil
	elapsed := in.tt(w.now) - in.sentTT
	if w.p.Safe && (c.op == election.OpAcquire || c.op == election.OpRenew) {
		// The machine's guard: a lease whose validity (TTL - margin) had
		// run out by the reply is too late.
		w.cmp(elapsed, w.p.TTL-w.p.GuardMargin())
	}
	in.drawn = false
	s := in.m.Finish(election.Outcome{Op: c.op, OK: ok, Err: err, Token: token, Elapsed: elapsed})
	if w.p.Safe && in.drawn {
		// renewIn: TTL/2 + jitter after the send, or at once (1ns) if
		// that has passed.
		w.cmp(w.p.TTL/2+time.Duration(in.jitter)*time.Millisecond, elapsed+time.Nanosecond)
	}
	w.feed(in, s)
}

// ---- Redis ----

// redisModel is the one Redis of the run: the lease key with its expiry in
// Redis's time, the safe mode's token counter, the script cache.
type redisModel struct {
	holder   string
	expireAt time.Duration
	keyGen   uint32
	token    int64
	scripts  uint16 // one bit per script cached (scriptBit, runnerScript)
	down     bool
	// replica is the lease as the replica last applied it, while a lossy
	// redis-failover holds replication back (replicaHeld).
	replica     replicaCopy
	replicaHeld bool
	// A redis-pause (CLIENT PAUSE): paused, every command (pauseAll) or
	// the writes (the elector's scripts) wait in blocked, in arrival
	// order, until unpause; an expiry due meanwhile under pauseAll is
	// seen (the truth lane's GET blocks too) at unpause.
	paused, pauseAll bool
	blocked          []blockedCmd
	expiryDue        bool
	// rk is the runner group's keys (runner mode), readers the
	// XREADGROUPs blocked on its stream.
	rk      runnerKeys
	readers []blockedRead
}

// blockedCmd is a command a redis-pause holds: the attempt (call and
// generation) that sent it, and whether it is a handshake's.
type blockedCmd struct {
	c    *call
	gen  uint32
	init bool
}

// holds reports whether a pause holds the command arriving now (and keeps
// it): every command under pauseAll, a script (the elector's carry no
// no-writes flag) under a write pause.
func (r *redisModel) holds(c *call, gen uint32, init bool) bool {
	if !r.paused || r.down || (init && !r.pauseAll) {
		return false
	}
	r.blocked = append(r.blocked, blockedCmd{c, gen, init})
	return true
}

// unpause ends the pause: each command held runs, in arrival order, if the
// attempt that sent it still waits for its reply; one whose client gave
// up (a read timed out: go-redis closed the connection) or crashed is
// dropped, as Redis drops a blocked client's command when it disconnects
// (measured, Redis 7.0: three EVALs of a client with a 300 ms read timeout
// under a 2 s write pause, none of them applied).
func (r *redisModel) unpause(w *world) {
	if !r.paused {
		return
	}
	r.paused = false
	b := r.blocked
	r.blocked = nil
	if r.expiryDue {
		r.expiryDue = false
		r.get(w)
	}
	for _, h := range b {
		c := h.c
		if c.killed || c.done || c.gen != h.gen || !c.reading {
			continue
		}
		if h.init {
			w.initExec(c, h.gen)
		} else {
			w.apply(c, h.gen)
		}
	}
}

// replicaCopy is what a replica holds of the lease: the key (holder and
// expiry, as Redis's time) and the token counter.
type replicaCopy struct {
	holder   string
	expireAt time.Duration
	token    int64
	rk       runnerKeys
}

// failover promotes the replica: with replication held (lossy) the key and
// the token counter go back to the replica's copy, expired if its time is
// up; a clean failover's replica has everything. Either way the new primary
// has no script cached: replication carries the scripts' effects, not the
// scripts.
func (r *redisModel) failover(w *world) {
	r.scripts = 0
	w.unblockAll(errUnblocked)
	if !r.replicaHeld {
		return
	}
	r.replicaHeld = false
	c := r.replica
	r.token = c.token
	r.rk = c.rk
	r.keyGen++
	r.expireAt = c.expireAt
	if c.holder != "" {
		w.cmp(c.expireAt, w.now)
	}
	if c.holder != "" && c.expireAt <= w.now {
		c.holder = "" // the copy's time is up: the new primary has no key
	}
	if c.holder != "" {
		w.at(r.expireAt, event{kind: evExpire, gen: r.keyGen})
	}
	if c.holder != r.holder {
		r.truth(w, c.holder, "failover")
	}
}

func scriptBit(op election.Op, safe bool) uint16 {
	if op == election.OpAcquire && safe {
		return 8
	}
	return 1 << (op - 1)
}

func (r *redisModel) truth(w *world, holder, note string) {
	r.holder = holder
	w.record(model.Event{Kind: model.RedisHolder, Instance: -1, Holder: holder, Detail: note})
}

// get reads the key, expiring it first if its time is up (as any access does).
func (r *redisModel) get(w *world) string {
	if r.holder != "" {
		w.cmp(w.now, r.expireAt)
	}
	if r.holder != "" && w.now >= r.expireAt {
		r.keyGen++
		r.truth(w, "", "expired")
	}
	return r.holder
}

func (r *redisModel) expireEvent(w *world, gen uint32) {
	if gen == r.keyGen && r.paused && r.pauseAll {
		r.expiryDue = true
		return
	}
	if gen == r.keyGen {
		r.get(w)
	}
}

func (r *redisModel) setExpiry(w *world, ttl time.Duration) {
	r.expireAt = w.now + time.Duration(ttl.Milliseconds())*time.Millisecond
	r.keyGen++
	w.at(r.expireAt, event{kind: evExpire, gen: r.keyGen})
}

func (r *redisModel) restart(w *world) {
	r.keyGen++
	r.token, r.scripts, r.down = 0, 0, true
	r.paused, r.blocked, r.expiryDue = false, nil, false // a new process
	r.rk, r.readers = runnerKeys{}, nil                  // no persistence: the group's keys are gone
	if r.holder != "" {
		r.truth(w, "", "restart")
	}
}

// exec runs the call's script: the spec's three (election/scripts.go) and
// the safe mode's acquire. noscript: EVALSHA of a script not in the cache.
func (r *redisModel) exec(w *world, c *call) (ok bool, token int64, noscript bool) {
	bit := scriptBit(c.op, w.p.Safe)
	if !c.eval && r.scripts&bit == 0 {
		return false, 0, true
	}
	r.scripts |= bit
	id := c.in.eid
	switch c.op {
	case election.OpAcquire:
		cur := r.get(w)
		if w.p.Safe {
			if cur != "" && cur != id {
				return false, 0, false
			}
			tok := max(r.token+1, redisEpochUS+int64(w.now/time.Microsecond))
			r.token = tok
			if cur != id {
				r.truth(w, id, "set")
			}
			r.setExpiry(w, w.p.TTL)
			return true, tok, false
		}
		if cur != "" {
			return false, 0, false
		}
		r.truth(w, id, "set")
		r.setExpiry(w, w.p.TTL)
		return true, 0, false
	case election.OpRenew:
		if r.get(w) != id {
			return false, 0, false
		}
		r.setExpiry(w, w.p.TTL)
		return true, 0, false
	case election.OpRelease:
		if r.get(w) != id {
			return false, 0, false
		}
		r.keyGen++
		r.truth(w, "", "del")
		return true, 0, false
	}
	return false, 0, false
}
