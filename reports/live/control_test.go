package live

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
)

// hostile is what an agent's stderr may hold: colours, a screen clear, a
// bell, a NUL, a lone carriage return, a C1 CSI.
const hostile = "\x1b[31mboom\x1b[0m\x1b[2J nul\x00 bell\x07 cr\r c1\u009b[2J"

// viewOwn matches the sequences the View itself writes to redraw its area.
var viewOwn = regexp.MustCompile("\033\\[[0-9]+A\r\033\\[J")

// noRawControl fails t when out, without the View's own sequences, holds a
// raw control character other than newline and tab.
func noRawControl(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range viewOwn.ReplaceAllString(out, "") {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			t.Errorf("%s: raw control character %q at %d:\n%q", what, r, i, out)
			return
		}
	}
	if !strings.Contains(out, `boom nul\x00 bell\x07 cr\x0d c1\u009b[2J`) {
		t.Errorf("%s: the error's text is not shown escaped:\n%q", what, out)
	}
}

// Whatever a run's errors and events carry is printed with its colours
// stripped and its control characters escaped, on a terminal and in a log.
func TestViewPrintsNoRawControl(t *testing.T) {
	sc := model.Scenario{Name: "a", Duration: 10 * time.Second}
	for _, size := range []func() (int, int){nil, func() (int, int) { return 80, 24 }} {
		var buf syncBuffer
		v := NewView([]model.Scenario{sc, sc, sc, sc}, Options{Out: &buf, Size: size, Verbose: true})
		tr := v.Start(sc)
		tr.Observe(model.Event{At: time.Second, Kind: model.ElectorError, Instance: 1, Err: hostile})
		tr.Done(&verdict.Result{Scenario: sc, Complete: true, Errors: []string{"agent: " + hostile}}, errors.New("run: "+hostile))
		v.Start(sc).Done(nil, errors.New("setup: "+hostile))
		v.Start(sc).Done(&verdict.Result{Scenario: sc, Incomplete: "cut: " + hostile}, nil)
		v.Start(sc).Refused(errors.New("refused: " + hostile))
		v.Close()
		noRawControl(t, "view", buf.String())
	}
}

// A distribution's table shows why it is incomplete the same way.
func TestDistributionPrintsNoRawControl(t *testing.T) {
	var b bytes.Buffer
	Distribution(&b, &reports.Distribution{Scenario: "a", Backend: "virtual", Runs: 1, Incomplete: "agent: " + hostile}, "", time.Second, 1)
	noRawControl(t, "distribution", b.String())
}
