package observe

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// Show, hooked into a watch's options: the header and each failover on
// Out (the failover's time from the header's start), the status on Status
// — redrawn in place on a terminal, at most once per PlainEvery in a log.
func TestShow(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, live := range []bool{false, true} {
		var out, status bytes.Buffer
		s := &Show{Out: &out, Status: &status, Live: live}
		var o Options
		s.Hook(&o)
		o.OnStart(Header{Group: "my-app", Key: "taskrunner:leader:my-app", Source: "redis a:1", Lane: LanePoll, Start: start, Failover: "by ROLE"})
		o.Progress(Progress{Elapsed: time.Second, Lane: LanePoll})
		o.Progress(Progress{Elapsed: 2 * time.Second, Lane: LanePoll}) // within PlainEvery of the first
		o.OnSwitch(Switch{At: start.Add(1500 * time.Millisecond), LastSeen: start.Add(time.Second), From: "a:1", To: "b:2", Why: "no answer", Lane: LanePoll})
		s.End()
		if !strings.HasPrefix(out.String(), "observing my-app (key taskrunner:leader:my-app") || !strings.Contains(out.String(), "failover at 1.5s: now following b:2 (was a:1; no answer)") {
			t.Errorf("live %v: out\n%s", live, out.String())
		}
		st := status.String()
		if live {
			if strings.Count(st, "\r\033[K") != 3 || !strings.Contains(st, "observe 2s ") || !strings.HasSuffix(st, "\n") {
				t.Errorf("terminal status %q: want two redraws, a clear before the failover, a final newline", st)
			}
		} else if strings.Count(st, "\n") != 1 || !strings.HasPrefix(st, "observe 1s ") || strings.Contains(st, "\r") {
			t.Errorf("log status %q: want the first line only (the second within %v)", st, PlainEvery)
		}
	}
}

// Headline: the verdict, each window with its uncertainty, the reasons.
func TestHeadline(t *testing.T) {
	res := &verdict.Result{Scenario: model.Scenario{Name: "observe-my-app"}, Observed: &analysis.Observed{}}
	res.Verdict = model.Unknown
	res.Reasons = []string{"the watch was cut short"}
	res.Analysis.Summary.Gaps, res.Analysis.Summary.MaxGap = 1, 2*time.Second
	var b bytes.Buffer
	Headline(&b, res)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "observe-my-app: UNKNOWN  overlaps 0 (longest ") || !strings.Contains(lines[0], "gaps 1 (longest 2s") ||
		lines[1] != "  the watch was cut short" {
		t.Errorf("headline:\n%s", b.String())
	}
}

// Where a watch goes when not told: named after its group, else its key
// without the lease prefix, made safe as a directory, with the UTC time.
func TestDefaultDir(t *testing.T) {
	now := time.Date(2026, 12, 1, 11, 2, 3, 0, time.FixedZone("CET", 3600))
	if got, want := DefaultDir("my app/x", "", now), filepath.Join("chaos-reports", "observe-my_app_x", "20261201-100203"); got != want {
		t.Errorf("group: %q, want %q", got, want)
	}
	if got, want := DefaultDir("", "taskrunner:leader:svc:a", now), filepath.Join("chaos-reports", "observe-svc_a", "20261201-100203"); got != want {
		t.Errorf("key: %q, want %q", got, want)
	}
}

// A watch with limits fails or is unknown by its verdict; one cut short
// too; one with no limits that completed only reports.
func TestVerdict(t *testing.T) {
	res := &verdict.Result{Complete: true}
	res.Verdict, res.Reasons = model.Unknown, []string{"a", "b"}
	if err := Verdict(res); err != nil {
		t.Errorf("no limits, complete: %v", err)
	}
	res.Complete = false
	if err := Verdict(res); err == nil || err.Error() != "observe: unknown: a; b" {
		t.Errorf("cut short: %v", err)
	}
	res.Complete, res.Verdict = true, model.Fail
	res.Checks = []model.Check{{Metric: "max_overlap"}}
	if err := Verdict(res); err == nil || err.Error() != "observe: fail: a; b" {
		t.Errorf("a limit broken: %v", err)
	}
	res.Verdict = model.Pass
	if err := Verdict(res); err != nil {
		t.Errorf("pass: %v", err)
	}
}

// A recording read back from its file is the one written; a file that is
// not there is the file system's error.
func TestReadRecordingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "observed.jsonl")
	rec := &Recording{Header: Header{Group: "g", Key: "taskrunner:leader:g", Lane: LanePoll, Start: time.Unix(100, 0).UTC()}, End: time.Unix(160, 0).UTC()}
	var b bytes.Buffer
	if err := WriteRecording(&b, rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRecordingFile(context.Background(), path)
	if err != nil || got.Header.Group != "g" || !got.End.Equal(rec.End) {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if _, err := ReadRecordingFile(context.Background(), path+".none"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
