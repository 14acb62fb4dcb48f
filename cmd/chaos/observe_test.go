package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/rediscluster"
	"github.com/leaselab/leaselab/observe"
	"github.com/leaselab/leaselab/publish"
)

// recordedOverlap writes a recording in which two instances overlap for
// 200ms, each end of it known within about 0.5ms, and returns its path.
func recordedOverlap(t *testing.T) string {
	t.Helper()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	entry := func(kind election.TransitionKind, id, pub string, seq uint64, at time.Duration) publish.Entry {
		w := start.Add(at)
		return publish.Entry{Kind: kind, Instance: id, Group: "g", Term: 1, Wall: w, PubWall: w, Mono: at, PubMono: at,
			RTT: time.Millisecond, Publisher: pub, Seq: seq, Redis: w.Add(500 * time.Microsecond), TTL: time.Second, Wait: time.Second}
	}
	rec := &observe.Recording{
		Header: observe.Header{Group: "g", Key: election.LeaderKey("g"), Stream: publish.StreamKey("g"), Source: "test",
			Lane: observe.LanePoll, Resolution: 50 * time.Millisecond, Start: start, RTT: time.Millisecond},
		Entries: []publish.Entry{
			entry(election.Promoted, "a", "pa", 1, 100*time.Millisecond),
			entry(election.Promoted, "b", "pb", 1, 1000*time.Millisecond),
			entry(election.Demoted, "a", "pa", 2, 1200*time.Millisecond),
			entry(election.Demoted, "b", "pb", 2, 1900*time.Millisecond),
		},
		End: start.Add(2 * time.Second), Ended: "complete",
	}
	path := filepath.Join(t.TempDir(), "observed.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := observe.WriteRecording(f, rec); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestObserveCheckFromRecording: a recording read back is a check: a limit
// above the overlap passes, one below fails, one inside its uncertainty is
// unknown (exit 1 too), and the report is written beside it.
func TestObserveCheckFromRecording(t *testing.T) {
	path := recordedOverlap(t)
	for _, c := range []struct {
		limit string
		code  int
		says  string
	}{
		{"1s", exitOK, "PASS"},
		{"100ms", exitFailed, "FAIL"},
		{"200ms", exitFailed, "within the measurement's uncertainty"},
	} {
		out := t.TempDir()
		code, stdout, stderr := chaos(t, "observe", "--from", path, "--max-overlap", c.limit, "--out", out)
		if code != c.code || !strings.Contains(stdout+stderr, c.says) {
			t.Errorf("--max-overlap %s: exit %d, want %d saying %q\nstdout:\n%s\nstderr:\n%s", c.limit, code, c.code, c.says, stdout, stderr)
		}
		if !strings.Contains(stdout, "overlaps 1 (longest 200ms ± 1.3ms") {
			t.Errorf("--max-overlap %s: the overlap is not printed with its uncertainty:\n%s", c.limit, stdout)
		}
		for _, f := range []string{"report.html", "report.md", "result.json", "junit.xml"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("--max-overlap %s: %v", c.limit, err)
			}
		}
	}
}

// TestReportOfAnObservedRun: chaos report on an observed fleet's
// result.json prints the command observe gave it (observe --from the
// recording, with its limits), in report.md and junit.xml alike. Before,
// it printed "chaos run <scenario> --seed 0 …" for a fleet that no
// scenario ran, which cannot work.
func TestReportOfAnObservedRun(t *testing.T) {
	path := recordedOverlap(t)
	out := t.TempDir()
	if code, stdout, stderr := chaos(t, "observe", "--from", path, "--max-overlap", "1s", "--out", out); code != exitOK {
		t.Fatalf("observe: exit %d\n%s\n%s", code, stdout, stderr)
	}
	again := t.TempDir()
	if code, stdout, stderr := chaos(t, "report", filepath.Join(out, "result.json"), "--out", again); code != exitOK {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	want := "observe --from " + path + " --max-overlap 1s"
	for _, f := range []string{"report.md", "junit.xml"} {
		b, err := os.ReadFile(filepath.Join(again, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) || strings.Contains(string(b), "--seed") {
			t.Errorf("%s: want the reproduce command %q, not a run's", f, want)
		}
	}
}

// TestObserveFromInterrupted: Ctrl-C while a recording's report is built
// ends the command with exit 130 and no report; the build used to run to
// its end whatever the signal (minutes for a million transitions).
func TestObserveFromInterrupted(t *testing.T) {
	path := recordedOverlap(t)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr strings.Builder
	code := run(ctx, []string{"observe", "--from", path, "--out", out}, &stdout, &stderr)
	if code != exitCanceled || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("exit %d, want %d saying interrupted\nstdout:\n%s\nstderr:\n%s", code, exitCanceled, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "result.json")); err == nil {
		t.Errorf("a report was written after the interrupt")
	}
}

// TestObserveBadInput: a bad recording is named with its line; a watch
// without a lease to follow is a usage error.
func TestObserveBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "observed.jsonl")
	if err := os.WriteFile(bad, []byte("{\"watch\":{\"key\":\"k\",\"stream\":\"s\",\"source\":\"x\",\"lane\":\"poll\",\"resolution\":1,\"start\":\"2026-12-01T09:00:00Z\",\"rtt\":1}}\n{\"entry\": 7}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := chaos(t, "observe", "--from", bad)
	if code != exitUsage || !strings.Contains(stderr, "observed.jsonl:2:") {
		t.Errorf("bad recording: exit %d, stderr %q; want 2 naming line 2", code, stderr)
	}
	code, _, stderr = chaos(t, "observe", "--redis-addr", "127.0.0.1:1")
	if code != exitUsage || !strings.Contains(stderr, "--group or --key") {
		t.Errorf("no group: exit %d, stderr %q; want 2 asking for --group or --key", code, stderr)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--sentinel", "127.0.0.1:1", "--group", "g"}, "--sentinel and --master go together"},
		{[]string{"--sentinel", "127.0.0.1:1", "--master", "m", "--nodes", "127.0.0.1:2", "--group", "g"}, "--nodes is for a Redis without Sentinel"},
		{[]string{"--from", bad, "--sentinel", "127.0.0.1:1"}, "--from rebuilds from a recording"},
	} {
		code, _, stderr = chaos(t, append([]string{"observe"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.says) {
			t.Errorf("%q: exit %d, stderr %q; want 2 saying %q", c.args, code, stderr, c.says)
		}
	}
}

// TestObserveFollowsSentinelFailover: chaos observe --sentinel follows the
// primary the Sentinels name, through a SENTINEL FAILOVER during the watch:
// it prints the move and the report says when and what it may have missed.
func TestObserveFollowsSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a replicated Redis with a Sentinel (-short)")
	}
	r := rediscluster.NewReplicated(t, rediscluster.ReplicatedOptions{Sentinels: 1})
	ctx := context.Background()
	old, err := r.Primary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, stdout, stderr := chaos(t, "observe", "--sentinel", strings.Join(r.SentinelAddrs(), ","), "--master", rediscluster.MasterName,
			"--group", "g", "--for", "6s", "--interval", "20ms", "--out", out)
		done <- result{code, stdout, stderr}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for { // the watch has begun once its recording has a header
		if b, _ := os.ReadFile(filepath.Join(out, "observed.jsonl")); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watch did not begin within 5s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	now, err := r.SentinelFailover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"on redis " + old.Addr + " (Sentinel master", "failover: Sentinel", "now following " + now.Addr + " (was " + old.Addr} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout does not say %q:\n%s", want, res.stdout)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "followed a failover") || !strings.Contains(string(md), "not seen for") {
		t.Errorf("report.md does not say that the watch switched and what it could not see:\n%s", md)
	}
}

// writingEnds is a context that ends once a report file is being written
// in dir (a ".partial" file there): Ctrl-C while the report is written.
type writingEnds struct {
	context.Context
	dir   string
	ended *bool
}

func (c writingEnds) Err() error {
	if m, _ := filepath.Glob(filepath.Join(c.dir, ".*.partial")); len(m) > 0 {
		*c.ended = true
	}
	if *c.ended {
		return context.Canceled
	}
	return nil
}

// TestObserveFromInterruptedWhileWriting: Ctrl-C while the report's files
// are written ends the command with exit 130, saying so, and leaves no
// report file, whole or partial; writing used to ignore the signal (192 s
// for a million transitions).
func TestObserveFromInterruptedWhileWriting(t *testing.T) {
	path := recordedOverlap(t)
	out := t.TempDir()
	var stdout, stderr strings.Builder
	code := run(writingEnds{context.Background(), out, new(bool)}, []string{"observe", "--from", path, "--out", out}, &stdout, &stderr)
	if code != exitCanceled || !strings.Contains(stderr.String(), "interrupted while writing the report") {
		t.Fatalf("exit %d, want %d saying interrupted while writing\nstdout:\n%s\nstderr:\n%s", code, exitCanceled, stdout.String(), stderr.String())
	}
	left, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("%s left behind", e.Name())
	}
}
