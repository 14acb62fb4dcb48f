package live

import (
	"github.com/leaselab/leaselab/model/verdict"

	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/leaselab/leaselab/internal/printable"
	"github.com/leaselab/leaselab/model"
)

// Options are a View's. The zero value prints plain lines to nowhere; set
// Out.
type Options struct {
	// Out is where the view prints.
	Out io.Writer
	// Size returns the terminal's width and height. Nil: Out is no
	// terminal, and the view prints plain lines (every 10 s and at every
	// fault), so logs stay readable and hold no escape sequences; else it
	// keeps a live area at the bottom, redrawn in place.
	Size func() (w, h int)
	// Verbose prints every event's line, and errors Unprinted holds back.
	Verbose bool
	// Quiet prints no progress: only the runs' outcomes.
	Quiet bool
	// Virtual: the runs take virtual time (the durations shown are the
	// scenario's, not the wall time they take), so there is no ETA.
	Virtual bool
	// Parallel is how many runs go at once, for the ETA; 0: 1.
	Parallel int
	// Unprinted reports whether a run that ended with err and no result
	// prints no ERROR line (unless Verbose): an error the caller reports
	// once, however many runs met it. Nil: every error is printed.
	Unprinted func(err error) bool
}

// View shows what the running scenarios are doing. On a terminal it keeps
// a live area at the bottom: one line per running scenario (elapsed and
// total time, the current leader(s), the active faults), each cut to the
// terminal's width, and an overall line (done/total, passed/failed, ETA),
// redrawn in place; finished scenarios print their verdict lines above it.
// Otherwise (CI logs) it prints plain lines every plainEvery and at every
// fault. Its methods are safe for concurrent use.
type View struct {
	o    Options
	live bool

	mu      sync.Mutex
	tracks  []*Track
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

// NewView follows scs, run o.Parallel at a time, until Close: it redraws
// on a goroutine of its own, which Close ends.
func NewView(scs []model.Scenario, o Options) *View {
	if o.Out == nil {
		o.Out = io.Discard
	}
	v := &View{o: o, live: o.Size != nil, total: len(scs), parallel: max(o.Parallel, 1),
		started: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	for _, sc := range scs {
		v.queued += sc.Length()
	}
	go v.loop()
	return v
}

func (v *View) loop() {
	defer close(v.done)
	every := plainEvery
	if v.live {
		every = liveEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			return
		case <-t.C:
			if !v.o.Quiet {
				v.draw()
			}
		}
	}
}

// Close stops redrawing, its goroutine ended, and erases the live area.
func (v *View) Close() {
	close(v.stop)
	<-v.done
	v.mu.Lock()
	v.clear()
	v.mu.Unlock()
}

// clear erases the live area; v.mu is held.
func (v *View) clear() {
	if v.live && v.drawn > 0 {
		fmt.Fprintf(v.o.Out, "\033[%dA\r\033[J", v.drawn)
		v.drawn = 0
	}
}

// Printf prints a line above the live area. What it prints carries
// errors from agents: their control characters are stripped or shown
// escaped (printable.Text), so a terminal never obeys them.
func (v *View) Printf(format string, a ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clear()
	io.WriteString(v.o.Out, printable.Text(fmt.Sprintf(format, a...)))
	v.paint()
}

func (v *View) draw() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.live {
		v.clear()
		v.paint()
		return
	}
	for _, s := range v.statuses() {
		fmt.Fprintln(v.o.Out, s)
	}
	if v.total > 1 {
		fmt.Fprintln(v.o.Out, v.overall())
	}
}

// paint draws the live area below the cursor; v.mu is held and the area
// is clear.
func (v *View) paint() {
	if !v.live || v.o.Quiet {
		return
	}
	w, h := v.o.Size()
	lines := v.render(w, h)
	for _, l := range lines {
		fmt.Fprint(v.o.Out, l, "\n")
	}
	v.drawn = len(lines)
}

// render is the live area for a terminal of width × height: one line per
// running scenario (at most height−2 of them, then "+N more"), and the
// overall line when there is more than one scenario. No line is wider
// than width.
func (v *View) render(width, height int) []string {
	st := v.statuses()
	if len(st) == 0 && v.total <= 1 {
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
	if v.total > 1 {
		lines = append(lines, fit(v.overall(), width))
	}
	return lines
}

// statuses are the running scenarios' lines, in start order.
func (v *View) statuses() []string {
	var st []string
	for _, t := range v.tracks {
		if s := t.status(); s != "" {
			st = append(st, s)
		}
	}
	return st
}

// overall is the suite's line: done/total, passed/failed, ETA.
func (v *View) overall() string {
	done := v.passed + v.failed + v.unknown + v.other
	s := fmt.Sprintf("%d/%d done: %d passed, %d failed, %d unknown", done, v.total, v.passed, v.failed, v.unknown)
	if v.other > 0 {
		s += fmt.Sprintf(", %d other", v.other)
	}
	if v.findings > 0 {
		s += fmt.Sprintf("; %d with findings", v.findings)
	}
	if !v.o.Virtual && done < v.total {
		s += " · ETA " + v.eta().String()
	}
	return s
}

// eta estimates the wall time left: the longest remaining running
// scenario, or the queued scenario time spread over the free slots,
// whichever is longer.
func (v *View) eta() time.Duration {
	var longest time.Duration
	for _, t := range v.tracks {
		t.mu.Lock()
		running := t.running
		t.mu.Unlock()
		if running {
			longest = max(longest, t.run.Left())
		}
	}
	return max(longest, v.queued/time.Duration(v.parallel)).Round(time.Second)
}

// fit cuts s to width columns (one per rune), ending it with "…" when cut.
func fit(s string, width int) string {
	if width < 1 || utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1]) + "…"
}

// Track follows one scenario's run on its View through its events (Run)
// and whether it is still running.
type Track struct {
	v   *View
	run *Run

	mu      sync.Mutex
	running bool
}

// Start follows a run of sc that begins now.
func (v *View) Start(sc model.Scenario) *Track {
	t := &Track{v: v, run: NewRun(sc), running: true}
	v.mu.Lock()
	v.tracks = append(v.tracks, t)
	v.queued = max(v.queued-t.run.Total, 0)
	v.mu.Unlock()
	if !v.o.Quiet && !v.live {
		if v.o.Virtual {
			v.Printf("%s: started (%v of virtual time)\n", sc.Name, t.run.Total.Round(time.Second))
		} else {
			v.Printf("%s: started (%v)\n", sc.Name, t.run.Total.Round(time.Second))
		}
	}
	return t
}

// Observe is the run's Observe hook: it is fast.
func (t *Track) Observe(e model.Event) {
	t.run.Observe(e)
	if t.v.o.Quiet {
		return
	}
	if t.v.o.Verbose {
		t.v.Printf("%s\n", EventLine(t.run.Name, e))
	} else if !t.v.live && (e.Kind == model.FaultApplied || e.Kind == model.FaultHealed) {
		t.v.Printf("%s\n", FaultLine(t.run.Name, e))
	}
}

// status is the run's line while it runs, "" after.
func (t *Track) status() string {
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
func (t *Track) finish(count *int, finding bool) {
	t.mu.Lock()
	t.running = false
	t.mu.Unlock()
	t.v.mu.Lock()
	*count++
	if finding {
		t.v.findings++
	}
	t.v.mu.Unlock()
}

// Refused prints why the backend refused the scenario: it did not run.
func (t *Track) Refused(err error) {
	t.finish(&t.v.other, false)
	t.v.Printf("%s: REFUSED, not run: %v\n", t.run.Name, err)
}

// Done prints the scenario's verdict line: the verdict, the findings (spec
// claims not held), the key figures and the run's measurement error; with
// res nil, the error the run ended with.
func (t *Track) Done(res *verdict.Result, err error) {
	switch {
	case res == nil:
		t.finish(&t.v.failed, false)
		if t.v.o.Unprinted == nil || !t.v.o.Unprinted(err) || t.v.o.Verbose {
			t.v.Printf("%s: ERROR %v\n", t.run.Name, err)
		}
	case !res.Complete:
		t.finish(&t.v.other, false)
		t.v.Printf("%s: INCOMPLETE (%s)\n", t.run.Name, res.Incomplete)
	default:
		n := len(res.Findings())
		switch {
		case err != nil:
			t.finish(&t.v.failed, n > 0)
		case res.Verdict == model.Pass:
			t.finish(&t.v.passed, n > 0)
		case res.Verdict == model.Fail:
			t.finish(&t.v.failed, n > 0)
		default:
			t.finish(&t.v.unknown, n > 0)
		}
		for _, l := range VerdictLines(t.run.Name, res, err) {
			t.v.Printf("%s\n", l)
		}
	}
}

// NotStarted prints that an interrupted suite never started the scenario
// name.
func (v *View) NotStarted(name string) {
	v.mu.Lock()
	v.other++
	v.mu.Unlock()
	v.Printf("%s: NOT STARTED (interrupted)\n", name)
}
