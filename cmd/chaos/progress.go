package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports/live"
	"github.com/leaselab/leaselab/sim/env"
)

// progress shows what the running scenarios are doing. On a terminal it
// keeps a live area at the bottom: one line per running scenario (elapsed
// and total time, the current leader(s), the active faults), each cut to
// the terminal's width, and an overall line (done/total, passed/failed,
// ETA), redrawn in place; finished scenarios print their verdict lines
// above it. Otherwise (CI logs) it prints plain lines every plainEvery and
// at every fault, so logs stay readable and contain no escape sequences.
type progress struct {
	w       io.Writer
	live    bool
	verbose bool
	quiet   bool
	// virtual: runs take virtual time (the durations shown are the
	// scenario's, not the wall time they take).
	virtual bool
	// size returns the terminal's width and height; nil: 80×24.
	size func() (int, int)

	mu      sync.Mutex
	tracks  []*track
	drawn   int // lines of the live area on screen
	total   int // scenarios to run
	started time.Time
	// counts of finished scenarios by what the verdict line said
	passed, failed, unknown, other, findings int
	// queued is the scenario time not yet started, for the ETA.
	queued   time.Duration
	parallel int

	stop chan struct{}
	done chan struct{}
}

const (
	liveEvery  = 250 * time.Millisecond
	plainEvery = 10 * time.Second
)

// terminalSize returns the size of the terminal w is, or nil when w is not
// a terminal (or TERM=dumb): then progress prints plain lines.
func terminalSize(w io.Writer) func() (int, int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || os.Getenv("TERM") == "dumb" {
		return nil
	}
	fd := int(f.Fd())
	return func() (int, int) {
		w, h, err := term.GetSize(fd)
		if err != nil || w <= 0 || h <= 0 {
			return 80, 24
		}
		return w, h
	}
}

// startProgress follows scs, run parallel at a time, on w: size nil means
// plain lines, else the live area for a terminal of that size (see
// terminalSize). virtual: the runs take virtual time.
func startProgress(w io.Writer, size func() (int, int), verbose, quiet, virtual bool, scs []model.Scenario, parallel int) *progress {
	p := &progress{w: w, live: size != nil, size: size, verbose: verbose, quiet: quiet, virtual: virtual, total: len(scs), parallel: max(parallel, 1),
		started: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	for _, sc := range scs {
		p.queued += sc.Length()
	}
	go p.loop()
	return p
}

func (p *progress) loop() {
	defer close(p.done)
	every := plainEvery
	if p.live {
		every = liveEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			if !p.quiet {
				p.draw()
			}
		}
	}
}

func (p *progress) close() {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	p.clear()
	p.mu.Unlock()
}

// clear erases the live area; p.mu is held.
func (p *progress) clear() {
	if p.live && p.drawn > 0 {
		fmt.Fprintf(p.w, "\033[%dA\r\033[J", p.drawn)
		p.drawn = 0
	}
}

// printf prints a line above the live area.
func (p *progress) printf(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, format, a...)
	p.paint()
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		p.clear()
		p.paint()
		return
	}
	for _, s := range p.statuses() {
		fmt.Fprintln(p.w, s)
	}
	if p.total > 1 {
		fmt.Fprintln(p.w, p.overall())
	}
}

// paint draws the live area below the cursor; p.mu is held and the area
// is clear.
func (p *progress) paint() {
	if !p.live || p.quiet {
		return
	}
	w, h := 80, 24
	if p.size != nil {
		w, h = p.size()
	}
	lines := p.render(w, h)
	for _, l := range lines {
		fmt.Fprint(p.w, l, "\n")
	}
	p.drawn = len(lines)
}

// render is the live area for a terminal of width × height: one line per
// running scenario (at most height−2 of them, then "+N more"), and the
// overall line when there is more than one scenario. No line is wider
// than width.
func (p *progress) render(width, height int) []string {
	st := p.statuses()
	if len(st) == 0 && p.total <= 1 {
		return nil
	}
	room := max(height-2, 1)
	var lines []string
	if len(st) > room {
		more := len(st) - (room - 1)
		st = append(st[:room-1], fmt.Sprintf("  … %d more running", more))
	}
	for _, s := range st {
		lines = append(lines, fit("  "+s, width))
	}
	if p.total > 1 {
		lines = append(lines, fit(p.overall(), width))
	}
	return lines
}

// statuses are the running scenarios' lines, in start order.
func (p *progress) statuses() []string {
	var st []string
	for _, t := range p.tracks {
		if s := t.status(); s != "" {
			st = append(st, s)
		}
	}
	return st
}

// overall is the suite's line: done/total, passed/failed, ETA.
func (p *progress) overall() string {
	done := p.passed + p.failed + p.unknown + p.other
	s := fmt.Sprintf("%d/%d done: %d passed, %d failed, %d unknown", done, p.total, p.passed, p.failed, p.unknown)
	if p.other > 0 {
		s += fmt.Sprintf(", %d other", p.other)
	}
	if p.findings > 0 {
		s += fmt.Sprintf("; %d with findings", p.findings)
	}
	if !p.virtual && done < p.total {
		s += " · ETA " + p.eta().String()
	}
	return s
}

// eta estimates the wall time left: the longest remaining running
// scenario, or the queued scenario time spread over the free slots,
// whichever is longer.
func (p *progress) eta() time.Duration {
	var longest time.Duration
	for _, t := range p.tracks {
		t.mu.Lock()
		running := t.running
		t.mu.Unlock()
		if running {
			longest = max(longest, t.run.Left())
		}
	}
	return max(longest, p.queued/time.Duration(p.parallel)).Round(time.Second)
}

// fit cuts s to width columns (one per rune), ending it with "…" when cut.
func fit(s string, width int) string {
	if width < 1 || utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

// track follows one scenario's run through its events (live.Run) and
// whether it is still running.
type track struct {
	p   *progress
	run *live.Run

	mu      sync.Mutex
	running bool
}

func (p *progress) start(sc model.Scenario) *track {
	t := &track{p: p, run: live.NewRun(sc), running: true}
	p.mu.Lock()
	p.tracks = append(p.tracks, t)
	p.queued = max(p.queued-t.run.Total, 0)
	p.mu.Unlock()
	if !p.quiet && !p.live {
		if p.virtual {
			p.printf("%s: started (%v of virtual time)\n", sc.Name, t.run.Total.Round(time.Second))
		} else {
			p.printf("%s: started (%v)\n", sc.Name, t.run.Total.Round(time.Second))
		}
	}
	return t
}

// observe is the run's Observe hook: it must be fast.
func (t *track) observe(e model.Event) {
	t.run.Observe(e)
	if t.p.quiet {
		return
	}
	if t.p.verbose {
		t.p.printf("%s\n", live.EventLine(t.run.Name, e))
	} else if !t.p.live && (e.Kind == model.FaultApplied || e.Kind == model.FaultHealed) {
		t.p.printf("%s\n", live.FaultLine(t.run.Name, e))
	}
}

// status is the run's line while it runs, "" after.
func (t *track) status() string {
	t.mu.Lock()
	running := t.running
	t.mu.Unlock()
	if !running {
		return ""
	}
	return t.run.Status()
}

// finish marks the track done and counts its outcome as one of the
// overall line's.
func (t *track) finish(count *int, finding bool) {
	t.mu.Lock()
	t.running = false
	t.mu.Unlock()
	t.p.mu.Lock()
	*count++
	if finding {
		t.p.findings++
	}
	t.p.mu.Unlock()
}

// refused prints why the backend refused the scenario.
func (t *track) refused(err error) {
	t.finish(&t.p.other, false)
	t.p.printf("%s: REFUSED, not run: %v\n", t.run.Name, err)
}

// done prints the scenario's verdict line: the verdict, the findings (spec
// claims not held), the key figures and the run's measurement error.
func (t *track) done(res *model.Result, err error) {
	switch {
	case res == nil:
		t.finish(&t.p.failed, false)
		if !errors.Is(err, env.ErrEnvironment) || t.p.verbose {
			// An environment error ends the command with one message.
			t.p.printf("%s: ERROR %v\n", t.run.Name, err)
		}
	case !res.Complete:
		t.finish(&t.p.other, false)
		t.p.printf("%s: INCOMPLETE (%s)\n", t.run.Name, res.Incomplete)
	default:
		n := len(res.Findings())
		switch {
		case err != nil:
			t.finish(&t.p.failed, n > 0)
		case res.Verdict == model.Pass:
			t.finish(&t.p.passed, n > 0)
		case res.Verdict == model.Fail:
			t.finish(&t.p.failed, n > 0)
		default:
			t.finish(&t.p.unknown, n > 0)
		}
		for _, l := range live.VerdictLines(t.run.Name, res, err) {
			t.p.printf("%s\n", l)
		}
	}
}

// notStarted prints that an interrupted suite never started the scenario.
func (p *progress) notStarted(name string) {
	p.mu.Lock()
	p.other++
	p.mu.Unlock()
	p.printf("%s: NOT STARTED (interrupted)\n", name)
}
