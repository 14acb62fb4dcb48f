package observe_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/observe"
)

// The watch's lines: its status with ids cut short, what it follows, and
// a failover's move.
func TestWatchLines(t *testing.T) {
	p := observe.Progress{Elapsed: 61500 * time.Millisecond, Lane: "notify", Node: "10.0.0.1:6379", Switches: 1, Entries: 9, Late: 1, Instances: 3,
		Leaders: []string{"abcdefgh", "xyz"}, Holder: "abcdefgh"}
	if got, want := p.Line(), "observe 1m2s  leaders abcdef,xyz  key held by abcdef  instances 3  entries 9 (late 1)  lane notify  on 10.0.0.1:6379 (after 1 failover(s))"; got != want {
		t.Errorf("Progress.Line:\n%s\nwant\n%s", got, want)
	}
	if got := (observe.Progress{}).Line(); !strings.Contains(got, "leaders none  key held by none") || strings.Contains(got, "failover") {
		t.Errorf("an empty watch: %q", got)
	}
	h := observe.Header{Key: "lease", Stream: "s", Source: "redis a:1", Lane: "poll", Resolution: 50 * time.Millisecond, LaneNote: "notifications refused", Failover: "none"}
	want := []string{"observing lease (key lease, stream s) on redis a:1: lane poll, resolution 50ms", "  notifications refused", "  failover: none"}
	if got := h.Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Header.Lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := observe.Switch{At: start.Add(2 * time.Second), LastSeen: start.Add(1500 * time.Millisecond), From: "a", To: "b", Why: "READONLY", Lane: "notify"}
	if got, want := s.Line(start), "failover at 2s: now following b (was a; READONLY); the lease key was not seen for 500ms, lane notify"; got != want {
		t.Errorf("Switch.Line:\n%s\nwant\n%s", got, want)
	}
}
