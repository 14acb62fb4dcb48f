// Package stallmeter measures how long this process was kept from running (other
// work on a shared machine, GC), so that a timing test can excuse that much
// and report it.
package stallmeter

import (
	"sync"
	"time"
)

// Meter measures how long this process was kept from running during
// a call (other work on a shared machine, GC): a goroutine waits on a 5 ms
// ticker and sums how much later than 5 ms each wake-up came, beyond 1 ms
// of ordinary timer jitter. A bound is about the client's logic, so that
// much more is excused, and reported.
type Meter struct {
	mu   sync.Mutex
	late time.Duration // summed over the wake-ups so far
	prev time.Time     // the last wake-up
	stop chan struct{}
	done chan time.Duration
}

const stallTick, stallJitter = 5 * time.Millisecond, time.Millisecond

// Start starts a Meter.
func Start() *Meter {
	m := &Meter{prev: time.Now(), stop: make(chan struct{}), done: make(chan time.Duration, 1)}
	ticker := time.NewTicker(stallTick)
	go func() {
		defer ticker.Stop()
		for {
			select {
			case <-m.stop:
				m.done <- m.SoFar()
				return
			case <-ticker.C:
				now := time.Now()
				m.mu.Lock()
				m.late += max(now.Sub(m.prev)-stallTick-stallJitter, 0)
				m.prev = now
				m.mu.Unlock()
			}
		}
	}()
	return m
}

// Stop ends the measurement and returns the stall.
func (m *Meter) Stop() time.Duration {
	close(m.stop)
	return <-m.done
}

// SoFar returns the stall up to now, the wake-up still awaited included,
// while the meter runs on.
func (m *Meter) SoFar() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.late + max(time.Since(m.prev)-stallTick-stallJitter, 0)
}

// probe is the process-wide wake-up probe Subscribe shares: one goroutine
// however many runs watch it, so that watching costs the machine nothing
// a loaded run would notice (probeTick's wake-ups, a few µs each).
var probe struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
	stop chan struct{}
	done chan struct{}
}

type subscriber struct {
	min time.Duration
	f   func(late time.Duration)
}

// probeTick is the probe's period: a stall shorter than it may be missed,
// and one longer is measured to within it.
const probeTick = 10 * time.Millisecond

// Subscribe calls f with how late each wake-up of a process-wide probe
// came, for every wake-up at least min late: the probe sleeps to a
// deadline every probeTick, so its lateness is how long this process's
// goroutines were kept from running (other work on the machine, GC, an
// overfull run queue). f runs on the probe's goroutine and must be fast.
// cancel ends the subscription; the last cancel also ends the probe's
// goroutine and waits for it.
func Subscribe(min time.Duration, f func(late time.Duration)) (cancel func()) {
	s := &subscriber{min: min, f: f}
	probe.mu.Lock()
	if probe.subs == nil {
		probe.subs = map[*subscriber]struct{}{}
	}
	probe.subs[s] = struct{}{}
	if probe.stop == nil {
		probe.stop, probe.done = make(chan struct{}), make(chan struct{})
		go runProbe(probe.stop, probe.done, time.Now())
	}
	probe.mu.Unlock()
	return sync.OnceFunc(func() {
		probe.mu.Lock()
		delete(probe.subs, s)
		var done chan struct{}
		if len(probe.subs) == 0 && probe.stop != nil {
			close(probe.stop)
			done = probe.done
			probe.stop, probe.done = nil, nil
		}
		probe.mu.Unlock()
		if done != nil {
			<-done
		}
	})
}

// runProbe sleeps to a deadline every probeTick and reports each wake-up's
// lateness to the subscribers of the moment. The first deadline counts from
// started, the subscription: a process stopped before the probe's goroutine
// first ran (a SIGSTOP right after an agent's hello) is measured too.
func runProbe(stop, done chan struct{}, started time.Time) {
	defer close(done)
	due := started.Add(probeTick)
	t := time.NewTimer(time.Until(due))
	defer t.Stop()
	var subs []*subscriber
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		now := time.Now()
		late := now.Sub(due)
		due = now.Add(probeTick)
		t.Reset(probeTick)
		probe.mu.Lock()
		subs = subs[:0]
		for s := range probe.subs {
			subs = append(subs, s)
		}
		probe.mu.Unlock()
		for _, s := range subs {
			if late >= s.min {
				s.f(late)
			}
		}
	}
}
