package live

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
)

// Every test ends with no goroutine of a View left: Close ends its redraw
// loop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ansi matches the escape sequences of the live area.
var ansi = regexp.MustCompile("\033\\[[0-9;]*[A-Za-z]")

// The live area at width 80: one line per running scenario plus the
// overall line, none wider than the terminal, however long the names and
// fault lists; more scenarios than the terminal's rows fold into "… N more".
func TestLiveAreaFitsWidth(t *testing.T) {
	var scs []model.Scenario
	for _, e := range scenarios.Builtin() {
		scs = append(scs, e.Scenario)
	}
	var buf syncBuffer
	size := func() (int, int) { return 80, 24 }
	p := NewView(scs, Options{Out: &buf, Size: size, Parallel: len(scs)})
	for i, sc := range scs {
		tr := p.Start(sc)
		tr.Observe(model.Event{At: 3 * time.Second, Kind: model.LeaderGained, Instance: i % 3})
		tr.Observe(model.Event{At: 4 * time.Second, Kind: model.FaultApplied, FaultID: 0, Fault: "partition", Target: []int{0, 1, 2}})
		tr.Observe(model.Event{At: 5 * time.Second, Kind: model.FaultApplied, FaultID: 1, Fault: "latency", Target: []int{2}})
	}
	// A finished scenario prints its verdict line above the area.
	p.Printf("leader-crash: PASS  max gap 5.9s\n")
	p.draw()
	p.mu.Lock()
	lines := p.render(80, 24)
	p.mu.Unlock()
	p.Close()

	if len(lines) > 24-1 {
		t.Errorf("%d lines in a 24-row terminal", len(lines))
	}
	if !strings.Contains(lines[len(lines)-2], "more running") {
		t.Errorf("%d running scenarios in 24 rows: no \"more running\" line:\n%s", len(scs), strings.Join(lines, "\n"))
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, fmt.Sprintf("0/%d done: 0 passed, 0 failed, 0 unknown", len(scs))) || !strings.Contains(last, "ETA") {
		t.Errorf("overall line %q", last)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	// What reached the terminal: after the escape sequences, no line is
	// wider than 80 either, and the area was redrawn in place (cursor up,
	// clear to the end of the screen), never joined into one line.
	out := buf.String()
	if !strings.Contains(out, "\033[J") || !regexp.MustCompile("\033\\[\\d+A").MatchString(out) {
		t.Error("the live area is not redrawn in place")
	}
	for _, l := range strings.Split(ansi.ReplaceAllString(out, ""), "\n") {
		l = strings.TrimPrefix(l, "\r")
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("a line of %d columns reached the terminal: %q", n, l)
		}
	}
	if strings.Contains(out, " | ") {
		t.Error("scenarios joined into one line")
	}
	// Plain output (CI logs) has no escape sequences.
	var plain syncBuffer
	p = NewView(scs[:2], Options{Out: &plain, Parallel: 2})
	tr := p.Start(scs[0])
	tr.Observe(model.Event{At: time.Second, Kind: model.FaultApplied, Fault: "crash", Target: []int{0}})
	p.draw()
	p.Close()
	if strings.Contains(plain.String(), "\033") {
		t.Errorf("escape sequences in plain output:\n%q", plain.String())
	}
	for _, l := range strings.Split(plain.String(), "\n") {
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing space: %q", l)
		}
	}
}

// Close ends the redraw loop, however the view was used, and erases the
// live area it left on the screen.
func TestViewCloseEndsItsGoroutine(t *testing.T) {
	before := goleak.IgnoreCurrent()
	sc := model.Scenario{Name: "a"}
	for _, size := range []func() (int, int){nil, func() (int, int) { return 80, 24 }} {
		var buf syncBuffer
		v := NewView([]model.Scenario{sc, sc}, Options{Out: &buf, Size: size})
		v.Start(sc).Observe(model.Event{Kind: model.LeaderGained})
		v.Printf("above\n")
		v.Close()
		goleak.VerifyNone(t, before)
		if size != nil && !strings.HasSuffix(buf.String(), "\033[J") {
			t.Errorf("the live area is not erased at Close: %q", buf.String())
		}
	}
}

// A run that ended with an error Unprinted holds back prints no ERROR line
// unless Verbose; the overall line still counts it as failed.
func TestViewUnprinted(t *testing.T) {
	errEnv := errors.New("no redis")
	sc := model.Scenario{Name: "a"}
	for _, verbose := range []bool{false, true} {
		var buf syncBuffer
		v := NewView([]model.Scenario{sc, sc}, Options{Out: &buf, Quiet: true, Verbose: verbose,
			Unprinted: func(err error) bool { return errors.Is(err, errEnv) }})
		v.Start(sc).Done(nil, errEnv)
		v.Start(sc).Done(nil, errors.New("other"))
		v.mu.Lock()
		overall := v.overall()
		v.mu.Unlock()
		v.Close()
		if got := strings.Contains(buf.String(), "a: ERROR no redis"); got != verbose {
			t.Errorf("verbose %v: the held-back error printed %v:\n%s", verbose, got, buf.String())
		}
		if !strings.Contains(buf.String(), "a: ERROR other") {
			t.Errorf("verbose %v: another error not printed:\n%s", verbose, buf.String())
		}
		if !strings.HasPrefix(overall, "2/2 done: 0 passed, 2 failed") {
			t.Errorf("overall line %q", overall)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the view's goroutine and the test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
