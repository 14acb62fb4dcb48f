package virtual

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/runner"
	"github.com/leaselab/leaselab/sim"
)

// The runner in virtual time. Each runner-mode incarnation is the
// production runner.Runner's goroutines as the model's events: its
// election.Machine (the world's, as in elector mode), the chore tick, the
// fetcher, the worker pool and the acker, each Redis command of theirs a
// call through the same modelled network and client as the elector's (one
// shared pool: Params.Client.SharedPool), so a chore sent before a
// partition can land after the heal, as on real. The decisions are the
// runner's (runner.Options.Resolved's timings, runner.CapacityFor, the
// chores' order and gates, the fetcher's reclaim pass once per
// ChoreInterval, the deferral of a delivery that waited too long, the
// acker's batches and its re-sends until ClaimIdle); what the model leaves
// out is what the harness's task never does: fail, time out, or be handed
// back by a Stop that ran out of time.

// rkind is a runner command.
type rkind uint8

const (
	rGroup           rkind = iota + 1 // XGROUP CREATE MKSTREAM (Start's ensureGroup, recoverFetch's)
	rDispatch                         // XADD (Dispatch)
	rDispatchDelayed                  // enqueueDelayedScript (DispatchDelayed)
	rRead                             // XREADGROUP ">" with Block
	rClaim                            // XAUTOCLAIM after ClaimIdle
	rAck                              // completeScript (the acker's batch)
	rBeat                             // beatScript (every tick)
	rSchedule                         // scheduleScript (leader; fenced in safe mode)
	rMetrics                          // metricsScript (leader; fenced in safe mode)
	rPublish                          // publishScript (leader; fenced in safe mode)
	rLeave                            // leaveScript (a graceful Stop's last call)
)

// script is the command's bit in the script cache, 0 for a plain command:
// the runner's scripts go through Script.Run (EVALSHA, EVAL after
// NOSCRIPT), as the elector's do (bits 0-3).
func (k rkind) script() uint16 {
	switch k {
	case rDispatchDelayed, rAck, rBeat, rSchedule, rMetrics, rPublish, rLeave:
		return 1 << (4 + k)
	}
	return 0
}

// chore names the leader-only chore a command is, or "".
func (k rkind) chore() runner.Chore {
	switch k {
	case rSchedule:
		return runner.ChoreScheduler
	case rMetrics:
		return runner.ChoreMetrics
	case rPublish:
		return runner.ChoreCapacity
	}
	return ""
}

// rcmd is a runner command carried by a call, with what its reply says.
type rcmd struct {
	kind  rkind
	in    *inc
	n     int           // entries asked for (read, claim); capacity published
	block time.Duration // a blocking read's Block
	// the task of a dispatch
	task   string
	delay  time.Duration
	loop   int
	sentTT time.Duration // the read's send by the runner's clock
	batch  []*rdel       // an acknowledgement's deliveries
	term   uint64        // the leadership a chore runs under (its fence)
	token  int64
	// The reply.
	err   error // an error Redis answered (a reply, not a failed call)
	got   []sentry
	moved []delayedTask // scheduler: the tasks moved (dueMS = lateness, ms)
	acked []bool
	ver   int64
	cap   int
	from  string
	stats metricsReply
}

type metricsReply struct {
	samples               int64
	length, pending, live int
}

// rdel is a delivery: a stream entry handed to an incarnation.
type rdel struct {
	seq        int64
	task       string
	attempt    int
	reclaimed  bool
	readSentTT time.Duration
	in         *inc
}

// Runner timers, on the incarnation's clock (rtimer index).
const (
	rtTick      = iota // the chore ticker
	rtFetchWait        // recoverFetch's pause of Block
	rtAckWait          // the acker's pause before a re-send
	nRTimers
)

type rtimer struct {
	tt    time.Duration
	armed bool
	gen   uint32
}

// rinst is a runner incarnation's state beside its machine.
type rinst struct {
	started   bool // ensureGroup answered: the elector, fetcher and chores run
	chainDone bool // its start let the next of the initial chain start
	timers    [nRTimers]rtimer
	tickTT    time.Duration // the ticker's next tick (its grid)
	ticking   bool
	tickDue   bool // a tick fell due while one ran (the ticker's buffer of one)
	// the tick's leader chores
	lead       leadership
	choreStart time.Duration
	moved      int
	// the fetcher
	fetching    bool // a read, a reclaim or a pause is under way
	fetchWait   bool // waiting for a free slot
	fetchDone   bool
	reserved    int
	nextClaimTT time.Duration
	flights     map[int64]bool // entries held here: read, running or being acknowledged
	queue       []*rdel
	running     int
	size        int // the pool's capacity (the published one applied)
	capVersion  int64
	ranAny      bool
	lastAvg     time.Duration
	// the acker
	acks      []*rdel
	ackCall   *rcmd
	ackFirst  time.Duration // its first send (runner clock)
	ackPause  time.Duration
	ackUntil  time.Duration
	ackResent bool
	// a graceful stop
	stopping      bool
	electorHalted bool
}

// leadership is the elector's decision as the runner's chores read it
// (election.Elector.Leadership): leading, and in safe mode before the
// guard's deadline.
type leadership struct {
	leader bool
	term   uint64
	token  int64
}

// rconf is the runner's resolved options, as runner.New resolves them for
// the harness's instances (sim/real's).
type rconf struct {
	runner.Options
	taskDur time.Duration
	timeout time.Duration
}

func newRConf(sc model.Scenario) rconf {
	timeout := sim.TaskTimeout(sc)
	o, err := runner.Options{
		Group:         "virtual",
		Tasks:         map[string]runner.Task{"work": {Handler: func(context.Context, []byte) error { return nil }, Timeout: timeout}},
		ChoreInterval: sc.Params.ChoreInterval,
	}.Resolved()
	if err != nil {
		panic(fmt.Sprintf("virtual: the runner's options: %v", err)) // a scenario Validate passed cannot get here
	}
	return rconf{Options: o, taskDur: sc.Workload.TaskDuration, timeout: timeout}
}

// ---- start, stop ----

// startRunner starts an incarnation's runner: Start's ensureGroup, then
// (on its answer) the elector, the fetcher and the chore ticker.
func (w *world) startRunner(in *inc) {
	in.rn = &rinst{flights: map[int64]bool{}, size: w.rc.Workers}
	w.rsend(in, w.cmd(rcmd{kind: rGroup}), 0)
}

// startChain starts the next runner of the initial chain once in, its
// latest, has started, and the workload after the last.
func (w *world) startChain(in *inc) {
	if w.chained >= len(w.chain) || in.slot.idx != w.chain[w.chained] || in.rn.chainDone {
		return
	}
	in.rn.chainDone = true
	w.chained++
	if w.chained < len(w.chain) {
		w.at(w.now+w.o.StartStep, event{kind: evStart, a: int32(w.chain[w.chained])})
		return
	}
	w.startWorkload(w.now)
}

func (w *world) runnerStarted(in *inc) {
	rn := in.rn
	rn.started = true
	w.feed(in, in.m.Start())
	rn.nextClaimTT = in.tt(w.now) // at once: what a crashed incarnation left
	rn.tickTT = in.tt(w.now)
	w.tick(in)
	w.fetchNext(in)
}

// stopRunner is Stop: the fetcher ends after its read, the tasks held
// finish and are acknowledged, the chores end, then the elector stops
// (stopElector) and the instance leaves the group.
func (w *world) stopRunner(in *inc) {
	rn := in.rn
	rn.stopping = true
	if rn.timers[rtFetchWait].armed {
		rn.timers[rtFetchWait].armed = false
		rn.fetching = false
	}
	rn.fetchWait = false
	if !rn.started {
		rn.fetchDone = true
	}
	w.stopProgress(in)
}

// stopProgress stops the elector once the runner's goroutines are done.
func (w *world) stopProgress(in *inc) {
	rn := in.rn
	if !rn.stopping || rn.electorHalted || !in.alive {
		return
	}
	if !rn.fetchDone && rn.fetching {
		return
	}
	rn.fetchDone = true
	if rn.running > 0 || len(rn.queue) > 0 || rn.ackCall != nil || len(rn.acks) > 0 || rn.ticking {
		return
	}
	rn.electorHalted = true
	if !rn.started {
		w.down(in)
		return
	}
	w.stopElector(in)
}

// leave is a graceful Stop's last call, after the elector stopped.
func (w *world) leave(in *inc) {
	w.rsend(in, w.cmd(rcmd{kind: rLeave}), w.p.TTL)
}

// ---- calls ----

// cmd returns a runner command with v's fields, allocated for the run.
func (w *world) cmd(v rcmd) *rcmd { return w.mem.cmd(v) }

// rsend starts a runner command on in's client. ctxTimeout > 0 bounds it
// (a context deadline: it stops go-redis's sleeps, and its reads only with
// ContextTimeoutEnabled).
func (w *world) rsend(in *inc, rc *rcmd, ctxTimeout time.Duration) *call {
	rc.in = in
	c := w.newCall()
	c.in, c.rc, c.ctxAt, c.sent = in, rc, never, w.now
	if w.po != nil {
		w.po.numberCall(c)
	}
	if ctxTimeout > 0 {
		c.ctxAt = w.now + ctxTimeout
	}
	w.stats.Calls++
	in.calls = append(in.calls, c)
	w.callAt(c, w.now, stBegin)
	return c
}

// rexec runs a runner command that reached Redis. noscript: EVALSHA of a
// script not cached; blocked: a read Redis holds (its reply comes later).
func (w *world) rexec(c *call, gen uint32) (noscript, blocked bool) {
	rc, r := c.rc, &w.redis
	rc.err = nil
	if bit := rc.kind.script(); bit != 0 {
		if !c.eval && r.scripts&bit == 0 {
			return true, false
		}
		r.scripts |= bit
	}
	k := &r.rk
	if rc.kind.chore() != "" && w.p.Safe {
		// The fence (runner's luaFence): the lease must still hold this
		// instance's ID and the token counter this term's token.
		if r.get(w) != rc.in.eid || r.token != rc.token {
			rc.err = errFenced
			return false, false
		}
	}
	switch rc.kind {
	case rGroup:
		k.group = true // BUSYGROUP when it was there: the runner takes it as done
	case rDispatch:
		w.xadd(rc.task, 1)
	case rDispatchDelayed:
		due := w.nowMS() + rc.delay.Milliseconds()
		i := len(k.delayed)
		for i > 0 && k.delayed[i-1].dueMS > due {
			i--
		}
		k.delayed = slices.Insert(k.delayed, i, delayedTask{dueMS: due, task: rc.task, attempt: 1})
	case rRead:
		if !k.group {
			rc.err = errNoGroup
			break
		}
		rc.got = w.deliverNew(rc.in.eid, rc.n)
		if len(rc.got) == 0 {
			r.readers = append(r.readers, blockedRead{c, gen})
			w.at(w.now+rc.block, event{kind: evBlockEnd, a: c.id, gen: gen})
			return false, true
		}
	case rClaim:
		if !k.group {
			rc.err = errNoGroup
			break
		}
		rc.got = w.autoclaim(rc.in.eid, rc.n, w.rc.ClaimIdle)
	case rAck:
		rc.acked = make([]bool, len(rc.batch))
		for i, d := range rc.batch {
			rc.acked[i] = w.ack(d.seq)
		}
	case rBeat:
		exp := w.now + heartbeatTicks*w.p.ChoreInterval
		if i := slices.IndexFunc(k.live, func(l liveInstance) bool { return l.id == rc.in.eid }); i >= 0 {
			k.live[i].expireAt = exp
		} else {
			k.live = append(k.live, liveInstance{rc.in.eid, exp})
		}
		rc.cap, rc.ver, rc.from = k.capacity, k.capVersion, k.capLeader
	case rSchedule:
		now := w.nowMS()
		n := 0
		for n < len(k.delayed) && n < scheduleBatch && k.delayed[n].dueMS <= now {
			n++
		}
		rc.moved = slices.Clone(k.delayed[:n])
		k.delayed = slices.Delete(k.delayed, 0, n)
		for i := range rc.moved {
			rc.moved[i].dueMS = now - rc.moved[i].dueMS
			w.xadd(rc.moved[i].task, rc.moved[i].attempt)
		}
	case rMetrics:
		k.live = slices.DeleteFunc(k.live, func(l liveInstance) bool { return l.expireAt <= w.now })
		rc.stats = metricsReply{samples: k.samples, length: len(k.entries), pending: k.pendingCount(), live: len(k.live)}
		k.samples = 0
	case rPublish:
		k.capVersion++
		k.capacity, k.capLeader = rc.n, rc.in.eid
		rc.ver = k.capVersion
	case rLeave:
		k.live = slices.DeleteFunc(k.live, func(l liveInstance) bool { return l.id == rc.in.eid })
	}
	return false, false
}

// heartbeatTicks and scheduleBatch are the runner's (runner/chores.go,
// runner/scheduler.go).
const (
	heartbeatTicks = 3
	scheduleBatch  = 512
)

// rfinish hands a runner command's outcome to its goroutine's model. err
// is the call's own failure; an error Redis answered is rc.err.
func (w *world) rfinish(c *call, err error) {
	rc := c.rc
	in := rc.in
	answered := err == nil
	if err == nil {
		err = rc.err
	}
	switch rc.kind {
	case rDispatch, rDispatchDelayed:
		w.dispatched(rc, err)
		return
	case rLeave:
		if in.alive {
			w.down(in)
		}
		return
	}
	if rc.kind == rGroup {
		defer w.startChain(in) // Start returned (or failed): the harness starts the next
	}
	if !in.alive {
		return // crashed, or its stop timed out: it reports nothing more
	}
	rn := in.rn
	switch rc.kind {
	case rGroup:
		if err != nil {
			w.fail(in, fmt.Errorf("runner: creating consumer group: %w", err))
		}
		if !rn.started && !rn.stopping {
			w.runnerStarted(in)
		}
	case rRead, rClaim:
		w.fetched(in, rc, err)
	case rAck:
		w.acked(in, rc, err, answered)
	case rBeat:
		w.beaten(in, rc, err)
	case rSchedule:
		w.scheduled(in, rc, err)
	case rMetrics:
		w.measured(in, rc, err)
	case rPublish:
		w.published(in, rc, err)
	}
}

// record records a runner event of in, as sim/real's runnerEvent does.
func (w *world) recordR(in *inc, e model.Event) {
	e.Instance, e.ID = in.slot.idx, in.eid
	w.record(e)
}

// fail is the runner's fail: an EventError, recorded as RunnerError.
func (w *world) fail(in *inc, err error) {
	w.recordR(in, model.Event{Kind: model.RunnerError, Err: err.Error()})
}

// ---- timers on the runner's clock ----

func (w *world) armR(in *inc, t int, tt time.Duration) {
	rt := &in.rn.timers[t]
	rt.tt, rt.armed = tt, true
	rt.gen++
	if at := in.realAt(tt); at != never {
		w.at(at, event{kind: evRTimer, a: in.n, b: int32(t), gen: rt.gen})
	}
}

func (w *world) rearmR(in *inc) {
	if in.rn == nil {
		return
	}
	for t := range in.rn.timers {
		if in.rn.timers[t].armed {
			w.armR(in, t, in.rn.timers[t].tt)
		}
	}
}

func (w *world) rtimerFired(in *inc, t int32, gen uint32) {
	rt := &in.rn.timers[t]
	if !rt.armed || rt.gen != gen {
		return
	}
	rt.armed = false
	switch t {
	case rtTick:
		if in.rn.ticking {
			in.rn.tickDue = true
			w.armTick(in)
			return
		}
		w.tick(in)
	case rtFetchWait:
		in.rn.fetching = false
		w.fetchNext(in)
	case rtAckWait:
		w.sendAcks(in)
	}
}

// armTick arms the ticker's next tick on its grid (a tick missed while
// one ran is dropped, as a time.Ticker drops it).
func (w *world) armTick(in *inc) {
	rn := in.rn
	now := in.tt(w.now)
	for rn.tickTT <= now {
		rn.tickTT += w.p.ChoreInterval
	}
	w.armR(in, rtTick, rn.tickTT)
}

// ---- the chore tick (runner/chores.go's tick) ----

func (w *world) tick(in *inc) {
	rn := in.rn
	if rn.stopping {
		return
	}
	rn.ticking = true
	if !rn.timers[rtTick].armed {
		w.armTick(in)
	}
	w.rsend(in, w.cmd(rcmd{kind: rBeat}), 0)
}

func (w *world) tickDone(in *inc) {
	rn := in.rn
	rn.ticking = false
	if rn.stopping {
		w.stopProgress(in)
		return
	}
	if rn.tickDue {
		rn.tickDue = false
		w.tick(in)
	}
}

// leadership is the elector's decision now.
func (w *world) leadership(in *inc) leadership {
	l := leadership{leader: in.leading, term: in.m.Term(), token: in.m.Token()}
	if l.leader && in.guardTT != 0 && in.tt(w.now) >= in.guardTT {
		l.leader = false // the guard's deadline passed: Leadership says no
	}
	return l
}

// leads: the elector still leads in lead's term.
func (w *world) leads(in *inc, lead leadership) bool {
	now := w.leadership(in)
	return now.leader && now.term == lead.term
}

func (w *world) beaten(in *inc, rc *rcmd, err error) {
	if err != nil {
		w.fail(in, fmt.Errorf("runner: heartbeat: %w", err))
	} else if rc.ver != 0 && rc.cap >= 1 {
		w.applyCapacity(in, rc.cap, rc.ver)
	}
	lead := w.leadership(in)
	if !lead.leader {
		w.tickDone(in)
		return
	}
	rn := in.rn
	rn.lead, rn.choreStart, rn.moved = lead, w.now, 0
	w.chore(in, rSchedule, 0)
}

func (w *world) chore(in *inc, k rkind, n int) {
	l := in.rn.lead
	w.rsend(in, w.cmd(rcmd{kind: k, n: n, term: l.term, token: l.token}), 0)
}

// fenced reports a fenced chore (ChoreFenced) and says whether err was one.
func (w *world) fenced(in *inc, k rkind, err error) bool {
	if !errors.Is(err, errFenced) {
		return false
	}
	l := in.rn.lead
	w.recordR(in, model.Event{Kind: model.ChoreFenced, Chore: string(k.chore()), Term: l.term, Token: l.token,
		Err: err.Error()})
	return true
}

func (w *world) choreRan(in *inc, k rkind, n int, start time.Duration) {
	l := in.rn.lead
	w.recordR(in, model.Event{Kind: model.ChoreRan, Chore: string(k.chore()), N: n, Took: w.now - start,
		Term: l.term, Token: l.token})
}

func (w *world) scheduled(in *inc, rc *rcmd, err error) {
	rn := in.rn
	if w.fenced(in, rSchedule, err) {
		if rn.moved > 0 {
			w.choreRan(in, rSchedule, rn.moved, rn.choreStart)
		}
		w.tickDone(in)
		return
	}
	if err != nil {
		w.fail(in, fmt.Errorf("runner: scheduler: moving due delayed tasks: %w", err))
		if rn.moved > 0 {
			w.choreRan(in, rSchedule, rn.moved, rn.choreStart)
		}
		w.afterSchedule(in)
		return
	}
	for _, m := range rc.moved {
		w.recordR(in, model.Event{Kind: model.DelayedDue, Task: m.task, Lateness: time.Duration(m.dueMS) * time.Millisecond})
	}
	rn.moved += len(rc.moved)
	if len(rc.moved) == scheduleBatch {
		w.chore(in, rSchedule, 0)
		return
	}
	w.choreRan(in, rSchedule, rn.moved, rn.choreStart)
	w.afterSchedule(in)
}

func (w *world) afterSchedule(in *inc) {
	rn := in.rn
	if !w.leads(in, rn.lead) {
		w.tickDone(in)
		return
	}
	rn.choreStart = w.now
	w.chore(in, rMetrics, 0)
}

func (w *world) measured(in *inc, rc *rcmd, err error) {
	rn := in.rn
	if w.fenced(in, rMetrics, err) {
		w.tickDone(in)
		return
	}
	if err != nil {
		w.fail(in, fmt.Errorf("runner: metrics: reading and resetting the samples: %w", err))
		w.tickDone(in)
		return
	}
	st := rc.stats
	if st.samples > 0 {
		rn.lastAvg = w.rc.taskDur // every task of the harness takes its TaskDuration
	}
	w.choreRan(in, rMetrics, int(st.samples), rn.choreStart)
	if !w.leads(in, rn.lead) {
		w.tickDone(in)
		return
	}
	pending := min(int64(st.pending), int64(max(st.live, 1))*int64(rn.size))
	backlog := max(int64(st.length)-pending, 0) + pending
	c := rn.size
	if backlog == 0 || rn.lastAvg > 0 {
		c = runner.CapacityFor(backlog, rn.lastAvg, st.live, w.rc.DrainTarget, w.rc.MinWorkers, w.rc.MaxWorkers)
	}
	rn.choreStart = w.now
	w.chore(in, rPublish, c)
}

func (w *world) published(in *inc, rc *rcmd, err error) {
	if !w.fenced(in, rPublish, err) {
		if err != nil {
			w.fail(in, fmt.Errorf("runner: capacity: publishing %d: %w", rc.n, err))
		} else {
			w.choreRan(in, rPublish, rc.n, in.rn.choreStart)
			w.applyCapacity(in, rc.n, rc.ver)
		}
	}
	w.tickDone(in)
}

// applyCapacity resizes the pool to a publication not applied yet.
func (w *world) applyCapacity(in *inc, capacity int, version int64) {
	rn := in.rn
	if version == rn.capVersion {
		return
	}
	rn.capVersion, rn.size = version, capacity
	w.startWorkers(in)
}

// ---- the fetcher (runner/fetch.go) ----

// window is the read-ahead the pool allows (runner's pool.window).
func (w *world) window(rn *rinst) int {
	switch {
	case !rn.ranAny:
		return 0
	case w.rc.taskDur <= 0:
		return w.rc.ReadAhead
	}
	return int(min(int64(w.rc.ReadAhead), int64(rn.size)*int64(10*time.Millisecond)/int64(w.rc.taskDur)))
}

func (w *world) fetchNext(in *inc) {
	rn := in.rn
	if !in.alive || rn.fetching || rn.fetchDone {
		return
	}
	if rn.stopping {
		rn.fetchDone = true
		w.stopProgress(in)
		return
	}
	limit := rn.size + w.window(rn)
	free := limit - rn.running - len(rn.queue)
	if free <= 0 || len(rn.queue) > 0 && 2*free < limit {
		rn.fetchWait = true
		return
	}
	rn.fetchWait = false
	n := min(w.rc.Batch, free)
	rn.fetching, rn.reserved = true, n
	sent := in.tt(w.now)
	if sent >= rn.nextClaimTT {
		w.rsend(in, w.cmd(rcmd{kind: rClaim, n: n, sentTT: sent}), 0)
		return
	}
	w.rsend(in, w.cmd(rcmd{kind: rRead, n: n, block: w.rc.Block, sentTT: sent}), 0)
}

func (w *world) fetched(in *inc, rc *rcmd, err error) {
	rn := in.rn
	if rc.kind == rClaim {
		rn.nextClaimTT = in.tt(w.now) + w.p.ChoreInterval
		if err == nil && len(rc.got) == 0 {
			w.rsend(in, w.cmd(rcmd{kind: rRead, n: rc.n, block: w.rc.Block, sentTT: in.tt(w.now)}), 0)
			return
		}
	}
	if err != nil {
		what := "reading the stream"
		if rc.kind == rClaim {
			what = "reclaiming idle entries"
		}
		w.fail(in, fmt.Errorf("runner: %s: %w", what, err))
		if errors.Is(err, errNoGroup) {
			w.rsend(in, w.cmd(rcmd{kind: rGroup}), 0)
		}
		if rn.stopping {
			rn.fetching = false
			w.fetchNext(in)
			return
		}
		w.armR(in, rtFetchWait, in.tt(w.now)+w.rc.Block)
		return
	}
	rn.fetching = false
	for _, e := range rc.got {
		if rn.flights[e.seq] {
			continue // its own entry, still held here: not twice
		}
		rn.flights[e.seq] = true
		rn.queue = append(rn.queue, &rdel{seq: e.seq, task: e.task, attempt: e.attempt,
			reclaimed: rc.kind == rClaim, readSentTT: rc.sentTT, in: in})
	}
	w.startWorkers(in)
	w.fetchNext(in)
}

// ---- the workers (runner/worker.go) ----

func (w *world) startWorkers(in *inc) {
	rn := in.rn
	for rn.running < rn.size && len(rn.queue) > 0 {
		d := rn.queue[0]
		rn.queue = rn.queue[1:]
		if in.tt(w.now)+w.rc.timeout > d.readSentTT+w.rc.ClaimIdle {
			// Deferred: it could still run when another instance may
			// reclaim it; it stays pending, for a reclaim after ClaimIdle.
			delete(rn.flights, d.seq)
			continue
		}
		if d.reclaimed {
			w.recordR(in, model.Event{Kind: model.TaskReclaimed, Task: d.task})
		}
		rn.running++
		w.dels = append(w.dels, d)
		// The handler sleeps TaskDuration of real time (time.After), which
		// neither a pause nor a clock fault bends.
		w.at(w.now+w.rc.taskDur, event{kind: evTaskDone, a: int32(len(w.dels) - 1)})
	}
	if rn.fetchWait {
		w.fetchNext(in)
	}
}

func (w *world) taskDone(d *rdel) {
	in := d.in
	if !in.alive {
		return // crashed (or stopped past its bound): its entry stays pending
	}
	rn := in.rn
	rn.running--
	rn.ranAny = true
	rn.acks = append(rn.acks, d)
	if rn.ackCall == nil {
		w.flushAcks(in)
	}
	w.startWorkers(in)
	if rn.fetchWait {
		w.fetchNext(in)
	}
	w.stopProgress(in)
}

// ---- the acker (runner/acks.go) ----

func (w *world) flushAcks(in *inc) {
	rn := in.rn
	if len(rn.acks) == 0 {
		return
	}
	n := min(len(rn.acks), max(w.rc.AckBatch, 1))
	batch := slices.Clone(rn.acks[:n])
	rn.acks = rn.acks[n:]
	until := never
	for _, d := range batch {
		until = min(until, d.readSentTT+w.rc.ClaimIdle)
		w.recordR(in, model.Event{Kind: model.TaskAcknowledging, Task: d.task})
	}
	rn.ackCall = w.cmd(rcmd{kind: rAck, batch: batch})
	rn.ackFirst, rn.ackPause, rn.ackUntil, rn.ackResent = in.tt(w.now), 10*time.Millisecond, until, false
	w.rsend(in, rn.ackCall, 0)
}

func (w *world) sendAcks(in *inc) {
	rn := in.rn
	rn.ackResent = true
	rc := w.cmd(rcmd{kind: rAck, batch: rn.ackCall.batch})
	rn.ackCall = rc
	w.rsend(in, rc, 0)
}

func (w *world) acked(in *inc, rc *rcmd, err error, answered bool) {
	rn := in.rn
	at := in.tt(w.now)
	if err != nil && !answered {
		if at+rn.ackPause < rn.ackUntil {
			w.armR(in, rtAckWait, at+rn.ackPause)
			rn.ackPause = min(2*rn.ackPause, time.Second)
			return
		}
		err = fmt.Errorf("no answer from Redis over %v, so whether it applied is unknown: %w", (at - rn.ackFirst).Round(time.Millisecond), err)
	}
	if err != nil {
		d := rc.batch[0]
		w.fail(in, fmt.Errorf("runner: acknowledging %d tasks (first %s, work): %w", len(rc.batch), d.task, err))
	} else {
		unknown := 0
		for i, d := range rc.batch {
			if !rc.acked[i] && rn.ackResent && (d.reclaimed || at >= d.readSentTT+w.rc.ClaimIdle) {
				unknown++
				continue
			}
			w.recordR(in, model.Event{Kind: model.TaskCompleted, Task: d.task})
		}
		if unknown > 0 {
			w.fail(in, fmt.Errorf("runner: acknowledging %d tasks: a re-sent call found them acknowledged, but another instance may have had them", unknown))
		}
	}
	for _, d := range rc.batch {
		delete(rn.flights, d.seq)
	}
	rn.ackCall = nil
	w.flushAcks(in)
	w.stopProgress(in)
}

// ---- the workload (sim/realtime's) ----

// workload is a dispatch loop of the harness: a ticker at the rate, each
// tick one dispatch through a live instance, awaited (a tick that falls
// due meanwhile waits, later ones are dropped, as a time.Ticker's).
type workload struct {
	period  time.Duration
	delay   time.Duration
	next    time.Duration
	busy    *call
	pending bool
}

func (w *world) startWorkload(at time.Duration) {
	wl := w.sc.Workload
	if w.sc.Mode != model.ModeRunner || (wl.DispatchRate <= 0 && wl.DelayedRate <= 0) {
		return
	}
	w.workRNG = rand.New(rand.NewPCG(uint64(w.sc.Seed), 1<<32)) // sim/realtime's via stream
	// The loops' phase against the runners' tickers and the faults is the
	// real harness's start-up noise (the dispatches fell 2-48 ms into
	// their 50 ms period over 39 real runs): drawn from the seed, so that
	// which task is in flight at a fault's instant varies over seeds as
	// over real runs, rather than being one fixed phase.
	if p := time.Duration(float64(time.Second) / max(wl.DispatchRate, wl.DelayedRate)); p > 0 {
		at += time.Duration(rand.New(rand.NewPCG(uint64(w.sc.Seed), 1<<33)).Int64N(int64(p)))
	}
	add := func(rate float64, delay time.Duration) {
		if rate <= 0 {
			return
		}
		p := time.Duration(float64(time.Second) / rate)
		w.loops = append(w.loops, &workload{period: p, delay: delay, next: at + p})
		w.at(at+p, event{kind: evWork, a: int32(len(w.loops) - 1)})
	}
	add(wl.DispatchRate, 0)
	add(wl.DelayedRate, wl.Delay)
}

func (w *world) workTick(i int32) {
	l := w.loops[i]
	if w.now >= w.sc.Duration {
		return // the workload runs through the fault phase only
	}
	l.next += l.period
	w.at(l.next, event{kind: evWork, a: i})
	if l.busy != nil {
		l.pending = true
		return
	}
	w.dispatchTask(int(i))
}

func (w *world) dispatchTask(i int) {
	l := w.loops[i]
	start := w.workRNG.IntN(len(w.slots))
	var in *inc
	for k := range w.slots {
		if s := w.slots[(start+k)%len(w.slots)]; s.cur != nil {
			in = s.cur
			break
		}
	}
	if in == nil {
		return
	}
	w.taskN++
	rc := w.cmd(rcmd{kind: rDispatch, task: taskID(w.taskN), loop: i})
	if l.delay > 0 {
		rc.kind, rc.delay = rDispatchDelayed, l.delay
	}
	l.busy = w.rsend(in, rc, time.Second)
}

func (w *world) dispatched(rc *rcmd, err error) {
	l := w.loops[rc.loop]
	l.busy = nil
	if err == nil {
		w.recordR(rc.in, model.Event{Kind: model.TaskDispatched, Task: rc.task})
	}
	if l.pending && w.now < w.sc.Duration {
		l.pending = false
		w.dispatchTask(rc.loop)
	}
}

// taskID is the n-th dispatched task's ID: 32 hex digits, as the
// runner's.
func taskID(n int) string {
	var b [32]byte
	for i := range b {
		b[i] = '0'
	}
	h := strconv.FormatUint(uint64(n), 16)
	copy(b[32-len(h):], h)
	return string(b[:])
}

// stopWorkload cancels the dispatches under way at the end of the fault
// phase.
func (w *world) stopWorkload() {
	for _, l := range w.loops {
		l.pending = false
		if l.busy != nil {
			w.cancel(l.busy)
		}
	}
}

// recordHeld records the tasks Redis still holds at the end (TaskHeld).
func (w *world) recordHeld() {
	if w.sc.Mode != model.ModeRunner {
		return
	}
	for _, e := range w.redis.rk.entries {
		w.record(model.Event{Kind: model.TaskHeld, Instance: -1, Task: e.task, Detail: "stream"})
	}
	for _, d := range w.redis.rk.delayed {
		w.record(model.Event{Kind: model.TaskHeld, Instance: -1, Task: d.task, Detail: "delayed"})
	}
}
