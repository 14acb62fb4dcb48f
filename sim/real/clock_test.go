package real

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
)

// tol is how far a firing may be from its expected real time: timers on a
// busy 2-core machine under the race detector are late by a few ms.
const tol = 15 * time.Millisecond

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

// near fails the test unless got is within tol of want.
func near(t *testing.T, what string, got, want time.Duration) {
	t.Helper()
	if got < want-tol || got > want+tol {
		t.Errorf("%s after %v, want %v ± %v", what, got, want, tol)
	}
}

// until blocks until real time start+d, to act at a point of a schedule.
func until(start time.Time, d time.Duration) { time.Sleep(time.Until(start.Add(d))) }

// funcTimer is an AfterFunc on c whose calls arrive on the returned channel.
func funcTimer(c *FaultyClock, d time.Duration) (*clock.Timer, <-chan time.Time) {
	ch := make(chan time.Time, 4)
	return c.AfterFunc(d, func() { ch <- time.Now() }), ch
}

func TestClockTimerAtRateOne(t *testing.T) {
	c := NewFaultyClock()
	start := time.Now()
	tm := c.Timer(50 * time.Millisecond)
	_, fn := funcTimer(c, 50*time.Millisecond)
	near(t, "Timer(50ms)", recv(t, "Timer", tm.C, time.Second).Sub(start), 50*time.Millisecond)
	near(t, "AfterFunc(50ms)", recv(t, "AfterFunc", fn, time.Second).Sub(start), 50*time.Millisecond)
	if n, _ := c.registered(); n != 0 {
		t.Errorf("%d timers still registered after firing", n)
	}
}

func TestClockTimerAtHalfRate(t *testing.T) {
	c := NewFaultyClock()
	c.SetRate(0.5)
	start := time.Now()
	tm := c.Timer(40 * time.Millisecond)
	_, fn := funcTimer(c, 40*time.Millisecond)
	near(t, "Timer(40ms) at rate 0.5", recv(t, "Timer", tm.C, time.Second).Sub(start), 80*time.Millisecond)
	near(t, "AfterFunc(40ms) at rate 0.5", recv(t, "AfterFunc", fn, time.Second).Sub(start), 80*time.Millisecond)
}

func TestClockSetRateReschedulesPendingTimers(t *testing.T) {
	c := NewFaultyClock()
	start := time.Now()
	tm := c.Timer(80 * time.Millisecond)
	_, fn := funcTimer(c, 80*time.Millisecond)
	until(start, 20*time.Millisecond)
	c.SetRate(2)
	if c.Rate() != 2 {
		t.Fatalf("Rate() = %v, want 2", c.Rate())
	}
	// 20ms at rate 1, then the 60ms of virtual time left at rate 2.
	near(t, "Timer(80ms) sped up at 20ms", recv(t, "Timer", tm.C, time.Second).Sub(start), 50*time.Millisecond)
	near(t, "AfterFunc(80ms) sped up at 20ms", recv(t, "AfterFunc", fn, time.Second).Sub(start), 50*time.Millisecond)
}

func TestClockFreezeHoldsTimersAndNow(t *testing.T) {
	c := NewFaultyClock()
	start := time.Now()
	v0 := c.Now()
	tm := c.Timer(60 * time.Millisecond)
	_, fn := funcTimer(c, 60*time.Millisecond)
	until(start, 20*time.Millisecond)
	c.Freeze()
	c.Freeze() // a no-op, not a second freeze to undo
	if !c.Frozen() {
		t.Fatal("Frozen() = false after Freeze")
	}
	frozenAt := c.Now()
	// Due already, but created frozen: must wait for Resume, then fire at once.
	zero := c.Timer(0)
	_, zeroFn := funcTimer(c, 0)

	select {
	case <-tm.C:
		t.Fatal("Timer fired while frozen")
	case <-fn:
		t.Fatal("AfterFunc ran while frozen")
	case <-zero.C:
		t.Fatal("Timer(0) fired while frozen")
	case <-zeroFn:
		t.Fatal("AfterFunc(0) ran while frozen")
	case <-time.After(50 * time.Millisecond):
	}
	if now := c.Now(); !now.Equal(frozenAt) {
		t.Fatalf("Now moved while frozen: %v, then %v", frozenAt, now)
	}

	thawed := time.Now()
	c.Resume()
	near(t, "Timer(0) made while frozen", recv(t, "Timer(0)", zero.C, time.Second).Sub(thawed), 0)
	near(t, "AfterFunc(0) made while frozen", recv(t, "AfterFunc(0)", zeroFn, time.Second).Sub(thawed), 0)
	// 20ms ran before the freeze, so 40ms are left.
	near(t, "Timer(60ms) frozen at 20ms", recv(t, "Timer", tm.C, time.Second).Sub(thawed), 40*time.Millisecond)
	near(t, "AfterFunc(60ms) frozen at 20ms", recv(t, "AfterFunc", fn, time.Second).Sub(thawed), 40*time.Millisecond)
	// The clock lost the 50ms it was frozen for, and no more.
	near(t, "virtual time at the firing", c.Now().Sub(v0), time.Since(start)-50*time.Millisecond)
}

// A stall is a SIGSTOP or a GC: time runs on, so a timer that falls due
// during it fires at once at Resume (not with the time it had left, as after
// a freeze), and one still pending at Resume keeps its deadline.
func TestClockStallHoldsDueTimersUntilResume(t *testing.T) {
	c := NewFaultyClock()
	start := time.Now()
	v0 := c.Now()
	due := c.Timer(40 * time.Millisecond)
	_, dueFn := funcTimer(c, 40*time.Millisecond)
	later := c.Timer(200 * time.Millisecond)
	until(start, 20*time.Millisecond)
	c.Stall()
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
	near(t, "virtual time in the stall", c.Now().Sub(v0), time.Since(start))

	resumed := time.Now()
	c.Resume()
	if c.Stalled() {
		t.Fatal("Stalled() = true after Resume")
	}
	near(t, "Timer(40ms) due in the stall", recv(t, "Timer", due.C, time.Second).Sub(resumed), 0)
	near(t, "AfterFunc(40ms) due in the stall", recv(t, "AfterFunc", dueFn, time.Second).Sub(resumed), 0)
	near(t, "Timer(200ms) pending at Resume", recv(t, "Timer", later.C, time.Second).Sub(start), 200*time.Millisecond)
}

func TestClockStoppedAfterFuncNeverRuns(t *testing.T) {
	c := NewFaultyClock()
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

func TestClockJumpMovesNowNotTimers(t *testing.T) {
	c := NewFaultyClock()
	v0 := c.Now()
	start := time.Now()
	tm := c.Timer(50 * time.Millisecond)
	c.Jump(time.Hour)
	if c.Offset() != time.Hour {
		t.Fatalf("Offset() = %v, want 1h", c.Offset())
	}
	// Since and Until of a Now reading are monotonic, as time.Since is:
	// the jump moved the wall reading only.
	near(t, "Since(before a 1h jump)", c.Since(v0), 0)
	near(t, "Until(before a 1h jump)", -c.Until(v0), 0)
	near(t, "Now().Sub(before a 1h jump)", c.Now().Sub(v0), time.Hour)

	var sent time.Time
	select {
	case sent = <-tm.C:
	case <-time.After(time.Second):
		t.Fatal("Timer made before the jump never fired")
	}
	near(t, "Timer(50ms) across a 1h jump", time.Since(start), 50*time.Millisecond)
	near(t, "the Timer's value (the jumped Now)", sent.Sub(v0), time.Hour+50*time.Millisecond)

	c.Jump(-2 * time.Hour)
	if c.Offset() != -time.Hour {
		t.Fatalf("Offset() = %v after +1h and -2h, want -1h", c.Offset())
	}
	start = time.Now()
	near(t, "Timer(30ms) after a backward jump", recv(t, "Timer", c.After(30*time.Millisecond), time.Second).Sub(start), 30*time.Millisecond)
}

func TestClockTickerFollowsRateAndFreeze(t *testing.T) {
	c := NewFaultyClock()
	c.SetRate(2)
	tk := c.Ticker(40 * time.Millisecond) // 20ms of real time
	defer tk.Stop()
	start := time.Now()
	for i := 0; i < 5; i++ {
		recv(t, "tick", tk.C, time.Second)
	}
	near(t, "5 ticks of 40ms at rate 2", time.Since(start), 100*time.Millisecond)

	c.Freeze()
	made := c.Ticker(10 * time.Millisecond)
	defer made.Stop()
	select {
	case <-tk.C:
		t.Fatal("Ticker ticked while frozen")
	case <-made.C:
		t.Fatal("Ticker made while frozen ticked")
	case <-time.After(60 * time.Millisecond):
	}
	thawed := time.Now()
	c.Resume()
	near(t, "first tick of a ticker made frozen", recv(t, "tick", made.C, time.Second).Sub(thawed), 5*time.Millisecond)
	near(t, "first tick after Resume", recv(t, "tick", tk.C, time.Second).Sub(thawed), 20*time.Millisecond)
}

func TestClockContextsAtHalfRate(t *testing.T) {
	c := NewFaultyClock()
	c.SetRate(0.5)
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
		near(t, name+"(30ms) at rate 0.5", time.Since(start), 60*time.Millisecond)
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("%s: Err() = %v, want DeadlineExceeded", name, ctx.Err())
		}
	}
}

func TestClockSleepAtDoubleRate(t *testing.T) {
	c := NewFaultyClock()
	c.SetRate(2)
	start := time.Now()
	c.Sleep(40 * time.Millisecond)
	near(t, "Sleep(40ms) at rate 2", time.Since(start), 20*time.Millisecond)
}

func TestClockRegistryForgetsFiredTimers(t *testing.T) {
	c := NewFaultyClock()
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
	c := NewFaultyClock()
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
	c := NewFaultyClock()
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
	c := NewFaultyClock()
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
