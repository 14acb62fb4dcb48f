package live

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Progress reports a search's or a sweep's runs as they finish (the
// Progress option of sweep.Run and sweep.Explore): on a terminal (tty), one
// line redrawn in place with the time elapsed and an ETA, ended when the
// last run is done; elsewhere (a CI log), a plain line each time another
// tenth of the runs is done, so a log gets at most eleven. Safe for
// concurrent use.
func Progress(w io.Writer, tty bool) func(done, total int) {
	start := time.Now()
	var mu sync.Mutex
	lastDecile := -1
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if total == 0 {
			return
		}
		elapsed := time.Since(start)
		eta := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		switch {
		case tty:
			fmt.Fprintf(w, "\r%d/%d runs, %v elapsed, ETA %v   ", done, total, elapsed.Round(100*time.Millisecond), eta.Round(100*time.Millisecond))
			if done == total {
				fmt.Fprintln(w)
			}
		case done*10/total != lastDecile:
			lastDecile = done * 10 / total
			fmt.Fprintf(w, "%d/%d runs, %v elapsed, ETA %v\n", done, total, elapsed.Round(100*time.Millisecond), eta.Round(100*time.Millisecond))
		}
	}
}

// Ticker prints how many of a seed sweep's runs are done ("NAME: 40 of
// 1000 runs"), every Every, until Stop: a sweep of the virtual backend
// finishes runs faster than lines could be read, so it is sampled.
type Ticker struct {
	n    atomic.Int64
	quit chan struct{}
	wg   sync.WaitGroup
}

// TickEvery is how often a Ticker prints.
const TickEvery = time.Second

// NewTicker starts printing name's progress through its n runs to w, every
// every (0: TickEvery). A nil w prints nothing (quiet), and Done and Stop
// still work.
func NewTicker(w io.Writer, name string, n int, every time.Duration) *Ticker {
	t := &Ticker{quit: make(chan struct{})}
	if w == nil {
		return t
	}
	if every <= 0 {
		every = TickEvery
	}
	t.wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				fmt.Fprintf(w, "%s: %d of %d runs\n", name, t.n.Load(), n)
			case <-t.quit:
				return
			}
		}
	})
	return t
}

// Done counts a run (sweep.SeedsOptions.Done).
func (t *Ticker) Done() { t.n.Add(1) }

// Stop stops the printing; when it returns, nothing more is printed.
func (t *Ticker) Stop() {
	close(t.quit)
	t.wg.Wait()
}
