package observe_test

import (
	"context"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/observe"
	"github.com/leaselab/leaselab/publish"
)

// TestBuildClampsImpossible: a recording whose entries carry values no
// publisher can have written — a TTL of MaxInt64, a Redis time in 2100
// (which moved the end 74 years on, every window with it), a monotonic
// clock beyond its write's, a wall clock in 2100 — is not a PASS: the
// value is clamped or its entry left out, a named finding says which,
// and the verdict is unknown.
func TestBuildClampsImpossible(t *testing.T) {
	y2100 := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, finding string
		spoil         func(rec *observe.Recording)
	}{
		{"ttl", "impossible-ttl", func(rec *observe.Recording) {
			for i := range rec.Entries {
				rec.Entries[i].TTL = math.MaxInt64
			}
		}},
		{"wait", "impossible-ttl", func(rec *observe.Recording) { rec.Entries[3].Wait = -time.Second }},
		{"redis-time", "impossible-time", func(rec *observe.Recording) { rec.Entries[4].Redis = y2100 }},
		{"redis-time-killed", "impossible-time", func(rec *observe.Recording) {
			rec.Entries[4].Redis, rec.End, rec.Ended = y2100, time.Time{}, "incomplete: no end line"
		}},
		{"mono", "impossible-clock", func(rec *observe.Recording) { rec.Entries[4].Mono = math.MaxInt64 / 2 }},
		{"wall", "impossible-wall-clock", func(rec *observe.Recording) { rec.Entries[4].Wall, rec.Entries[4].PubWall = y2100, y2100 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := handovers(6, 3)
			clean, err := observe.Build(context.Background(), rec, observe.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if clean.Verdict != model.Pass {
				t.Fatalf("the clean recording: %s %v", clean.Verdict, clean.Reasons)
			}
			for i := range rec.Entries {
				rec.Entries[i].StreamID = streamID(rec.Entries[i].Redis)
			}
			tc.spoil(rec)
			res, err := observe.Build(context.Background(), rec, observe.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict == model.Pass {
				t.Errorf("verdict pass on impossible data (%s)", tc.finding)
			}
			if !strings.Contains(strings.Join(res.Reasons, "\n"), tc.finding) {
				t.Errorf("reasons %q: want the finding %s named", res.Reasons, tc.finding)
			}
			named := false
			for _, n := range res.Observed.Notes {
				named = named || strings.HasPrefix(n, tc.finding+": ")
			}
			if !named {
				t.Errorf("notes %q: want one beginning %q", res.Observed.Notes, tc.finding+": ")
			}
			if res.Analysis.End > time.Hour || res.Elapsed > time.Hour {
				t.Errorf("the end is %v (elapsed %v) after the start: an impossible time moved it", res.Analysis.End, res.Elapsed)
			}
			if p := res.Params; p.TTL > observe.MaxTTL || p.Wait > observe.MaxTTL || p.TTL <= 0 {
				t.Errorf("params TTL %v, Wait %v: want them within (0, %v]", p.TTL, p.Wait, observe.MaxTTL)
			}
			for _, oi := range res.Observed.Instances {
				if oi.ClockOffset.Abs() > time.Hour {
					t.Errorf("instance %s: clock offset %v from an impossible wall clock", oi.ID, oi.ClockOffset)
				}
			}
		})
	}
}

// streamID is the stream entry ID Redis gives an entry added at t.
func streamID(t time.Time) string {
	return strconv.FormatInt(t.UnixMilli(), 10) + "-0"
}

// TestWatchCountsDropped: stream entries the watch cannot read (another
// format version, an unknown transition, a field that is not a number)
// are counted with their reasons — in the recording, read back the same,
// in the report's notes and reasons and the headline — and the verdict is
// not a pass: a transition among them would be missing. They used to be
// skipped without a word.
func TestWatchCountsDropped(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	ctx := context.Background()
	group := t.Name()
	var file lockedBuffer
	wctx, cancel := context.WithCancel(ctx)
	got := make(chan *observe.Recording, 1)
	started := make(chan struct{})
	go func() {
		rec, err := observe.Watch(wctx, observe.Options{Redis: redistest.ClientAt(t, addr), Group: group, Interval: 20 * time.Millisecond,
			Record: observe.NewWriter(&file), OnStart: func(observe.Header) { close(started) }})
		if err != nil {
			t.Error(err)
			close(started)
		}
		got <- rec
	}()
	<-started
	m := startMember(t, addr, group, 300*time.Millisecond, 100*time.Millisecond)
	waitFor(t, 2*time.Second, "a leader", m.e.IsLeader)
	for _, v := range []map[string]any{
		{"v": "2", "kind": "promoted"},
		{"v": "2", "kind": "demoted"},
		{"v": "1", "kind": "exploded", "id": "x"},
		{"v": "1", "kind": "promoted", "id": "x", "term": "soon"},
	} {
		if err := admin.XAdd(ctx, &redis.XAddArgs{Stream: publish.StreamKey(group), Values: v}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, "the watch reading the bad entries", func() bool { return strings.Count(file.String(), `"dropped":`) == 4 })
	cancel()
	rec := <-got
	if n := rec.DroppedEntries(); n != 4 {
		t.Fatalf("dropped %d (%v), want 4", n, rec.Dropped)
	}
	back, err := observe.ReadRecording(ctx, strings.NewReader(file.String()), "observed.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Dropped, rec.Dropped) {
		t.Fatalf("read back: dropped %v, want %v", back.Dropped, rec.Dropped)
	}
	res, err := observe.Build(ctx, back, observe.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == model.Pass {
		t.Errorf("verdict pass with 4 entries unread")
	}
	var b strings.Builder
	observe.Headline(&b, res)
	out := b.String() + strings.Join(res.Observed.Notes, "\n")
	for _, want := range []string{"4 entries dropped: ", `2 format version "2", want "1"`, `1 field kind: unknown transition "exploded"`, `1 field term: `} {
		if !strings.Contains(out, want) {
			t.Errorf("headline and notes:\n%s\nwant %q", out, want)
		}
	}
}
