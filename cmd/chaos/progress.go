package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/leaselab/leaselab/model"
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
		if t.running {
			longest = max(longest, t.total-t.now)
		}
		t.mu.Unlock()
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

// track follows one scenario's run through its events.
type track struct {
	p     *progress
	name  string
	total time.Duration

	mu      sync.Mutex
	running bool
	now     time.Duration
	leaders map[int]bool
	faults  map[int]string
}

func (p *progress) start(sc model.Scenario) *track {
	t := &track{p: p, name: sc.Name, total: sc.Length(), leaders: map[int]bool{}, faults: map[int]string{}, running: true}
	p.mu.Lock()
	p.tracks = append(p.tracks, t)
	p.queued = max(p.queued-t.total, 0)
	p.mu.Unlock()
	if !p.quiet && !p.live {
		if p.virtual {
			p.printf("%s: started (%v of virtual time)\n", sc.Name, t.total.Round(time.Second))
		} else {
			p.printf("%s: started (%v)\n", sc.Name, t.total.Round(time.Second))
		}
	}
	return t
}

// observe is the run's Observe hook: it must be fast.
func (t *track) observe(e model.Event) {
	t.mu.Lock()
	t.now = e.At
	switch e.Kind {
	case model.LeaderGained:
		t.leaders[e.Instance] = true
	case model.LeaderLost, model.InstanceCrashed, model.InstanceStopped:
		delete(t.leaders, e.Instance)
	case model.FaultApplied:
		t.faults[e.FaultID] = fmt.Sprintf("%s %v", e.Fault, e.Target)
	case model.FaultHealed:
		delete(t.faults, e.FaultID)
	}
	t.mu.Unlock()
	if t.p.quiet {
		return
	}
	if t.p.verbose {
		t.p.printf("%s\n", strings.TrimRight(fmt.Sprintf("%s %9s %-16s %s", t.name, e.At.Round(time.Millisecond), e.Kind, eventText(e)), " "))
	} else if !t.p.live && (e.Kind == model.FaultApplied || e.Kind == model.FaultHealed) {
		t.p.printf("%s\n", strings.TrimRight(fmt.Sprintf("%s %9s %s %s %v %s", t.name, e.At.Round(time.Millisecond), e.Kind, e.Fault, e.Target, e.Detail), " "))
	}
}

func eventText(e model.Event) string {
	var b strings.Builder
	if e.Instance >= 0 {
		fmt.Fprintf(&b, "#%d ", e.Instance)
	}
	for _, kv := range [][2]string{{"id", short(e.ID)}, {"holder", short(e.Holder)}, {"fault", e.Fault}, {"chore", e.Chore}, {"task", e.Task}, {"err", e.Err}, {"", e.Detail}} {
		if kv[1] == "" {
			continue
		}
		if kv[0] != "" {
			b.WriteString(kv[0] + "=")
		}
		b.WriteString(kv[1] + " ")
	}
	return strings.TrimSpace(b.String())
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func (t *track) status() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.running {
		return ""
	}
	var leaders []string
	for i := range t.leaders {
		leaders = append(leaders, fmt.Sprint(i))
	}
	sort.Strings(leaders)
	leader := "none"
	if len(leaders) > 0 {
		leader = "#" + strings.Join(leaders, ",#")
	}
	var faults []string
	for _, f := range t.faults {
		faults = append(faults, f)
	}
	sort.Strings(faults)
	fs := "none"
	if len(faults) > 0 {
		fs = strings.Join(faults, "; ")
	}
	return fmt.Sprintf("%s %v/%v leader %s faults %s", t.name, t.now.Round(time.Second), t.total.Round(time.Second), leader, fs)
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
	t.p.printf("%s: REFUSED, not run: %v\n", t.name, err)
}

// done prints the scenario's verdict line: the verdict, the findings (spec
// claims not held), the key figures and the run's measurement error.
func (t *track) done(res *model.Result, err error) {
	switch {
	case res == nil:
		t.finish(&t.p.failed, false)
		if !errors.Is(err, env.ErrEnvironment) || t.p.verbose {
			// An environment error ends the command with one message.
			t.p.printf("%s: ERROR %v\n", t.name, err)
		}
	case !res.Complete:
		t.finish(&t.p.other, false)
		t.p.printf("%s: INCOMPLETE (%s)\n", t.name, res.Incomplete)
	default:
		n := len(findings(res))
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
		s := res.Analysis.Summary
		t.p.printf("%s: %s  max gap %v, max overlap %v, failover max %v, stale max %v%s\n", t.name, verdictText(res),
			ms(s.MaxGap), ms(s.MaxOverlap), ms(s.Failover.Max), ms(s.MaxStale), measurementNote(res))
		for _, r := range res.Reasons {
			t.p.printf("  %s: %s\n", res.Verdict, r)
		}
		for _, e := range res.Errors {
			t.p.printf("  harness error: %s\n", e)
		}
		if err != nil {
			t.p.printf("  ERROR: %v\n", err)
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

// verdictText is the verdict as the terminal shows it: "PASS", or
// "PASS · 1 finding" when a spec claim did not hold in a run that met its
// expectations, so that neither hides the other.
func verdictText(res *model.Result) string {
	v := strings.ToUpper(string(res.Verdict))
	switch n := len(findings(res)); n {
	case 0:
		return v
	case 1:
		return v + " · 1 finding"
	default:
		return fmt.Sprintf("%s · %d findings", v, n)
	}
}

// findings are the spec claims the run measured not held.
func findings(res *model.Result) []model.Claim {
	var out []model.Claim
	for _, c := range res.Analysis.Claims {
		if c.Verdict == model.NotHeld {
			out = append(out, c)
		}
	}
	return out
}

// ms rounds a duration to the millisecond for the terminal.
func ms(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// measurementNote is the run's measurement error, as the verdict line
// shows it: the real backend's keyspace-notification lateness (how late
// the Redis lane saw the key change) and how late faults were injected
// against their schedule. Parallel runs that starve the machine show here
// first. A backend that computes (the virtual one) measures exactly:
// nothing is shown.
func measurementNote(res *model.Result) string {
	if res.VirtualTime {
		return ""
	}
	late, fault := measurementError(res)
	n := "none timed"
	if res.Analysis.Redis.NotificationLateness.Count > 0 {
		n = fmt.Sprintf("≤ %v late", ms(late))
	}
	stamps := ""
	if sl := res.Analysis.StampLateness; sl.Count > 0 {
		stamps = fmt.Sprintf(", agent lines stamped ≤ %v late (median %v)", ms(sl.Max), ms(sl.Median))
	}
	return fmt.Sprintf("; measurement error: notifications %s, faults ≤ %v late%s", n, ms(fault), stamps)
}

// measurementError is the worst keyspace-notification lateness and the
// worst lateness of a fault injection against its (scaled) schedule.
func measurementError(res *model.Result) (notify, fault time.Duration) {
	notify = res.Analysis.Redis.NotificationLateness.Max
	k := nonZero(res.TimeScale)
	for _, e := range res.Timeline {
		if e.Kind != model.FaultApplied || e.FaultID < 0 || e.FaultID >= len(res.Scenario.Faults) {
			continue
		}
		want := time.Duration(float64(res.Scenario.Faults[e.FaultID].At) * k)
		fault = max(fault, e.At-want)
	}
	return notify, fault
}
