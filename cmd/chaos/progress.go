package main

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/leaselab/leaselab/model"
)

// progress shows what the running scenarios are doing: per scenario, the
// elapsed and total time, the current leader(s) and the active faults. On a
// terminal it redraws one live line; otherwise (CI logs) it prints a plain
// line every plainEvery and at every fault, so logs stay readable.
type progress struct {
	w       io.Writer
	live    bool
	verbose bool
	quiet   bool
	// virtual: runs take virtual time (the durations shown are the
	// scenario's, not the wall time they take).
	virtual bool

	mu     sync.Mutex
	tracks []*track
	stop   chan struct{}
	done   chan struct{}
}

const (
	liveEvery  = 250 * time.Millisecond
	plainEvery = 10 * time.Second
)

func newProgress(w io.Writer, verbose, quiet bool) *progress {
	p := &progress{w: w, verbose: verbose, quiet: quiet, stop: make(chan struct{}), done: make(chan struct{})}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.live = true
		}
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
	if p.live && !p.quiet {
		p.mu.Lock()
		fmt.Fprint(p.w, "\r\033[K")
		p.mu.Unlock()
	}
}

// printf prints a line above the live line.
func (p *progress) printf(format string, a ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, format, a...)
}

func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	var parts []string
	for _, t := range p.tracks {
		if s := t.status(); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return
	}
	if p.live {
		line := strings.Join(parts, " | ")
		fmt.Fprint(p.w, "\r\033[K"+line)
		return
	}
	for _, s := range parts {
		fmt.Fprintln(p.w, s)
	}
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
	p.mu.Unlock()
	if !p.quiet {
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
		t.p.printf("%s %9s %-16s %s\n", t.name, e.At.Round(time.Millisecond), e.Kind, eventText(e))
	} else if !t.p.live && (e.Kind == model.FaultApplied || e.Kind == model.FaultHealed) {
		t.p.printf("%s %9s %s %s %v %s\n", t.name, e.At.Round(time.Millisecond), e.Kind, e.Fault, e.Target, e.Detail)
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

// refused prints why the backend refused the scenario.
func (t *track) refused(err error) {
	t.mu.Lock()
	t.running = false
	t.mu.Unlock()
	t.p.printf("%s: REFUSED, not run: %v\n", t.name, err)
}

// done prints the scenario's verdict line.
func (t *track) done(res *model.Result, err error) {
	t.mu.Lock()
	t.running = false
	t.mu.Unlock()
	switch {
	case res == nil:
		t.p.printf("%s: ERROR %v\n", t.name, err)
	case !res.Complete:
		t.p.printf("%s: INCOMPLETE (%s)\n", t.name, res.Incomplete)
	default:
		s := res.Analysis.Summary
		t.p.printf("%s: %s  max gap %v, max overlap %v, failover max %v, stale max %v\n", t.name, strings.ToUpper(string(res.Verdict)),
			s.MaxGap.Round(time.Millisecond), s.MaxOverlap.Round(time.Millisecond), s.Failover.Max.Round(time.Millisecond), s.MaxStale.Round(time.Millisecond))
		for _, r := range res.Reasons {
			t.p.printf("  %s: %s\n", res.Verdict, r)
		}
		for _, e := range res.Errors {
			t.p.printf("  harness error: %s\n", e)
		}
	}
}
