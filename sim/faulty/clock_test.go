package faulty

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/leaselab/leaselab/internal/stallmeter"
)

// lateTol is how late a firing may be beyond the lateness the process
// itself suffered meanwhile (timer and scheduling latency under -race).
// Firings are never allowed to be early: the clock arms every real timer
// for at least its virtual time left, and waits out an early wake-up.
const lateTol = 15 * time.Millisecond

// recv waits for a value on ch and returns the real time it arrived,
// failing the test if none comes within limit.
func recv(t *testing.T, what string, ch <-chan time.Time, limit time.Duration) time.Time {
	t.Helper()
	select {
	case <-ch:
		return time.Now()
	case <-time.After(limit):
		t.Fatalf("%s: nothing within %v", what, limit)
		return time.Time{}
	}
}

// lateness checks a test's firings against the real times they are due: a
// loaded machine delays the whole process (other work, GC), so a firing may
// be late by lateTol plus what a stallmeter.Meter running since the test began
// measured; it may never be early.
type lateness struct {
	t *testing.T
	m *stallmeter.Meter
}

func newLateness(t *testing.T) *lateness {
	m := stallmeter.Start()
	t.Cleanup(func() { m.Stop() })
	return &lateness{t: t, m: m}
}

// fired fails the test unless got, a firing's real delay from a time taken
// before its timer was made (or re-scheduled), lies in [want, want + lateTol
// + stall so far].
func (l *lateness) fired(what string, got, want time.Duration) {
	l.t.Helper()
	l.within(what, got, want, want)
}

// within is fired for a firing whose due time is known to lie in [lo, hi]
// (an action of the test's schedule was taken somewhere in a real interval).
func (l *lateness) within(what string, got, lo, hi time.Duration) {
	l.t.Helper()
	stall := l.m.SoFar()
	if got < lo || got > hi+lateTol+stall {
		l.t.Errorf("%s after %v, want [%v, %v + %v + stalled %v]", what, got, lo, hi, lateTol, stall)
	}
}

// between fails the test unless v lies in [lo, hi]: a reading of the clock
// bracketed by real readings, exact whatever the machine's load.
func between(t *testing.T, what string, v, lo, hi time.Duration) {
	t.Helper()
	if v < lo || v > hi {
		t.Errorf("%s = %v, want in [%v, %v]", what, v, lo, hi)
	}
}

// until blocks until real time start+d, to act at a point of a schedule,
// and returns the real time it acts at: under load that can be much later.
func until(start time.Time, d time.Duration) time.Time {
	time.Sleep(time.Until(start.Add(d)))
	return time.Now()
}

// funcTimer is an AfterFunc on c whose calls arrive on the returned channel.
func funcTimer(c *Clock, d time.Duration) (*clock.Timer, <-chan time.Time) {
	ch := make(chan time.Time, 4)
	return c.AfterFunc(d, func() { ch <- time.Now() }), ch
}

func TestClockTimerAtRateOne(t *testing.T) {
	c := NewClock()
	l := newLateness(t)
	start := time.Now()
	tm := c.Timer(50 * time.Millisecond)
	_, fn := funcTimer(c, 50*time.Millisecond)
	l.fired("Timer(50ms)", recv(t, "Timer", tm.C, time.Second).Sub(start), 50*time.Millisecond)
	l.fired("AfterFunc(50ms)", recv(t, "AfterFunc", fn, time.Second).Sub(start), 50*time.Millisecond)
	if n, _ := c.registered(); n != 0 {
		t.Errorf("%d timers still registered after firing", n)
	}
}

func TestClockTimerAtHalfRate(t *testing.T) {
	c := NewClock()
	c.SetRate(0.5)
	l := newLateness(t)
	start := time.Now()
	tm := c.Timer(40 * time.Millisecond)
	_, fn := funcTimer(c, 40*time.Millisecond)
	l.fired("Timer(40ms) at rate 0.5", recv(t, "Timer", tm.C, time.Second).Sub(start), 80*time.Millisecond)
	l.fired("AfterFunc(40ms) at rate 0.5", recv(t, "AfterFunc", fn, time.Second).Sub(start), 80*time.Millisecond)
}

func TestClockSetRateReschedulesPendingTimers(t *testing.T) {
	c := NewClock()
	l := newLateness(t)
	const d = 80 * time.Millisecond
	start := time.Now()
	tm := c.Timer(d)
	_, fn := funcTimer(c, d)
	made := time.Since(start)
	a0 := until(start, 20*time.Millisecond).Sub(start)
	c.SetRate(2)
	a1 := time.Since(start)
	if c.Rate() != 2 {
		t.Fatalf("Rate() = %v, want 2", c.Rate())
	}
	// The virtual time left at the change (made at a, ~20ms) runs at rate 2:
	// due at a + (d - a)/2 from the timer's making, or at d if a came later.
	due := func(a, made time.Duration) time.Duration { return min(d, a+(d-a)/2) + made }
	lo, hi := due(a0, 0), due(a1, made)
	t.Logf("rate changed %v-%v in: due %v-%v", a0, a1, lo, hi)
	l.within("Timer(80ms) sped up at 20ms", recv(t, "Timer", tm.C, time.Second).Sub(start), lo, hi)
	l.within("AfterFunc(80ms) sped up at 20ms", recv(t, "AfterFunc", fn, time.Second).Sub(start), lo, hi)
}

func TestClockFreezeHoldsTimersAndNow(t *testing.T) {
	c := NewClock()
	l := newLateness(t)
	const d = 60 * time.Millisecond
	r0 := time.Now()
	v0 := c.Now()
	start := time.Now()
	tm := c.Timer(d)
	_, fn := funcTimer(c, d)
	made := time.Since(start)
	f0 := until(start, 20*time.Millisecond)
	c.Freeze()
	f1 := time.Now()
	c.Freeze() // a no-op, not a second freeze to undo
	if !c.Frozen() {
		t.Fatal("Frozen() = false after Freeze")
	}
	frozenAt := c.Now()
	// Due already, but created frozen: must wait for Resume, then fire at once.
	zero := c.Timer(0)
	_, zeroFn := funcTimer(c, 0)

	// A loaded machine may reach the Freeze only after the timers fell due:
	// then they may fire before it took hold, never during it (a Timer
	// fired by Resume sends a Now from frozenAt on).
	mayHaveFired := f1.Sub(start) >= d
	hold := time.After(50 * time.Millisecond)
	for waiting := true; waiting; {
		select {
		case v := <-tm.C:
			if !mayHaveFired || v.After(frozenAt) {
				t.Fatal("Timer fired while frozen")
			}
			tm.C = nil
		case <-fn:
			if !mayHaveFired {
				t.Fatal("AfterFunc ran while frozen")
			}
			fn = nil
		case <-zero.C:
			t.Fatal("Timer(0) fired while frozen")
		case <-zeroFn:
			t.Fatal("AfterFunc(0) ran while frozen")
		case <-hold:
			waiting = false
		}
	}
	if now := c.Now(); !now.Equal(frozenAt) {
		t.Fatalf("Now moved while frozen: %v, then %v", frozenAt, now)
	}
	if mayHaveFired {
		t.Logf("the Freeze took hold %v in, after the timers' %v: they may have fired before it", f1.Sub(start), d)
	}

	thawed := time.Now()
	c.Resume()
	t1 := time.Now()
	l.within("Timer(0) made while frozen", recv(t, "Timer(0)", zero.C, time.Second).Sub(thawed), 0, t1.Sub(thawed))
	l.within("AfterFunc(0) made while frozen", recv(t, "AfterFunc(0)", zeroFn, time.Second).Sub(thawed), 0, t1.Sub(thawed))
	// What ran before the freeze (~20ms) is spent: d less that is left.
	lo, hi := d-f1.Sub(start), d-f0.Sub(start)+made+t1.Sub(thawed)
	if tm.C != nil {
		l.within("Timer(60ms) frozen at 20ms", recv(t, "Timer", tm.C, time.Second).Sub(thawed), lo, hi)
	}
	if fn != nil {
		l.within("AfterFunc(60ms) frozen at 20ms", recv(t, "AfterFunc", fn, time.Second).Sub(thawed), lo, hi)
	}
	// The clock lost the time it was frozen for, and no more.
	n0 := time.Now()
	v := c.Now().Sub(v0)
	n1 := time.Now()
	between(t, "virtual time after the freeze", v, n0.Sub(start)-t1.Sub(f0), n1.Sub(r0)-thawed.Sub(f1))
}

// A stall is a SIGSTOP or a GC: time runs on, so a timer that falls due
// during it fires at once at Resume (not with the time it had left, as after
// a freeze), and one still pending at Resume keeps its deadline.
func TestClockStallHoldsDueTimersUntilResume(t *testing.T) {
	c := NewClock()
	l := newLateness(t)
	r0 := time.Now()
	v0 := c.Now()
	start := time.Now()
	due := c.Timer(40 * time.Millisecond)
	_, dueFn := funcTimer(c, 40*time.Millisecond)
	later := c.Timer(300 * time.Millisecond)
	made := time.Since(start)
	c.Stall() // at once: due falls due in the stall however late we run
	if !c.Stalled() || c.Frozen() {
		t.Fatalf("Stalled() = %v, Frozen() = %v after Stall; want true, false", c.Stalled(), c.Frozen())
	}
	select {
	case <-due.C:
		t.Fatal("Timer fired while stalled")
	case <-dueFn:
		t.Fatal("AfterFunc ran while stalled")
	case <-time.After(80 * time.Millisecond):
	}
	// The clock ran on through the stall.
	n0 := time.Now()
	v := c.Now().Sub(v0)
	n1 := time.Now()
	between(t, "virtual time in the stall", v, n0.Sub(start), n1.Sub(r0))

	resumed := time.Now()
	c.Resume()
	t1 := time.Since(resumed)
	if c.Stalled() {
		t.Fatal("Stalled() = true after Resume")
	}
	l.within("Timer(40ms) due in the stall", recv(t, "Timer", due.C, time.Second).Sub(resumed), 0, t1)
	l.within("AfterFunc(40ms) due in the stall", recv(t, "AfterFunc", dueFn, time.Second).Sub(resumed), 0, t1)
	// Due at 300ms, or at the Resume if that came later (then it was held).
	l.within("Timer(300ms) pending at Resume", recv(t, "Timer", later.C, time.Second).Sub(start),
		300*time.Millisecond, max(300*time.Millisecond+made, resumed.Sub(start)+t1))
}

func TestClockStoppedAfterFuncNeverRuns(t *testing.T) {
	c := NewClock()
	before, ranBefore := funcTimer(c, 30*time.Millisecond)
	if !before.Stop() {
		t.Fatal("Stop of a pending AfterFunc reported false")
	}
	c.Freeze()
	during, ranDuring := funcTimer(c, 30*time.Millisecond)
	if !during.Stop() {
		t.Fatal("Stop of an AfterFunc made while frozen reported false")
	}
	c.Resume()
	c.SetRate(2)
	c.Freeze()
	c.Resume()

	// Re-armed, either would run after at most 30ms of virtual time.
	recv(t, "sentinel", c.After(60*time.Millisecond), time.Second)
	select {
	case <-ranBefore:
		t.Fatal("AfterFunc stopped before a freeze ran")
	case <-ranDuring:
		t.Fatal("AfterFunc stopped while frozen ran")
	default:
	}
	if n, _ := c.registered(); n != 0 {
		t.Errorf("%d stopped timers still registered after being re-scheduled", n)
	}
}

// TestClockStopDuringRearmOfAFiredTimer drives the window CI once hit under
// TestClockConcurrentFaults: an AfterFunc's real timer has fired (its
// callback waits for the clock's lock) when a SetRate re-schedules it; the
// re-scheduling arms it parked for an instant, and a Stop by its user in that
// instant reports true. The pending firing must then not run f.
func TestClockStopDuringRearmOfAFiredTimer(t *testing.T) {
	c := NewClock()
	ran := 0
	ft := c.AfterFunc(time.Hour, func() { ran++ })
	var e *timerEntry
	for k := range c.timers {
		e = k
	}
	// As the runtime does when the timer fires: no longer active, its
	// callback (c.expire) still to run.
	e.t.Stop()
	var stopped bool
	c.parkedStale = func(*timerEntry) { stopped = ft.Stop() }
	c.SetRate(2)
	if !stopped {
		t.Fatal("the user's Stop in the re-arming window reported false; the test no longer reaches the window")
	}
	c.expire(e) // the firing's callback, now that the lock is free
	if ran != 0 {
		t.Errorf("AfterFunc whose Stop reported true ran %d times", ran)
	}
}

func TestClockJumpMovesNowNotTimers(t *testing.T) {
	c := NewClock()
	l := newLateness(t)
	r0 := time.Now()
	v0 := c.Now()
	start := time.Now()
	tm := c.Timer(50 * time.Millisecond)
	c.Jump(time.Hour)
	if c.Offset() != time.Hour {
		t.Fatalf("Offset() = %v, want 1h", c.Offset())
	}
	// Since and Until of a Now reading are monotonic, as time.Since is:
	// the jump moved the wall reading only.
	between(t, "Since(before a 1h jump)", c.Since(v0), 0, time.Since(r0))
	between(t, "-Until(before a 1h jump)", -c.Until(v0), 0, time.Since(r0))
	between(t, "Now().Sub(before a 1h jump)", c.Now().Sub(v0), time.Hour, time.Hour+time.Since(r0))

	var sent time.Time
	select {
	case sent = <-tm.C:
	case <-time.After(time.Second):
		t.Fatal("Timer made before the jump never fired")
	}
	l.fired("Timer(50ms) across a 1h jump", time.Since(start), 50*time.Millisecond)
	between(t, "the Timer's value (the jumped Now), from before the jump", sent.Sub(v0), time.Hour+50*time.Millisecond, time.Hour+time.Since(r0))

	c.Jump(-2 * time.Hour)
	if c.Offset() != -time.Hour {
		t.Fatalf("Offset() = %v after +1h and -2h, want -1h", c.Offset())
	}
	start = time.Now()
	l.fired("Timer(30ms) after a backward jump", recv(t, "Timer", c.After(30*time.Millisecond), time.Second).Sub(start), 30*time.Millisecond)
}

func TestClockTickerFollowsRateAndFreeze(t *testing.T) {
	c := NewClock()
	c.SetRate(2)
	l := newLateness(t)
	start := time.Now()
	tk := c.Ticker(40 * time.Millisecond) // 20ms of real time
	defer tk.Stop()
	for i := 0; i < 5; i++ {
		recv(t, "tick", tk.C, time.Second)
	}
	l.fired("5 ticks of 40ms at rate 2", time.Since(start), 100*time.Millisecond)

	c.Freeze()
	frozen := time.Now()
	made := c.Ticker(10 * time.Millisecond)
	defer made.Stop()
	hold := time.After(60 * time.Millisecond)
	for waiting := true; waiting; {
		select {
		case v := <-tk.C:
			// A tick's value is the real time it was sent: one from before
			// the Freeze may still wait in the channel on a loaded machine.
			if !v.Before(frozen) {
				t.Fatal("Ticker ticked while frozen")
			}
		case <-made.C:
			t.Fatal("Ticker made while frozen ticked")
		case <-hold:
			waiting = false
		}
	}
	thawed := time.Now()
	c.Resume()
	l.fired("first tick of a ticker made frozen", recv(t, "tick", made.C, time.Second).Sub(thawed), 5*time.Millisecond)
	l.fired("first tick after Resume", recv(t, "tick", tk.C, time.Second).Sub(thawed), 20*time.Millisecond)
}

func TestClockContextsAtHalfRate(t *testing.T) {
	c := NewClock()
	c.SetRate(0.5)
	l := newLateness(t)
	start := time.Now()
	byTimeout, cancel1 := c.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel1()
	byDeadline, cancel2 := c.WithDeadline(context.Background(), c.Now().Add(30*time.Millisecond))
	defer cancel2()
	for name, ctx := range map[string]context.Context{"WithTimeout": byTimeout, "WithDeadline": byDeadline} {
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
			t.Fatalf("%s(30ms) at rate 0.5 never expired", name)
		}
		l.within(name+"(30ms) at rate 0.5", time.Since(start), 60*time.Millisecond-time.Microsecond, 60*time.Millisecond) // ns rounding of the rate
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("%s: Err() = %v, want DeadlineExceeded", name, ctx.Err())
		}
	}
}

func TestClockSleepAtDoubleRate(t *testing.T) {
	c := NewClock()
	c.SetRate(2)
	l := newLateness(t)
	start := time.Now()
	c.Sleep(40 * time.Millisecond)
	l.fired("Sleep(40ms) at rate 2", time.Since(start), 20*time.Millisecond)
}

func TestClockRegistryForgetsFiredTimers(t *testing.T) {
	c := NewClock()
	const n = 10000
	chans := make([]<-chan time.Time, n)
	calls := make(chan time.Time, n)
	for i := range chans {
		chans[i] = c.After(time.Millisecond)
		c.AfterFunc(time.Millisecond, func() { calls <- time.Now() })
	}
	for i, ch := range chans {
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("timer %d of %d never fired", i, n)
		}
		recv(t, "AfterFunc", calls, 5*time.Second)
	}
	if got, _ := c.registered(); got != 0 {
		t.Fatalf("%d of %d fired timers still registered", got, 2*n)
	}
}

func TestClockRegistryForgetsStoppedTimers(t *testing.T) {
	c := NewClock()
	c.forgetAfter = 20 * time.Millisecond // 1s in real use; too slow for a test
	// The elector's pattern: a timer per step, stopped when something else
	// happens first. A stopped timer never fires, so never leaves by itself.
	for range 10000 {
		c.Timer(time.Millisecond).Stop()
	}
	recv(t, "wait", c.After(50*time.Millisecond), time.Second)
	defer c.Timer(time.Hour).Stop() // registers one, sweeping the stopped ones first
	if got, _ := c.registered(); got != 1 {
		t.Fatalf("%d timers registered, want 1: stopped timers are kept", got)
	}
}

// TestClockConcurrentFaults hammers the clock with faults while timers are
// made and stopped, under -race: every AfterFunc whose Stop reported true
// must never run, and every other one must run exactly once.
func TestClockConcurrentFaults(t *testing.T) {
	c := NewClock()
	stopFaults := make(chan struct{})
	var harness sync.WaitGroup
	harness.Go(func() {
		rates := []float64{0.5, 1, 2, 4}
		for {
			select {
			case <-stopFaults:
				return
			default:
			}
			switch rand.IntN(4) {
			case 0:
				c.SetRate(rates[rand.IntN(len(rates))])
			case 1:
				c.Freeze()
			case 2:
				c.Resume()
			case 3:
				c.Jump(time.Duration(rand.IntN(2000)-1000) * time.Millisecond)
			}
			_, _, _ = c.Rate(), c.Frozen(), c.Offset()
			time.Sleep(200 * time.Microsecond) // pace the faults, so timers do fire in between
		}
	})

	const users, perUser = 4, 300
	runs := make([]atomic.Int32, users*perUser)
	stoppedOK := make([]bool, users*perUser)
	var chans []<-chan time.Time
	var mu sync.Mutex
	var wg sync.WaitGroup
	for u := range users {
		wg.Go(func() {
			for j := range perUser {
				i := u*perUser + j
				d := time.Duration(rand.IntN(3000)) * time.Microsecond
				ft := c.AfterFunc(d, func() { runs[i].Add(1) })
				tm := c.Timer(d)
				tk := c.Ticker(time.Millisecond)
				if rand.IntN(2) == 0 {
					time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
					stoppedOK[i] = ft.Stop()
					tm.Stop()
				} else {
					mu.Lock()
					chans = append(chans, tm.C)
					mu.Unlock()
				}
				tk.Stop()
				_ = c.Since(c.Now())
			}
		})
	}
	wg.Wait()
	close(stopFaults)
	harness.Wait()
	c.Resume()
	c.SetRate(1)

	for _, ch := range chans {
		recv(t, "a Timer nobody stopped", ch, 5*time.Second)
	}
	// Each timer was due within 3ms of virtual time of its making: by this
	// one's firing, every AfterFunc left to run has run.
	recv(t, "sentinel", c.After(100*time.Millisecond), 5*time.Second)
	for i := range runs {
		want := int32(1)
		if stoppedOK[i] {
			want = 0
		}
		if got := runs[i].Load(); got != want {
			t.Errorf("AfterFunc %d (Stop reported %v) ran %d times, want %d", i, stoppedOK[i], got, want)
		}
	}
}

func TestClockRejectsBadArguments(t *testing.T) {
	c := NewClock()
	for _, k := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetRate(%v) did not panic", k)
				}
			}()
			c.SetRate(k)
		}()
	}
	if c.Rate() != 1 || c.Frozen() || c.Offset() != 0 {
		t.Errorf("new clock: Rate %v, Frozen %v, Offset %v; want 1, false, 0", c.Rate(), c.Frozen(), c.Offset())
	}
	if c.Tick(0) != nil {
		t.Error("Tick(0) is not nil")
	}
	defer func() {
		if recover() == nil {
			t.Error("Ticker(0) did not panic")
		}
	}()
	c.Ticker(0)
}

// Watch reports a firing's real lateness against its due time, a Lag's
// included, and nothing for a firing a Stall held: that lateness is the
// fault's, not the machine's.
func TestClockWatchMeasuresLateFirings(t *testing.T) {
	c := NewClock()
	var mu sync.Mutex
	var lates []time.Duration
	c.Watch(func(late time.Duration) { mu.Lock(); lates = append(lates, late); mu.Unlock() })
	c.Lag(func(d time.Duration) time.Duration {
		if d >= 50*time.Millisecond {
			return 120 * time.Millisecond
		}
		return 0
	})
	recv(t, "short timer", c.Timer(10*time.Millisecond).C, time.Second)
	recv(t, "lagged timer", c.Timer(50*time.Millisecond).C, time.Second)
	c.Stall()
	held := c.Timer(5 * time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	c.Resume()
	recv(t, "held timer", held.C, time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(lates) != 2 || lates[1] < 120*time.Millisecond || lates[1] > 120*time.Millisecond+lateTol+lates[0] {
		t.Errorf("lateness reported %v; want two firings, the second 120 ms late (and nothing for the held one)", lates)
	}
}
