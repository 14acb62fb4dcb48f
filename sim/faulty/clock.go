package faulty

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// Clock is the clock.Clock of one simulated instance, whose speed,
// wall-clock reading and liveness a chaos harness changes while the instance
// runs: SetRate (drift), Jump (a wall-clock step), Stall (a GC or SIGSTOP
// pause), Freeze (a VM or host suspend), and Resume, which ends either. All its methods are safe for concurrent use. Use
// New: the zero value is not ready.
//
// # Model
//
// The clock keeps a virtual "timer time" that runs at Rate() times real speed
// and stands still while Frozen(); timers, tickers and timeouts run on it.
// While Stalled() it runs on, but a timer that falls due is held and fires
// at Resume, as an overdue timer of a SIGSTOPped process does at SIGCONT. Now
// is timer time plus Offset(). Jump moves only the offset, because a Go
// process's timers run on the monotonic clock: a step of the wall clock changes
// what time.Now reports but not when a pending timer fires. So Jump changes
// Now (its wall reading) and never when a timer, ticker or context fires. Since
// and Until of a reading this clock's Now returned are monotonic, as
// time.Since and time.Until of a time.Now reading are (time.Time.Sub of two
// readings with monotonic clock readings ignores the wall clock): the clock
// remembers the timer time of its recent readings. Code that schedules with
// timers and measures with Since, as the elector does, is therefore immune to
// clock jumps: that is a finding of the simulation, not a gap in it. (A
// t.Sub(u) of two readings taken across a jump does see it: Now's values carry
// no monotonic reading.)
//
// # Mechanism
//
// clock.Clock returns the concrete *clock.Timer and *clock.Ticker, whose Stop
// and Reset work only on timers of the real clock and of clock.Mock. So every
// timer and ticker is a real one from clock.New(), set to its virtual duration
// divided by the rate, and a registry keeps each one's virtual deadline or
// period; SetRate, Freeze and Resume call the returned object's own Reset to
// re-schedule it. A Timer (and After, Sleep) is a real AfterFunc timer whose C
// is set to a channel of ours: its callback tells us when it fired, so it can
// leave the registry, wait if it fired early, and send the virtual time.
//
// The registry cannot see a Stop by the timer's user, and re-arming a stopped
// timer would fire it spuriously: fatal for an AfterFunc. Re-scheduling
// therefore first parks the timer (Reset to a duration that never ends) and
// reads Reset's answer: a timer that was no longer active fired or was stopped,
// and is dropped instead of re-armed. A frozen clock leaves its timers parked,
// not stopped, so a Stop while frozen is still seen at Resume.
//
// # Limitations
//
//   - Reset on a returned Timer or Ticker is not seen by the clock: its
//     duration is real time, neither scaled nor frozen, and a Timer Reset
//     before it fired still fires no earlier than the virtual deadline it was
//     created with. Make a new timer instead, as the elector and runner do.
//   - A Timer's C has capacity 1 and keeps a value sent before a Stop (the
//     behaviour of time.Timer before Go 1.23, and of clock.Mock). The value is
//     the clock's Now at delivery; a Ticker's values are real time.Now readings.
//   - time.Ticker.Stop reports nothing, so tickers stay registered for the
//     clock's life, and a Ticker its user stopped is restarted by the next
//     SetRate or Resume, ticking into a channel nobody reads. Use one clock
//     per instance incarnation. A rate change or a Resume starts a ticker's
//     period afresh: the phase of its ticks is not kept.
//   - WithTimeout and WithDeadline give a context a real deadline, converted
//     at the rate in force at the call: a context cannot be paused, so a later
//     SetRate or Freeze does not move it, and a freeze does not hold it back.
//   - A timer its user stopped stays registered until the next SetRate, Freeze
//     or Resume, or until a second after it would have fired. A Stop that
//     races with the clock re-arming that same timer is honoured, but a Stop
//     after the timer's callback began (Stop reports false) lets the firing
//     through, as time.AfterFunc does.
type Clock struct {
	real clock.Clock

	mu       sync.Mutex
	rate     float64
	frozen   bool
	stalled  bool // Stall: time runs on, firings wait in held
	offset   time.Duration
	realBase time.Time // time.Now(), monotonic, when virtBase was taken
	virtBase time.Time // timer time at realBase; no monotonic reading
	timers   map[*timerEntry]struct{}
	// readings are Now's most recent values with the offset each carried
	// (a ring), so that Since and Until of one of them are monotonic.
	readings [64]reading
	nextRead int
	tickers  []*tickerEntry
	held     []*timerEntry // fired while frozen or stalled, delivered by Resume

	nextSweep   time.Time     // real time of the next sweep for stopped timers
	forgetAfter time.Duration // how long past its due time a stopped timer is kept

	// onLate and lag: see Watch and Lag.
	onLate func(late time.Duration)
	lag    func(d time.Duration) time.Duration

	// parkedStale, nil but in tests, runs in rearm between parking a timer
	// that had fired or been stopped and undoing that: the window in which
	// its user's Stop reports true.
	parkedStale func(e *timerEntry)
}

// Watch makes the clock report how late, in real time, each timer firing
// reaches its user against the real time it was due: a loaded machine's
// lateness, which the harness counts in its measurement error. A firing a
// Stall or a Freeze held is not reported: the fault, not the machine, held
// it. f runs on the firing's goroutine before the delivery and must be
// fast. Call it before the clock's first timer.
func (c *Clock) Watch(f func(late time.Duration)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onLate = f
}

// Lag delays each later firing of a timer made for d of virtual time by
// f(d) of real time before it is delivered (and measured, Watch), as a
// loaded machine's scheduler does: the harness's tests of its own
// load-proofing use it. nil, the default, delays nothing.
func (c *Clock) Lag(f func(d time.Duration) time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lag = f
}

var _ clock.Clock = (*Clock)(nil)

// park is the real duration of a parked timer. It never ends, yet the timer
// stays active, so a Stop by its user remains visible to a later Reset.
const park = time.Duration(math.MaxInt64)

// entryState says what a firing of a timer entry means.
type entryState uint8

const (
	// armed: registered; SetRate, Freeze and Resume re-schedule it.
	armed entryState = iota
	// retired: no longer registered (it fired, or its user stopped it). A
	// firing still to come is from an arming made before, so it is genuine.
	retired
	// cancelled: its user stopped it while the clock was re-arming it, so a
	// firing still to come is the clock's own and must not be delivered.
	cancelled
)

// timerEntry is the registry's record of one Timer, After, Sleep or AfterFunc.
type timerEntry struct {
	t        *clock.Timer
	deadline time.Time // virtual deadline, in timer time
	due      time.Time // real time it is set to fire; zero while parked
	state    entryState
	ch       chan time.Time // Timer, After, Sleep: where a firing is sent
	f        func()         // AfterFunc: what a firing runs
	asked    time.Duration  // the virtual duration it was made for (Lag)
}

// tickerEntry is the registry's record of one Ticker or Tick.
type tickerEntry struct {
	t      *clock.Ticker
	period time.Duration // virtual
}

// New returns a clock that runs at rate 1, not frozen, with no
// offset: its Now starts at the real time.
func NewClock() *Clock {
	now := time.Now()
	return &Clock{
		real:        clock.New(),
		rate:        1,
		realBase:    now,
		virtBase:    now.Round(0),
		timers:      make(map[*timerEntry]struct{}),
		forgetAfter: time.Second,
	}
}

// SetRate makes the clock run at k times real speed from now on (k > 0; it
// panics otherwise). Pending timers and tickers are re-scheduled: a timer
// fires after its remaining virtual time divided by k.
func (c *Clock) SetRate(k float64) {
	if !(k > 0) || math.IsInf(k, 1) {
		panic(fmt.Sprintf("sim: Clock.SetRate(%v): the rate must be positive and finite", k))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if k == c.rate {
		return // re-scheduling would only restart the tickers' periods
	}
	now := time.Now()
	c.rebase(now)
	c.rate = k
	if !c.frozen {
		c.reschedule(now)
	}
}

// Rate returns the clock's speed relative to real time.
func (c *Clock) Rate() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rate
}

// Jump steps Now by offset, added to earlier jumps. It does not change when
// any timer, ticker or context fires: see the type's doc.
func (c *Clock) Jump(offset time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += offset
}

// Offset returns the sum of all jumps so far.
func (c *Clock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// Freeze stops the clock, as a VM or host suspend stops CLOCK_MONOTONIC:
// Now stands still and no timer or ticker fires until Resume, after which
// timers go on with the time they had left. Freezing a frozen clock does
// nothing.
func (c *Clock) Freeze() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.frozen {
		return
	}
	now := time.Now()
	c.rebase(now)
	c.frozen = true
	c.reschedule(now)
}

// Stall stops the instance, not its clock, as a GC pause or SIGSTOP does:
// Now runs on, but a timer that falls due is held, and every held timer
// fires at once at Resume; tickers do not tick until then. Stalling a
// stalled or frozen clock does nothing.
func (c *Clock) Stall() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stalled || c.frozen {
		return
	}
	c.stalled = true
	for _, k := range c.tickers {
		k.t.Stop()
	}
}

// Resume ends a freeze or a stall. After a freeze timers go on with the
// virtual time they had left (one whose deadline was reached fires at once);
// after a stall every timer that fell due meanwhile fires at once. Tickers
// start again. Resuming a running clock does nothing.
func (c *Clock) Resume() {
	c.mu.Lock()
	if !c.frozen && !c.stalled {
		c.mu.Unlock()
		return
	}
	now := time.Now()
	if c.frozen {
		c.rebase(now)
		c.frozen, c.stalled = false, false
		c.reschedule(now) // also retires the held timers: they fired
	} else {
		c.stalled = false
		for _, e := range c.held {
			c.retire(e)
		}
		for _, k := range c.tickers {
			k.t.Reset(c.tickPeriod(k.period))
		}
	}
	held := c.held
	c.held = nil
	at := c.timerTime(now).Add(c.offset)
	c.mu.Unlock()

	for _, e := range held {
		if e.f != nil {
			go e.f() // as time.AfterFunc does: not on the harness's goroutine
		} else {
			e.deliver(at)
		}
	}
}

// Stalled reports whether the clock is stalled.
func (c *Clock) Stalled() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stalled
}

// Frozen reports whether the clock is frozen.
func (c *Clock) Frozen() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frozen
}

// Now returns the virtual time: timer time plus Offset. It has no monotonic
// reading, as it is no reading of this machine's clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.timerTime(time.Now()).Add(c.offset)
	c.readings[c.nextRead] = reading{wall: t, offset: c.offset}
	c.nextRead = (c.nextRead + 1) % len(c.readings)
	return t
}

// reading is a value Now returned and the offset it carried.
type reading struct {
	wall   time.Time
	offset time.Duration
}

// Since returns how much timer time passed since t, a value Now returned:
// monotonic, like time.Since, so a Jump in between does not count. For any
// other t (or one too old to be remembered) it is Now().Sub(t).
func (c *Clock) Since(t time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timerTime(time.Now()).Add(c.offset).Sub(t) - c.jumpedSince(t)
}

// Until returns how much timer time remains until t, the opposite of Since.
func (c *Clock) Until(t time.Time) time.Duration { return -c.Since(t) }

// jumpedSince is how far the offset moved since Now returned t (0 if t is
// not a remembered reading). The newest matching reading wins. c.mu held.
func (c *Clock) jumpedSince(t time.Time) time.Duration {
	for i := range len(c.readings) {
		r := c.readings[(c.nextRead-1-i+2*len(c.readings))%len(c.readings)]
		if !r.wall.IsZero() && r.wall.Equal(t) {
			return c.offset - r.offset
		}
	}
	return 0
}

// Timer returns a timer that sends the clock's Now on its C once d of virtual
// time has passed. See the type's doc for what its Reset does.
func (c *Clock) Timer(d time.Duration) *clock.Timer {
	return c.newTimer(d, make(chan time.Time, 1), nil)
}

// After returns Timer(d).C.
func (c *Clock) After(d time.Duration) <-chan time.Time { return c.Timer(d).C }

// Sleep blocks until d of virtual time has passed; while the clock is frozen
// that never happens.
func (c *Clock) Sleep(d time.Duration) { <-c.Timer(d).C }

// AfterFunc runs f in its own goroutine once d of virtual time has passed.
// The returned timer's C is nil, as with the real clock. Stop prevents the
// call as time.Timer.Stop does, also across SetRate, Freeze and Resume.
func (c *Clock) AfterFunc(d time.Duration, f func()) *clock.Timer {
	return c.newTimer(d, nil, f)
}

// Ticker returns a ticker that ticks every d of virtual time, and not at all
// while the clock is frozen. It panics if d <= 0, as time.NewTicker does.
func (c *Clock) Ticker(d time.Duration) *clock.Ticker {
	if d <= 0 {
		panic("sim: non-positive interval for Clock.Ticker")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.real.Ticker(c.tickPeriod(d))
	if c.frozen || c.stalled {
		t.Stop()
	}
	c.tickers = append(c.tickers, &tickerEntry{t: t, period: d})
	return t
}

// Tick returns Ticker(d).C, or nil if d <= 0, as time.Tick does.
func (c *Clock) Tick(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return c.Ticker(d).C
}

// WithTimeout returns a context that expires after d of virtual time at the
// current rate, that is d/Rate() of real time. Later rate changes and freezes
// do not move it: see the type's doc.
func (c *Clock) WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	c.mu.Lock()
	rd := c.toReal(d)
	c.mu.Unlock()
	return context.WithTimeout(parent, rd)
}

// WithDeadline returns a context that expires when Now reaches d, converted
// to a real deadline at the current rate and offset. Later jumps, rate
// changes and freezes do not move it: see the type's doc.
func (c *Clock) WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	c.mu.Lock()
	now := time.Now()
	rd := c.toReal(d.Sub(c.timerTime(now).Add(c.offset)))
	c.mu.Unlock()
	return context.WithDeadline(parent, now.Add(rd))
}

// newTimer registers a timer that, d of virtual time from now, sends on ch
// (Timer) or runs f (AfterFunc).
func (c *Clock) newTimer(d time.Duration, ch chan time.Time, f func()) *clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	e := &timerEntry{deadline: c.timerTime(now).Add(d), ch: ch, f: f, asked: d}
	rd := c.realFor(d)
	// The callback takes c.mu, so even a timer that fires at once waits
	// until e is complete and registered.
	e.t = c.real.AfterFunc(rd, func() { c.expire(e) })
	if ch != nil {
		e.t.C = ch
	}
	c.setDue(e, now, rd)
	c.timers[e] = struct{}{}
	c.sweep(now)
	return e.t
}

// expire is the callback of every timer's real AfterFunc: it decides whether
// the firing reaches the user, and delivers it outside the lock.
func (c *Clock) expire(e *timerEntry) {
	c.mu.Lock()
	now := time.Now()
	tt := c.timerTime(now)
	switch {
	case e.state == cancelled:
		c.mu.Unlock()
		return
	case e.state == armed && (c.frozen || tt.Before(e.deadline)):
		// Early: its user Reset it, or the rate's rounding. Wait for the
		// virtual deadline (parked, if frozen), so f runs at most once per
		// arming and never before its time.
		rd := c.realFor(e.deadline.Sub(tt))
		e.t.Reset(rd)
		c.setDue(e, now, rd)
		c.mu.Unlock()
		return
	case c.frozen || c.stalled:
		// Due while stalled, or it fired before the freeze but Freeze
		// took the lock first: Resume delivers it.
		c.held = append(c.held, e)
		c.mu.Unlock()
		return
	}
	c.retire(e)
	at := tt.Add(c.offset)
	due, lag, onLate := e.due, c.lag, c.onLate
	c.mu.Unlock()
	if lag != nil {
		if d := lag(e.asked); d > 0 {
			time.Sleep(d)
			at = at.Add(d)
		}
	}
	if onLate != nil && !due.IsZero() {
		onLate(max(time.Since(due), 0))
	}
	e.deliver(at)
}

// deliver hands a firing to the timer's user: runs f on the calling
// goroutine, or sends at without blocking, as a time.Timer would.
func (e *timerEntry) deliver(at time.Time) {
	if e.f != nil {
		e.f()
		return
	}
	select {
	case e.ch <- at:
	default:
	}
}

// reschedule re-arms every registered timer and ticker for the current rate
// and frozen state. c.mu is held; nothing here blocks or calls user code.
func (c *Clock) reschedule(now time.Time) {
	tt := c.timerTime(now)
	for e := range c.timers {
		c.rearm(e, now, tt)
	}
	for _, k := range c.tickers {
		if c.frozen || c.stalled {
			k.t.Stop()
		} else {
			k.t.Reset(c.tickPeriod(k.period))
		}
	}
}

// rearm sets e's real timer to what is left of its virtual time at timer
// time tt, or parks it while frozen, unless its user has stopped it.
func (c *Clock) rearm(e *timerEntry, now, tt time.Time) {
	// A parked timer cannot fire, so this Reset's answer is about the timer
	// as its user left it. Not active: it fired (its callback may be waiting
	// for c.mu, and will deliver) or its user stopped it. Either way it is no
	// longer ours to arm: arming it could only fire it a second time.
	if !e.t.Reset(park) {
		if c.parkedStale != nil {
			c.parkedStale(e)
		}
		// Our Reset armed it, parked: undo that. A Stop by its user in
		// between found it active and reported true, so a firing still
		// waiting for c.mu must not reach them (CI saw one: an AfterFunc
		// whose Stop reported true ran).
		stoppedByUser := !e.t.Stop()
		c.retire(e)
		if stoppedByUser {
			e.state = cancelled
		}
		return
	}
	rd := c.realFor(e.deadline.Sub(tt))
	c.setDue(e, now, rd)
	if rd == park {
		return
	}
	if !e.t.Reset(rd) {
		// Its user stopped it between our two Resets: undo ours, and keep a
		// firing of ours that beat this Stop from reaching them.
		e.t.Stop()
		c.retire(e)
		e.state = cancelled
	}
}

// retire removes e from the registry.
func (c *Clock) retire(e *timerEntry) {
	delete(c.timers, e)
	e.state = retired
}

// sweep drops, at most once per forgetAfter, the timers that were due more
// than forgetAfter ago and still have not fired: their users stopped them
// (a timer that fires leaves by itself), so nothing else would remove them.
// An instance makes a timer every few hundred milliseconds for hours.
func (c *Clock) sweep(now time.Time) {
	if now.Before(c.nextSweep) {
		return
	}
	c.nextSweep = now.Add(c.forgetAfter)
	for e := range c.timers {
		if !e.due.IsZero() && now.Sub(e.due) > c.forgetAfter {
			c.retire(e)
		}
	}
}

// setDue records when e's real timer, just set to rd, will fire.
func (c *Clock) setDue(e *timerEntry, now time.Time, rd time.Duration) {
	if rd == park {
		e.due = time.Time{}
	} else {
		e.due = now.Add(rd)
	}
}

// timerTime returns the virtual time, without offset, at real time now.
func (c *Clock) timerTime(now time.Time) time.Time {
	if c.frozen {
		return c.virtBase
	}
	return c.virtBase.Add(time.Duration(c.rate * float64(now.Sub(c.realBase))))
}

// rebase restarts the piecewise-linear map from real to timer time at now,
// before the rate or frozen state changes.
func (c *Clock) rebase(now time.Time) {
	c.virtBase = c.timerTime(now)
	c.realBase = now
}

// realFor returns the real duration to arm a timer with v of virtual time
// left: park while frozen.
func (c *Clock) realFor(v time.Duration) time.Duration {
	if c.frozen {
		return park
	}
	return c.toReal(v)
}

// tickPeriod returns the real period of a ticker of virtual period d.
func (c *Clock) tickPeriod(d time.Duration) time.Duration {
	return max(c.toReal(d), 1) // a ticker's period must be positive
}

// toReal converts v of virtual time to real time at the current rate,
// rounding up so that nothing fires before its virtual time.
func (c *Clock) toReal(v time.Duration) time.Duration {
	if v <= 0 {
		return 0
	}
	r := math.Ceil(float64(v) / c.rate)
	if r >= float64(park) {
		return park
	}
	return time.Duration(r)
}

// registered returns how many timers and tickers the clock is tracking.
func (c *Clock) registered() (timers, tickers int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers), len(c.tickers)
}
