package virtual

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/faults"
)

// Errors the modelled client returns, worded as go-redis's.
var (
	errTimeout = errors.New("i/o timeout")
	errEOF     = errors.New("EOF")
	errRefused = errors.New("dial tcp 127.0.0.1: connect: connection refused")
)

// go-redis v9.23.0 constants that are not in model.ClientParams.
const (
	minRetryBackoff   = 10 * time.Millisecond
	maxRetryBackoff   = time.Second
	dialerRetries     = 5
	dialerRetryPeriod = 100 * time.Millisecond
	initRoundTrips    = 3 // HELLO, CLIENT SETINFO LIB-NAME, CLIENT SETINFO LIB-VER
	// defaultPoolSize is go-redis's PoolSize default, 10 per CPU, on the
	// 2-core machines the real backend is calibrated on (fixed, so that a
	// run does not depend on the machine that computes it).
	defaultPoolSize = 20
	never           = time.Duration(math.MaxInt64)
	// redisEpochUS is Redis's TIME at the start of a run, in µs (safe-mode
	// tokens): 2026-11-30T00:00:00Z.
	redisEpochUS = 1_795_996_800_000_000
)

// world is the state of one virtual run.
type world struct {
	sc    model.Scenario // effective (defaults, scaled)
	p     model.Params
	o     Options
	q     queue
	po    *partialOrder // Options.PartialOrder's recorder, nil unless asked
	now   time.Duration
	tl    model.Timeline
	stats Stats

	idRNG   *rand.Rand
	jitterN uint64

	slots []*slot
	incs  []*inc
	calls []*call
	// mem holds the calls and runner commands (newCall, cmd), returned
	// by free when the run is over.
	mem    *arena
	faults *faults.Driver
	// doneFns are the completions of the faults whose span ends in a
	// later event (a redis-restart's, a failover's, a migration's), by
	// the index the event carries.
	doneFns []func(detail string)
	redis   redisModel
	errs    []string // harness errors (faultWorld.Fail)

	// Runner mode (runner.go): the runner's options, the deliveries
	// handed to handlers, the workload's loops and its target stream.
	rc      rconf
	chain   []int // the runners started one after the other at the start, in order
	chained int   // how many of them have started
	dels    []*rdel
	loops   []*workload
	workRNG *rand.Rand
	taskN   int

	retries int           // max(MaxRetries, 0)
	pool    int           // PoolSize: failed dial rounds that trip the breaker
	rt      time.Duration // read timeout; never when none
	cte     bool
	ended   bool
}

// slot is one instance index: its proxy (network state) and its live
// incarnation.
type slot struct {
	idx     int
	cur     *inc // live incarnation, nil when down
	net     netState
	winding *inc // an incarnation whose graceful stop is still running
	restart bool // start a new incarnation when winding is done
}

// netState is an instance's proxy and gate: active toxics and the
// connection epoch (connections from an older epoch are closed).
type netState struct {
	bhUp, bhDown, refuse, reset int
	latReq, latRep              time.Duration
	jReq, jRep                  time.Duration
	jRNG                        *rand.Rand
	epoch                       uint32
}

// inc is one incarnation of an instance: an election.Machine and its shell.
type inc struct {
	n     int32
	slot  *slot
	eid   string
	alive bool // not crashed, not fully stopped
	m     *election.Machine

	leading bool
	// Clock: timer time runs at rate from baseTT (at real baseReal), or
	// stands still while frozen. A jump moves only the wall reading, which
	// nothing of the elector reads: its timers, its Elapsed (time.Since)
	// and its guard deadline (now.Add, then Sub) are monotonic.
	rate             clockRate
	frozen           bool
	baseReal, baseTT time.Duration

	wakeTT, dlTT       time.Duration
	wakeArmed, dlArmed bool
	wakeGen, dlGen     uint32

	call    *call // the call the shell waits for
	sentTT  time.Duration
	guardTT time.Duration // safe mode: the leader's guard deadline (timer time); 0 none
	// drawn and jitter: whether the machine drew a renewal jitter in the
	// input being fed, and the draw (safe mode, with the path recorded).
	drawn    bool
	jitter   int
	idle     []uint32 // epochs of idle pooled connections
	warm     bool     // first dial done
	dialErrs int      // failed dial rounds (the pool's dial breaker)
	paused   bool
	parked   []event
	calls    []*call // every call of this incarnation still running
	stopping bool
	stopAt   time.Duration // real time Stop's bound ends
	backoff  *rand.Rand
	rn       *rinst // runner mode: the runner around the machine
}

func newWorld(sc model.Scenario, o Options) *world {
	w := &world{
		mem:     arenas.Get().(*arena),
		sc:      sc,
		p:       sc.Params,
		o:       o,
		idRNG:   rand.New(rand.NewPCG(uint64(sc.Seed), 0x1d5)),
		retries: max(sc.Params.Client.MaxRetries, 0),
		rt:      sc.Params.Client.ReadTimeout,
		cte:     sc.Params.Client.ContextTimeoutEnabled,
	}
	if w.rt < 0 {
		w.rt = never
	}
	w.faults = faults.New(sc, (*faultWorld)(w))
	if w.pool = sc.Params.Client.PoolSize; w.pool <= 0 {
		w.pool = defaultPoolSize
	}
	w.q.items = make([]event, 0, 64)
	if o.PartialOrder && o.OnCompare != nil && o.OnPop != nil && sc.Mode != model.ModeRunner {
		// The queue's own comparisons order every pair of events; the
		// partial order keeps only the pairs that depend on each other.
		w.po = newPartialOrder(sc.Instances)
	} else {
		w.q.onLess = o.OnCompare
	}
	n := 32 + 4*len(sc.Faults)
	if wl := sc.Workload; sc.Mode == model.ModeRunner {
		// About three events per task (dispatched, acknowledging,
		// completed) and four per chore tick of a leader.
		n += int(3*(wl.DispatchRate+wl.DelayedRate)*sc.Duration.Seconds()) + int(4*(sc.Duration+sc.Recovery)/max(sc.Params.ChoreInterval, time.Millisecond))
	}
	w.tl = make(model.Timeline, 0, n)
	for i := range sc.Instances {
		w.slots = append(w.slots, &slot{idx: i})
		at := o.StartAt + time.Duration(i)*o.StartStep
		if i < len(sc.Starts) {
			at += sc.Starts[i]
		}
		if sc.Mode == model.ModeRunner && (i >= len(sc.Starts) || sc.Starts[i] == 0) {
			// The harness starts runners one after the other, each
			// Start returning once its ensureGroup is answered, and the
			// workload after the last (startChain).
			w.chain = append(w.chain, i)
			continue
		}
		w.at(at, event{kind: evStart, a: int32(i)})
	}
	if len(w.chain) > 0 {
		w.at(o.StartAt, event{kind: evStart, a: int32(w.chain[0])})
	}
	// The fault plan (model.Scenario.FaultPlan), after the starts: its
	// delayed starts are in the starts above, with this backend's offsets.
	for _, a := range sc.FaultPlan() {
		switch a.Kind {
		case model.ActionInject:
			w.at(a.At, event{kind: evFault, a: int32(a.Index)})
		case model.ActionHeal:
			w.at(a.At, event{kind: evHeal, a: int32(a.Index)})
		}
	}
	if sc.Mode == model.ModeRunner {
		w.rc = newRConf(sc)
		if len(w.chain) == 0 {
			w.startWorkload(o.StartAt)
		}
	}
	w.at(sc.Duration, event{kind: evPhaseEnd})
	w.at(sc.Duration+sc.Recovery, event{kind: evRunEnd})
	return w
}

// newCall returns a zero call numbered as the next of w.calls, listed there.
func (w *world) newCall() *call {
	c := w.mem.call()
	c.id = int32(len(w.calls))
	w.calls = append(w.calls, c)
	return c
}

func (w *world) at(t time.Duration, e event) {
	w.cmp(t, w.now)
	e.at = max(t, w.now)
	w.q.add(e)
	if w.po != nil {
		w.po.queued(w.q.seq)
	}
}

func (w *world) record(e model.Event) {
	if w.ended {
		return
	}
	e.At = w.now
	w.tl = append(w.tl, e)
	if w.po != nil {
		w.po.touchTimeline()
	}
}

// free returns the run's calls and commands to be reused: nothing of the
// world may be used afterwards.
func (w *world) free() {
	w.mem.release()
	w.mem, w.calls, w.incs, w.slots = nil, nil, nil, nil
}

// simulate runs the queue to the end of the run.
func (w *world) simulate() {
	if w.po != nil {
		setup := len(w.po.a)
		defer w.po.flush(w, setup)
	}
	for !w.ended && w.q.Len() > 0 {
		e := w.q.next()
		if w.po != nil {
			w.po.begin(w, e)
		} else if w.o.OnPop != nil {
			w.o.OnPop(Pop{At: e.at, Kind: uint8(e.kind), A: e.a, B: e.b, Gen: e.gen})
		}
		w.now = e.at
		w.stats.Events++
		w.dispatch(e)
		if w.po != nil {
			w.po.end(w)
		}
	}
}

// cmp tells Options.OnCompare about a comparison of a and b the run's path
// depends on, if anyone asked. Call it just before comparing them.
func (w *world) cmp(a, b time.Duration) {
	if w.po != nil {
		w.po.compare(a, b)
		return
	}
	if w.o.OnCompare != nil {
		w.o.OnCompare(a, b)
	}
}

func (w *world) dispatch(e event) {
	switch e.kind {
	case evStart:
		if s := w.slots[e.a]; s.cur == nil && s.winding == nil {
			w.start(s) // else a crash's restart started it already (as realtime)
		}
	case evFault:
		w.faults.Inject(context.Background(), int(e.a))
	case evHeal:
		w.faults.Heal(int(e.a))
	case evPhaseEnd:
		w.stopWorkload()
		w.faults.HealAll()
	case evRunEnd:
		w.recordHeld()
		w.record(model.Event{Kind: model.RunEnded, Instance: -1, Detail: "complete"})
		w.ended = true
	case evWake:
		in := w.incs[e.a]
		if in.paused && in.alive {
			in.parked = append(in.parked, e) // a pause: due now, fires at resume
			return
		}
		if in.alive && in.wakeArmed && in.wakeGen == e.gen {
			in.wakeArmed = false
			w.feed(in, in.m.Timer())
		}
	case evDeadline:
		in := w.incs[e.a]
		if in.paused && in.alive {
			in.parked = append(in.parked, e)
			return
		}
		if in.alive && in.dlArmed && in.dlGen == e.gen {
			in.dlArmed = false
			before := in.m.InFlight()
			step := in.m.Expired()
			w.stats.MachineInputs++
			if before != election.OpNone && before != election.OpRelease && in.m.InFlight() != before && in.call != nil {
				// Abandoned: the shell cancels the call and drops its reply.
				in.call.detached = true
				w.cancel(in.call)
				in.call = nil
			}
			w.step(in, step)
		}
	case evStopTimeout:
		in := w.incs[e.a]
		if in.alive && in.stopping {
			if in.call != nil {
				in.call.detached = true
				in.call = nil
			}
			w.down(in)
		}
	case evCall:
		c := w.calls[e.a]
		if e.b == stExec {
			w.exec(c, e.gen) // reaches Redis whatever became of the caller
			return
		}
		if c.done || c.gen != e.gen {
			return
		}
		w.callStep(c, e)
	case evExpire:
		w.redis.expireEvent(w, e.gen)
	case evProbe:
		in := w.incs[e.a]
		switch {
		case !in.alive && len(in.calls) == 0:
		case in.slot.net.refuse > 0:
			w.at(w.now+time.Second, event{kind: evProbe, a: in.n})
		default:
			in.dialErrs = 0
		}
	case evRedisUp:
		w.redis.down = false
		w.doneFns[e.a]("")
	case evFailover:
		// Healed before the switch, as the real backend records its heal
		// before its truth lane reads the new primary.
		w.doneFns[e.a]("promoted the replica")
		w.redis.failover(w)
		if w.sc.Redis == model.RedisReplicated {
			// The instances' address now points at the new primary: every
			// connection is cut, as the proxy's switch does.
			for _, s := range w.slots {
				w.closeConns(s)
			}
		}
	case evMigrated:
		w.unblockAll(errMoved) // the stream's key left the node its readers block on
		w.doneFns[e.a]("")
	case evRTimer:
		in := w.incs[e.a]
		if in.paused && in.alive {
			in.parked = append(in.parked, e)
			return
		}
		if in.alive {
			w.rtimerFired(in, e.b, e.gen)
		}
	case evTaskDone:
		w.taskDone(w.dels[e.a])
	case evBlockEnd:
		w.blockEnd(e.a, e.gen)
	case evWork:
		w.workTick(e.a)
	}
}

// ---- instances and their machines ----

func (w *world) newID() string {
	return fmt.Sprintf("%016x%016x", w.idRNG.Uint64(), w.idRNG.Uint64())
}

func (w *world) start(s *slot) {
	if w.po != nil {
		w.po.touchAll()
	}
	w.jitterN++
	jr := rand.New(rand.NewPCG(uint64(w.sc.Seed), w.jitterN)) // sim's jitterSource
	in := &inc{
		n: int32(len(w.incs)), slot: s, eid: w.newID(), alive: true, rate: realTime,
		baseReal: w.now,
		backoff:  rand.New(rand.NewPCG(uint64(w.sc.Seed), 1<<40|w.jitterN)),
	}
	jitter := jr.IntN
	if w.p.Safe && w.o.OnCompare != nil {
		// The path records safe mode's renewIn, whose max takes the draw.
		jitter = func(n int) int {
			in.drawn, in.jitter = true, jr.IntN(n)
			return in.jitter
		}
	}
	in.m = election.NewMachine(election.MachineOptions{
		TTL: w.p.TTL, Wait: w.p.Wait, JitterMS: max(w.p.JitterMS, 0), Jitter: jitter,
		Safe: w.p.Safe, Margin: w.p.SafeMargin,
	})
	w.incs = append(w.incs, in)
	s.cur = in
	w.record(model.Event{Kind: model.InstanceStarted, Instance: s.idx, ID: in.eid})
	if w.sc.Mode == model.ModeRunner {
		w.startRunner(in) // the machine starts once the group exists
		return
	}
	w.feed(in, in.m.Start())
}

// tt is the incarnation's timer time now.
func (in *inc) tt(now time.Duration) time.Duration {
	if in.frozen {
		return in.baseTT
	}
	return in.baseTT + in.rate.elapsed(now-in.baseReal)
}

// realAt is the real time at which timer time reaches t (never while frozen).
func (in *inc) realAt(t time.Duration) time.Duration {
	if in.frozen {
		return never
	}
	d := in.rate.realFor(t - in.baseTT)
	if d > never-in.baseReal {
		return never // saturated: beyond any run
	}
	return in.baseReal + d
}

// rebase changes the clock's speed or liveness from now on, and re-arms its
// timers accordingly.
func (w *world) rebase(in *inc, rate clockRate, frozen bool) {
	in.baseTT = in.tt(w.now)
	in.baseReal = w.now
	in.rate, in.frozen = rate, frozen
	if in.wakeArmed {
		w.armWake(in, in.wakeTT)
	}
	if in.dlArmed {
		w.armDeadline(in, in.dlTT)
	}
	w.rearmR(in)
}

func (w *world) armWake(in *inc, at time.Duration) {
	in.wakeTT, in.wakeArmed = at, true
	in.wakeGen++
	if t := in.realAt(at); t != never {
		w.at(t, event{kind: evWake, a: in.n, gen: in.wakeGen})
	}
}

func (w *world) armDeadline(in *inc, at time.Duration) {
	in.dlTT, in.dlArmed = at, true
	in.dlGen++
	if t := in.realAt(at); t != never {
		w.at(t, event{kind: evDeadline, a: in.n, gen: in.dlGen})
	}
}

func (w *world) feed(in *inc, s election.Step) {
	w.stats.MachineInputs++
	w.step(in, s)
}

// step carries out a Step as election.Elector's loop does.
func (w *world) step(in *inc, s election.Step) {
	if !in.alive {
		return
	}
	tt := in.tt(w.now)
	if s.Deadline > 0 {
		w.armDeadline(in, tt+s.Deadline)
		if in.m.State() == election.Leader {
			in.guardTT = tt + s.Deadline
		}
	}
	if in.m.State() != election.Leader {
		in.guardTT = 0
	}
	in.leading = in.m.State() == election.Leader
	for _, sig := range s.Signals {
		ev := model.Event{Instance: in.slot.idx, ID: in.eid}
		switch sig {
		case election.SignalPromote:
			ev.Kind = model.LeaderGained
			if in.rn != nil {
				// The runner's leadership event carries the term (and
				// token), as sim/real records it.
				ev.Term, ev.Token = in.m.Term(), in.m.Token()
			}
		case election.SignalDemote:
			ev.Kind = model.LeaderLost
		case election.SignalError:
			ev.Kind = model.ElectorError
			if s.Err != nil {
				ev.Err = s.Err.Error()
				if in.rn != nil {
					ev.Err = "election: " + ev.Err // the runner's ErrElection
				}
			}
		}
		w.record(ev)
	}
	if s.Run != election.OpNone {
		w.startCall(in, s.Run, s.Deadline)
	}
	if s.Wake > 0 {
		w.armWake(in, tt+s.Wake)
	}
	if s.Done {
		if in.rn != nil {
			w.leave(in)
			return
		}
		w.down(in)
	}
}

// down ends a gracefully stopped incarnation.
func (w *world) down(in *inc) {
	in.alive = false
	in.wakeArmed, in.dlArmed = false, false
	w.record(model.Event{Kind: model.InstanceStopped, Instance: in.slot.idx, ID: in.eid})
	s := in.slot
	if s.winding == in {
		s.winding = nil
		if s.restart {
			s.restart = false
			w.start(s)
		}
	}
}

func (w *world) crash(s *slot) {
	in := s.cur
	if in == nil {
		return
	}
	s.cur = nil
	w.record(model.Event{Kind: model.InstanceCrashed, Instance: s.idx, ID: in.eid})
	in.alive = false
	in.leading = false
	in.wakeArmed, in.dlArmed = false, false
	for _, c := range in.calls {
		c.done, c.killed = true, true // the gate is dead: nothing more goes out or comes in
	}
	in.calls = nil
	in.call = nil
	in.parked = nil
	if in.rn != nil {
		w.startChain(in) // crashed in its Start: the harness goes on with the next
	}
}

func (w *world) stop(s *slot) {
	in := s.cur
	if in == nil {
		return
	}
	s.cur = nil
	s.winding = in
	if in.paused || in.frozen {
		in.paused = false
		w.rebase(in, in.rate, false)
		w.unpark(in)
	}
	if in.rn != nil {
		w.stopRunner(in) // the elector stops once the runner is done
		return
	}
	w.stopElector(in)
}

// stopElector is the elector's Stop: demote, then release, bounded by
// StopTimeout.
func (w *world) stopElector(in *inc) {
	in.stopping = true
	stopTimeout := w.p.TTL // election.Opts.StopTimeout default
	in.stopAt = w.now + stopTimeout
	w.at(in.stopAt, event{kind: evStopTimeout, a: in.n})
	in.wakeArmed = false
	if in.call != nil && in.m.InFlight() != election.OpRelease {
		w.cancel(in.call)
	}
	w.feed(in, in.m.Stop())
}

// pause holds the instance's traffic and its timers: a pause (SIGSTOP, a
// GC) lets its clock run on, so a timer due meanwhile waits in parked and
// fires at resume; a suspend also stops the clock, so timers resume with
// the time they had left.
func (w *world) pause(s *slot, suspend bool) bool {
	in := s.cur
	if in == nil {
		return false
	}
	if suspend {
		w.rebase(in, in.rate, true)
	}
	in.paused = true
	w.record(model.Event{Kind: model.InstancePaused, Instance: s.idx, ID: in.eid})
	return true
}

func (w *world) resume(s *slot) {
	in := s.cur
	if in == nil {
		return
	}
	if in.frozen {
		w.rebase(in, in.rate, false)
	}
	in.paused = false
	w.unpark(in)
	w.record(model.Event{Kind: model.InstanceResumed, Instance: s.idx, ID: in.eid})
}

func (w *world) unpark(in *inc) {
	p := in.parked
	in.parked = nil
	for _, e := range p {
		w.at(w.now, e)
	}
}

// partition adds (d = +1) or removes (d = −1) a partition on a proxy.
func (w *world) partition(s *slot, mode string, d int) {
	n := &s.net
	switch mode {
	case model.PartitionRefuse:
		n.refuse += d
		if d > 0 {
			// Disable closes every connection: reads in flight get EOF.
			w.closeConns(s)
		}
	case model.PartitionReset:
		n.reset += d
	default:
		up := mode == model.PartitionBlackhole || mode == model.PartitionBlackholeRequests
		down := mode == model.PartitionBlackhole || mode == model.PartitionBlackholeReplies
		if up {
			n.bhUp += d
		}
		if down {
			n.bhDown += d
		}
		if d < 0 {
			// Removing a timeout toxic closes the connections it touched:
			// a read still waiting gets EOF now.
			w.interruptReads(s)
		}
	}
}

// closeConns closes every connection of the proxy: idle ones die, reads in
// flight fail with EOF.
func (w *world) closeConns(s *slot) {
	s.net.epoch++
	w.interruptReads(s)
}

func (w *world) interruptReads(s *slot) {
	for _, in := range w.incsOf(s) {
		for _, c := range append([]*call(nil), in.calls...) {
			if c.reading && !c.done {
				c.reading = false
				c.gen++
				w.attemptFailed(c, errEOF, true)
			}
		}
	}
}

// incsOf lists the incarnations of a slot that may still have calls.
func (w *world) incsOf(s *slot) []*inc {
	var out []*inc
	if s.cur != nil {
		out = append(out, s.cur)
	}
	if s.winding != nil && s.winding != s.cur {
		out = append(out, s.winding)
	}
	for _, in := range w.incs {
		if in.slot == s && in != s.cur && in != s.winding && len(in.calls) > 0 {
			out = append(out, in)
		}
	}
	return out
}
