package virtual

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
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
	now   time.Duration
	tl    model.Timeline
	stats Stats

	targetRNG *rand.Rand // fault targets: the real backend's stream
	idRNG     *rand.Rand
	jitterN   uint64

	slots  []*slot
	incs   []*inc
	calls  []*call
	free   []*call
	active []*activeFault // by fault id
	redis  redisModel

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
	rate             float64
	frozen           bool
	baseReal, baseTT time.Duration

	wakeTT, dlTT       time.Duration
	wakeArmed, dlArmed bool
	wakeGen, dlGen     uint32

	call     *call // the call the shell waits for
	sentTT   time.Duration
	guardTT  time.Duration // safe mode: the leader's guard deadline (timer time); 0 none
	idle     []uint32      // epochs of idle pooled connections
	warm     bool          // first dial done
	dialErrs int           // failed dial rounds (the pool's dial breaker)
	paused   bool
	parked   []event
	calls    []*call // every call of this incarnation still running
	stopping bool
	stopAt   time.Duration // real time Stop's bound ends
	backoff  *rand.Rand
}

type activeFault struct {
	id      int
	f       model.Fault
	targets []int
	clocks  []*inc
	paused  []int
}

func newWorld(sc model.Scenario, o Options) *world {
	w := &world{
		sc:        sc,
		p:         sc.Params,
		o:         o,
		targetRNG: rand.New(rand.NewPCG(uint64(sc.Seed), 0)),
		idRNG:     rand.New(rand.NewPCG(uint64(sc.Seed), 0x1d5)),
		active:    make([]*activeFault, len(sc.Faults)),
		retries:   max(sc.Params.Client.MaxRetries, 0),
		rt:        sc.Params.Client.ReadTimeout,
		cte:       sc.Params.Client.ContextTimeoutEnabled,
	}
	if w.rt < 0 {
		w.rt = never
	}
	if w.pool = sc.Params.Client.PoolSize; w.pool <= 0 {
		w.pool = defaultPoolSize
	}
	w.q.items = make([]event, 0, 64)
	w.tl = make(model.Timeline, 0, 32+4*len(sc.Faults))
	for i := range sc.Instances {
		w.slots = append(w.slots, &slot{idx: i})
		at := o.StartAt + time.Duration(i)*o.StartStep
		if i < len(sc.Starts) {
			at += sc.Starts[i]
		}
		w.at(at, event{kind: evStart, a: int32(i)})
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
	w.at(sc.Duration, event{kind: evPhaseEnd})
	w.at(sc.Duration+sc.Recovery, event{kind: evRunEnd})
	return w
}

func (w *world) at(t time.Duration, e event) {
	e.at = max(t, w.now)
	w.q.add(e)
}

func (w *world) record(e model.Event) {
	if w.ended {
		return
	}
	e.At = w.now
	w.tl = append(w.tl, e)
}

// simulate runs the queue to the end of the run.
func (w *world) simulate() {
	for !w.ended && w.q.Len() > 0 {
		e := w.q.next()
		w.now = e.at
		w.stats.Events++
		w.dispatch(e)
	}
}

func (w *world) dispatch(e event) {
	switch e.kind {
	case evStart:
		w.start(w.slots[e.a])
	case evFault:
		w.apply(int(e.a))
	case evHeal:
		if af := w.active[e.a]; af != nil {
			w.heal(af)
			w.active[e.a] = nil
		}
	case evPhaseEnd:
		for id, af := range w.active {
			if af != nil {
				w.heal(af)
				w.active[id] = nil
			}
		}
	case evRunEnd:
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
		w.record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(model.FaultRedisRestart), FaultID: int(e.a)})
	case evFailover:
		// Recorded before the switch, as the real backend records its heal
		// before its truth lane reads the new primary.
		w.record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(model.FaultRedisFailover), FaultID: int(e.a), Detail: "promoted the replica"})
		w.redis.failover(w)
		if w.sc.Redis == model.RedisReplicated {
			// The instances' address now points at the new primary: every
			// connection is cut, as the proxy's switch does.
			for _, s := range w.slots {
				w.closeConns(s)
			}
		}
	case evMigrated:
		w.record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(model.FaultSlotMigration), FaultID: int(e.a)})
	}
}

// ---- instances and their machines ----

func (w *world) newID() string {
	return fmt.Sprintf("%016x%016x", w.idRNG.Uint64(), w.idRNG.Uint64())
}

func (w *world) start(s *slot) {
	w.jitterN++
	jr := rand.New(rand.NewPCG(uint64(w.sc.Seed), w.jitterN)) // sim's jitterSource
	in := &inc{
		n: int32(len(w.incs)), slot: s, eid: w.newID(), alive: true, rate: 1,
		baseReal: w.now,
		backoff:  rand.New(rand.NewPCG(uint64(w.sc.Seed), 1<<40|w.jitterN)),
	}
	in.m = election.NewMachine(election.MachineOptions{
		TTL: w.p.TTL, Wait: w.p.Wait, JitterMS: max(w.p.JitterMS, 0), Jitter: jr.IntN,
		Safe: w.p.Safe, Margin: w.p.SafeMargin,
	})
	w.incs = append(w.incs, in)
	s.cur = in
	w.record(model.Event{Kind: model.InstanceStarted, Instance: s.idx, ID: in.eid})
	w.feed(in, in.m.Start())
}

// tt is the incarnation's timer time now.
func (in *inc) tt(now time.Duration) time.Duration {
	if in.frozen {
		return in.baseTT
	}
	if in.rate == 1 {
		return in.baseTT + now - in.baseReal
	}
	return in.baseTT + time.Duration(float64(now-in.baseReal)*in.rate)
}

// realAt is the real time at which timer time reaches t (never while frozen).
func (in *inc) realAt(t time.Duration) time.Duration {
	if in.frozen {
		return never
	}
	d := t - in.baseTT
	if in.rate != 1 {
		d = time.Duration(math.Ceil(float64(d) / in.rate))
	}
	return in.baseReal + d
}

// rebase changes the clock's speed or liveness from now on, and re-arms its
// timers accordingly.
func (w *world) rebase(in *inc, rate float64, frozen bool) {
	in.baseTT = in.tt(w.now)
	in.baseReal = w.now
	in.rate, in.frozen = rate, frozen
	if in.wakeArmed {
		w.armWake(in, in.wakeTT)
	}
	if in.dlArmed {
		w.armDeadline(in, in.dlTT)
	}
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
		case election.SignalDemote:
			ev.Kind = model.LeaderLost
		case election.SignalError:
			ev.Kind = model.ElectorError
			if s.Err != nil {
				ev.Err = s.Err.Error()
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

// ---- faults, as sim's apply, healFault and resolveTargets ----

func (w *world) resolveTargets(t model.Target) []int {
	var live []int
	leading := map[int]bool{}
	for _, s := range w.slots {
		if s.cur != nil {
			live = append(live, s.idx)
			leading[s.idx] = s.cur.leading
		}
	}
	return t.Resolve(live, leading, w.targetRNG.IntN)
}

func (w *world) apply(id int) {
	f := w.sc.Faults[id]
	a := &activeFault{id: id, f: f}
	if !f.Kind.OnRedis() {
		a.targets = w.resolveTargets(f.Target)
		if len(a.targets) == 0 {
			w.record(model.Event{Kind: model.FaultSkipped, Instance: -1, Fault: string(f.Kind), Mode: f.Mode, FaultID: id,
				Detail: fmt.Sprintf("target %s matched no live instance", f.Target)})
			return
		}
	}
	w.record(model.Event{Kind: model.FaultApplied, Instance: -1, Fault: string(f.Kind), Mode: f.Mode, FaultID: id, Target: a.targets, Detail: f.Describe(), Instant: f.Instant()})
	switch f.Kind {
	case model.FaultCrash, model.FaultStop:
		for _, i := range a.targets {
			if f.Kind == model.FaultCrash {
				w.crash(w.slots[i])
			} else {
				w.stop(w.slots[i])
			}
		}
	case model.FaultPartition:
		for _, i := range a.targets {
			w.partition(w.slots[i], f.Mode, +1)
		}
	case model.FaultLatency:
		for _, i := range a.targets {
			n := &w.slots[i].net
			base := f.Latency - f.Jitter
			if f.Direction != model.DirectionReplies {
				n.latReq += base
			}
			if f.Direction != model.DirectionRequests {
				n.latRep += base
			}
			if w.slots[i].cur != nil && f.Jitter > 0 {
				n.jReq, n.jRep = 0, 0
				if f.Direction != model.DirectionReplies {
					n.jReq = f.Jitter
				}
				if f.Direction != model.DirectionRequests {
					n.jRep = f.Jitter
				}
				n.jRNG = rand.New(rand.NewPCG(uint64(w.sc.Seed), uint64(id)<<16|uint64(i)))
			}
		}
	case model.FaultPause, model.FaultSuspend:
		for _, i := range a.targets {
			if w.pause(w.slots[i], f.Kind == model.FaultSuspend) {
				a.paused = append(a.paused, i)
			}
		}
	case model.FaultClock:
		for _, i := range a.targets {
			if in := w.slots[i].cur; in != nil {
				a.clocks = append(a.clocks, in)
				if f.Rate > 0 {
					w.rebase(in, f.Rate, in.frozen)
				}
			}
		}
	case model.FaultRedisRestart:
		w.redis.restart(w)
		for _, s := range w.slots {
			w.closeConns(s)
		}
		w.at(w.now+w.o.RedisDowntime, event{kind: evRedisUp, a: int32(id)})
		return // healed when Redis is back
	case model.FaultScriptFlush:
		w.redis.scripts = 0
	case model.FaultRedisFailover:
		if f.Lag > 0 {
			// The replica stops applying writes: what it has of the lease
			// is what the primary has now.
			r := &w.redis
			r.get(w)
			r.replica = replicaCopy{holder: r.holder, expireAt: r.expireAt, token: r.token}
			r.replicaHeld = true
		}
		w.at(w.now+f.Lag+w.o.FailoverSwitch, event{kind: evFailover, a: int32(id)})
		return // healed at the switch
	case model.FaultSlotMigration:
		// MIGRATE carries the key with its TTL; the clients follow ASK and
		// MOVED. Nothing the lease sees but the time it takes.
		w.at(w.now+w.o.Migration, event{kind: evMigrated, a: int32(id)})
		return
	}
	if f.Instant() {
		w.record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(f.Kind), FaultID: id, Target: a.targets})
		return
	}
	w.active[id] = a
}

func (w *world) heal(a *activeFault) {
	f := a.f
	switch f.Kind {
	case model.FaultCrash, model.FaultStop:
		if f.Restart {
			for _, i := range a.targets {
				s := w.slots[i]
				switch {
				case s.winding != nil:
					s.restart = true // starts once the old one is down
				case s.cur == nil:
					w.start(s)
				}
			}
		}
	case model.FaultPartition:
		for _, i := range a.targets {
			w.partition(w.slots[i], f.Mode, -1)
		}
	case model.FaultLatency:
		for _, i := range a.targets {
			n := &w.slots[i].net
			base := f.Latency - f.Jitter
			if f.Direction != model.DirectionReplies {
				n.latReq -= base
			}
			if f.Direction != model.DirectionRequests {
				n.latRep -= base
			}
			n.jReq, n.jRep, n.jRNG = 0, 0, nil
			w.releaseHeld(w.slots[i].cur)
		}
	case model.FaultPause, model.FaultSuspend:
		for _, i := range a.paused {
			w.resume(w.slots[i])
		}
	case model.FaultClock:
		if f.Rate > 0 {
			for _, in := range a.clocks {
				w.rebase(in, 1, in.frozen)
			}
		}
	}
	w.record(model.Event{Kind: model.FaultHealed, Instance: -1, Fault: string(f.Kind), FaultID: a.id, Target: a.targets})
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
