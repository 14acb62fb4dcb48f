package observe

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
)

// PlainEvery is how often Show prints the status line in a log (not a
// terminal).
const PlainEvery = 5 * time.Second

// Show prints a watch as chaos observe does: the header's lines and each
// failover's line on Out; the status line (Progress.Line) on Status,
// redrawn in place when Live (a terminal), else once every PlainEvery.
// Hook it into the watch's Options, and call End when the watch returns.
type Show struct {
	// Out gets what the watch follows and where it moved.
	Out io.Writer
	// Status gets the status line.
	Status io.Writer
	// Live: Status is a terminal.
	Live bool

	mu        sync.Mutex
	start     time.Time
	lastPlain time.Time
}

// Hook sets o's Progress, OnStart and OnSwitch to print on s.
func (s *Show) Hook(o *Options) {
	o.Progress = func(p Progress) {
		s.mu.Lock()
		defer s.mu.Unlock()
		line := p.Line()
		switch {
		case s.Live:
			fmt.Fprintf(s.Status, "\r\033[K%s", line)
		case time.Since(s.lastPlain) >= PlainEvery:
			s.lastPlain = time.Now()
			fmt.Fprintln(s.Status, line)
		}
	}
	o.OnStart = func(h Header) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.start = h.Start
		for _, l := range h.Lines() {
			fmt.Fprintln(s.Out, l)
		}
	}
	o.OnSwitch = func(sw Switch) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.Live {
			fmt.Fprint(s.Status, "\r\033[K")
		}
		fmt.Fprintln(s.Out, sw.Line(s.start))
	}
}

// End ends the live status line.
func (s *Show) End() {
	if s.Live {
		fmt.Fprintln(s.Status)
	}
}

// Headline writes an observed result's verdict and windows, each with its
// uncertainty, then its reasons.
func Headline(w io.Writer, res *model.Result) {
	sum := res.Analysis.Summary
	fmt.Fprintf(w, "%s: %s  overlaps %d (longest %s), gaps %d (longest %s), stale %d (longest %s), instances %d\n",
		res.Scenario.Name, strings.ToUpper(string(res.Verdict)), sum.Overlaps, reports.Uncertain(sum.MaxOverlap, sum.MaxOverlapUncertainty),
		sum.Gaps, reports.Uncertain(sum.MaxGap, sum.MaxGapUncertainty), sum.StaleWindows, reports.Uncertain(sum.MaxStale, sum.MaxStaleUncertainty), len(res.Observed.Instances))
	for _, r := range res.Reasons {
		fmt.Fprintln(w, "  "+r)
	}
}
