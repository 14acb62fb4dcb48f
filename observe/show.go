package observe

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/leaselab/leaselab/election"
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
func Headline(w io.Writer, res *verdict.Result) {
	sum := res.Analysis.Summary
	fmt.Fprintf(w, "%s: %s  overlaps %d (longest %s), gaps %d (longest %s), stale %d (longest %s), instances %d\n",
		res.Scenario.Name, strings.ToUpper(string(res.Verdict)), sum.Overlaps, reports.Uncertain(sum.MaxOverlap, sum.MaxOverlapUncertainty),
		sum.Gaps, reports.Uncertain(sum.MaxGap, sum.MaxGapUncertainty), sum.StaleWindows, reports.Uncertain(sum.MaxStale, sum.MaxStaleUncertainty), len(res.Observed.Instances))
	for _, r := range res.Reasons {
		fmt.Fprintln(w, "  "+r)
	}
}

// Record runs Watch with o, recording to the file at path (created) and
// showing it on show (nil: nothing shown), for d (0: until ctx ends). It
// closes o.Redis when it returns. Its errors are the environment's: the
// file, or the watch itself.
func Record(ctx context.Context, o Options, path string, d time.Duration, show *Show) (*Recording, error) {
	if o.Redis != nil {
		defer o.Redis.Close()
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	defer f.Close()
	o.Record = NewWriter(f)
	if show != nil {
		show.Hook(&o)
	}
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	rec, err := Watch(ctx, o)
	if show != nil {
		show.End()
	}
	return rec, err
}

// ReadRecordingFile is ReadRecording of the file at path.
func ReadRecordingFile(ctx context.Context, path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadRecording(ctx, f, path)
}

// DefaultDir is where chaos observe writes a watch of the lease group (or,
// without one, of the lease's key) begun at now, when not told:
// chaos-reports/observe-<name>/<UTC time>, the name made safe as a
// directory.
func DefaultDir(group, key string, now time.Time) string {
	name := group
	if name == "" {
		name = strings.TrimPrefix(key, election.KeyPrefix)
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == ' ' {
			return '_'
		}
		return r
	}, name)
	return filepath.Join("chaos-reports", "observe-"+name, now.UTC().Format("20060102-150405"))
}

// Verdict is an observed result's as an error: a fail or unknown of a
// watch that checked limits, or one cut short (incomplete); nil otherwise
// (a watch with no limits only reports).
func Verdict(res *verdict.Result) error {
	switch res.Verdict {
	case model.Fail, model.Unknown:
		if len(res.Evaluation.Checks) > 0 || !res.Complete {
			return fmt.Errorf("observe: %s: %s", res.Verdict, strings.Join(res.Reasons, "; "))
		}
	}
	return nil
}
