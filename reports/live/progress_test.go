package live

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// In a log, a line each time another tenth of the runs is done (eleven in
// all: the first run, in the first tenth, then each tenth up to all done),
// each with the counts; nothing for an empty search.
func TestProgressPlainEveryTenth(t *testing.T) {
	var buf bytes.Buffer
	p := Progress(&buf, false)
	p(0, 0)
	if buf.Len() != 0 {
		t.Fatalf("no runs printed %q", buf.String())
	}
	for d := 1; d <= 200; d++ {
		p(d, 200)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 11 {
		t.Fatalf("%d lines, want one per tenth (11):\n%s", len(lines), buf.String())
	}
	if !strings.HasPrefix(lines[0], "1/200 runs, ") || !strings.HasPrefix(lines[1], "20/200 runs, ") || !strings.HasPrefix(lines[10], "200/200 runs, ") || !strings.Contains(lines[10], "ETA 0s") {
		t.Errorf("first %q, second %q, last %q", lines[0], lines[1], lines[10])
	}
	if strings.Contains(buf.String(), "\r") {
		t.Error("a log line holds a carriage return")
	}
}

// On a terminal, every call redraws the one line in place, and the last
// ends it.
func TestProgressTerminalRedraws(t *testing.T) {
	var buf bytes.Buffer
	p := Progress(&buf, true)
	for d := 1; d <= 3; d++ {
		p(d, 3)
	}
	s := buf.String()
	if strings.Count(s, "\r") != 3 || strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") || !strings.HasPrefix(s, "\r1/3 runs, ") {
		t.Errorf("terminal output %q: want three redraws, one ending newline", s)
	}
}

// A ticker prints the runs done so far until Stop; a quiet one (nil
// writer) only counts.
func TestTicker(t *testing.T) {
	var buf syncBuffer
	tk := NewTicker(&buf, "leader-crash", 10, time.Millisecond)
	tk.Done()
	tk.Done()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), "leader-crash: 2 of 10 runs\n") {
		if time.Now().After(deadline) {
			t.Fatalf("no tick in 10 s: %q", buf.String())
		}
		time.Sleep(time.Millisecond)
	}
	tk.Stop() // returns once its goroutine has
	quiet := NewTicker(nil, "x", 1, time.Millisecond)
	quiet.Done()
	quiet.Stop()
}
