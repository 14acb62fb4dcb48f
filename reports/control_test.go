package reports

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostile is what an agent's stderr may hold: colours, a bell, a NUL, a
// backspace, a lone carriage return, a byte that is not UTF-8, a C1 CSI and
// a character XML forbids.
const hostile = "\x1b[31mboom\x1b[0m nul\x00 bell\x07 bs\x08 cr\r \xff c1\u009b[2J \uffff"

// rawControl returns the first raw control character (or byte XML 1.0
// forbids) in b other than newline and tab, with its offset.
func rawControl(b []byte) (int, string, bool) {
	s := string(b)
	for i, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0xfffe || r == 0xffff ||
			r == '\uFFFD' && !strings.HasPrefix(s[i:], "\uFFFD") {
			return i, s[max(i-20, 0):min(i+20, len(s))], true
		}
	}
	return 0, "", false
}

// hostileRuns are a suite's runs whose errors carry the hostile bytes
// everywhere a report shows an error: the harness errors, the reason a
// run is incomplete, a run's error, a run that could not start.
func hostileRuns() []SuiteRun {
	failed := fixture()
	failed.Errors = []string{"agent 2 exited; its stderr ends:\n" + hostile}
	cut := incomplete()
	cut.Incomplete = "agent 1: " + hostile
	return []SuiteRun{
		{Result: failed, Dir: "partition-leader", Err: errors.New("run error: " + hostile)},
		{Result: cut, Dir: "latency-leader", Err: errors.New(cut.Incomplete)},
		{Name: "redis-restart", Err: errors.New("setup: " + hostile)},
		{Name: "steady-state", Refused: "refused: " + hostile},
	}
}

// A junit.xml whose runs' errors hold control characters and ANSI colours
// is well-formed XML a CI system can read: the colours are stripped (their
// text kept), the rest shown escaped.
func TestJUnitControlCharacters(t *testing.T) {
	var b bytes.Buffer
	if err := JUnitRuns(&b, hostileRuns()); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("junit.xml is not well-formed XML: %v\n%s", err, b.String())
		}
	}
	var j junitSuites
	if err := xml.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if i, near, ok := rawControl(b.Bytes()); ok {
		t.Errorf("raw control character at %d: %q", i, near)
	}
	cases := j.Suites[0].Cases
	if len(cases) != 4 || cases[0].Failure == nil || cases[2].Error == nil || cases[3].Skipped == nil {
		t.Fatalf("cases %+v", cases)
	}
	want := `boom nul\x00 bell\x07 bs\x08 cr\x0d \xff c1\u009b[2J \uffff`
	for _, s := range []string{cases[0].Failure.Message, cases[0].Failure.Text, cases[1].Failure.Message, cases[2].Error.Message, cases[3].Skipped.Text} {
		if !strings.Contains(s, want) {
			t.Errorf("%q: want the text as %q", s, want)
		}
	}
}

// report.md and the suite's summary.md show the same errors without a raw
// control character.
func TestMarkdownControlCharacters(t *testing.T) {
	runs := hostileRuns()
	for _, res := range []*verdict.Result{runs[0].Result, runs[1].Result} {
		var b bytes.Buffer
		if err := Markdown(&b, res, Options{}); err != nil {
			t.Fatal(err)
		}
		if i, near, ok := rawControl(b.Bytes()); ok {
			t.Errorf("report.md of %s: raw control character at %d: %q", res.Scenario.Name, i, near)
		}
		if !strings.Contains(b.String(), `boom nul\x00 bell\x07`) {
			t.Errorf("report.md of %s does not show the error:\n%s", res.Scenario.Name, b.String())
		}
	}
	dir := t.TempDir()
	if err := WriteSuite(dir, runs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.md", FileJUnit} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if i, near, ok := rawControl(b); ok {
			t.Errorf("%s: raw control character at %d: %q", f, i, near)
		}
	}
}
