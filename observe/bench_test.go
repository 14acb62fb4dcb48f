package observe_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/observe"
	"github.com/leaselab/leaselab/publish"
	"github.com/leaselab/leaselab/reports"
)

// entryCounter is a recording sink that counts the entry lines written
// and notes when the n-th came, as a file would take them.
type entryCounter struct {
	tail   []byte // the end of the last write: a line may be split across writes
	n      atomic.Int64
	want   int64
	doneAt atomic.Int64 // unix ns
	done   chan struct{}
}

var entryMark = []byte(`{"entry":`)

func (c *entryCounter) Write(p []byte) (int, error) {
	buf := append(c.tail, p...)
	k := int64(bytes.Count(buf, entryMark))
	c.tail = append([]byte(nil), buf[max(0, len(buf)-len(entryMark)+1):]...)
	if k > 0 && c.n.Add(k) >= c.want && c.doneAt.CompareAndSwap(0, time.Now().UnixNano()) {
		close(c.done)
	}
	return len(p), nil
}

// fleet is 1,000 publishers, one per instance as production has them,
// sharing 8 clients.
func fleet(b *testing.B, addr string, maxLen int64) []*publish.Publisher {
	clients := make([]*redis.Client, 8)
	for i := range clients {
		clients[i] = redistest.ClientAt(b, addr)
	}
	pubs := make([]*publish.Publisher, 1000)
	for i := range pubs {
		p, err := publish.New(publish.Options{Redis: clients[i%len(clients)], Buffer: 1 << 14, MaxLen: maxLen})
		if err != nil {
			b.Fatal(err)
		}
		pubs[i] = p
	}
	return pubs
}

// publishN spreads n transitions over the fleet and closes it (every
// transition written).
func publishN(b *testing.B, pubs []*publish.Publisher, group string, n int) {
	tr := election.Transition{Kind: election.Promoted, At: time.Now(), Key: group, TTL: time.Second, Wait: time.Second}
	for i := range n {
		t := tr
		t.ID = "instance-" + string(rune('a'+i%26))
		pubs[i%len(pubs)].Observe(t)
	}
	for _, p := range pubs {
		if err := p.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// heapPeak samples the heap in use every 50ms until stop is closed.
func heapPeak(stop <-chan struct{}) func() uint64 {
	var peak atomic.Uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
			case <-stop:
				return
			}
		}
	}()
	return func() uint64 { wg.Wait(); return peak.Load() }
}

// watchCounting starts a watch of group whose recording goes to a counter
// of b.N entries, with MaxEntries 10,000: the watch's memory is bounded
// whatever the stream's length.
func watchCounting(b *testing.B, addr, group string) (*entryCounter, func() *observe.Recording) {
	c := &entryCounter{want: int64(b.N), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan *observe.Recording, 1)
	started := make(chan struct{})
	obs := redistest.ClientAt(b, addr)
	go func() {
		rec, err := observe.Watch(ctx, observe.Options{Redis: obs, Group: group, MaxEntries: 10_000,
			Record: observe.NewWriter(c), OnStart: func(observe.Header) { close(started) }})
		if err != nil {
			b.Error(err)
			close(started)
		}
		got <- rec
	}()
	<-started
	return c, func() *observe.Recording { cancel(); return <-got }
}

// BenchmarkFollow1000 measures how fast a watch reads the transitions of a
// 1,000-instance fleet, with its memory bounded (MaxEntries 10,000; the
// recording streamed out as to a file), b.N entries in all:
//
//   - backlog: the fleet has written b.N entries before the watch starts,
//     so the figure is the watch's own capacity (read/s);
//
//   - live: the fleet writes as fast as Redis takes it while the watch
//     follows; written/s is the fleet's pace on this machine, read/s the
//     watch's, lag how long after the last write it had read everything,
//     missed what the stream's MAXLEN trimmed before it was read.
//
//   - replay: a live stream at a steady pace (the fleet's is a burst, and
//     on a busy shared machine a slow one): the fleet's own entries (written first to a
//     stream of their own) are copied with pipelined XADDs to the watched
//     stream, capped at MAXLEN ~10,000 as production's is, every 10ms a
//     batch, at replay-rate entries/s. behind-max is the most entries
//     written and not yet read at a 10ms sample: with the cap, falling
//     10,000 behind loses entries (missed).
//
// peak-heap-MiB is the process's heap at its peak during the watch (the
// fleet's buffers included in live).
func BenchmarkFollow1000(b *testing.B) {
	addr := redistest.Addr(b)
	b.Run("backlog", func(b *testing.B) {
		group := fmt.Sprintf("%s-%d-%d", b.Name(), b.N, time.Now().UnixNano()) // a stream of its own
		publishN(b, fleet(b, addr, int64(b.N)+1000), group, b.N)
		runtime.GC()
		stop := make(chan struct{})
		peak := heapPeak(stop)
		b.ResetTimer()
		start := time.Now()
		c, end := watchCounting(b, addr, group)
		select {
		case <-c.done:
		case <-time.After(5*time.Second + time.Duration(b.N)*200*time.Microsecond): // 5,000 entries/s at least
			b.Fatalf("read %d of %d", c.n.Load(), b.N)
		}
		took := time.Unix(0, c.doneAt.Load()).Sub(start)
		b.StopTimer()
		end()
		close(stop)
		b.ReportMetric(float64(b.N)/took.Seconds(), "read/s")
		b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("live", func(b *testing.B) {
		group := fmt.Sprintf("%s-%d-%d", b.Name(), b.N, time.Now().UnixNano())
		pubs := fleet(b, addr, 0)
		runtime.GC()
		stop := make(chan struct{})
		peak := heapPeak(stop)
		c, end := watchCounting(b, addr, group)
		b.ResetTimer()
		start := time.Now()
		publishN(b, pubs, group, b.N)
		written := time.Since(start)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second): // entries trimmed before they were read never come
		}
		b.StopTimer()
		end()
		close(stop)
		read := c.n.Load()
		last := time.Since(start)
		if at := c.doneAt.Load(); at != 0 {
			last = time.Unix(0, at).Sub(start)
		}
		b.ReportMetric(float64(b.N)/written.Seconds(), "written/s")
		b.ReportMetric(float64(read)/last.Seconds(), "read/s")
		// 0 when everything was read before the fleet's Close returned.
		b.ReportMetric(float64(max(last-written, 0))/float64(time.Millisecond), "lag-ms")
		b.ReportMetric(float64(int64(b.N)-read), "missed")
		b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(0, "ns/op")
	})
	b.Run("replay", func(b *testing.B) {
		ctx := context.Background()
		src := fmt.Sprintf("%s-src-%d-%d", b.Name(), b.N, time.Now().UnixNano())
		group := fmt.Sprintf("%s-%d-%d", b.Name(), b.N, time.Now().UnixNano())
		publishN(b, fleet(b, addr, int64(b.N)+1000), src, b.N)
		rdb := redistest.ClientAt(b, addr)
		runtime.GC()
		stop := make(chan struct{})
		peak := heapPeak(stop)
		c, end := watchCounting(b, addr, group)
		const batch = 10 * time.Millisecond
		per := max(1, replayRate*int(batch)/int(time.Second))
		var behind int64
		b.ResetTimer()
		start := time.Now()
		tick := time.NewTicker(batch)
		written, last := 0, "-"
		for written < b.N {
			n := min(per, b.N-written)
			msgs, err := rdb.XRangeN(ctx, publish.StreamKey(src), last, "+", int64(n)+1).Result()
			if err != nil {
				b.Fatal(err)
			}
			if last != "-" && len(msgs) > 0 && msgs[0].ID == last {
				msgs = msgs[1:]
			}
			msgs = msgs[:min(n, len(msgs))]
			if len(msgs) == 0 {
				b.Fatalf("the source stream ran out after %d of %d", written, b.N)
			}
			pipe := rdb.Pipeline()
			for _, m := range msgs {
				pipe.XAdd(ctx, &redis.XAddArgs{Stream: publish.StreamKey(group), MaxLen: publish.DefaultMaxLen, Approx: true, Values: m.Values})
			}
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
			written += len(msgs)
			last = msgs[len(msgs)-1].ID
			behind = max(behind, int64(written)-c.n.Load())
			<-tick.C
		}
		tick.Stop()
		took := time.Since(start)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second): // entries trimmed before they were read never come
		}
		b.StopTimer()
		end()
		close(stop)
		read := c.n.Load()
		done := time.Since(start)
		if at := c.doneAt.Load(); at != 0 {
			done = time.Unix(0, at).Sub(start)
		}
		b.ReportMetric(float64(b.N)/took.Seconds(), "written/s")
		b.ReportMetric(float64(read)/done.Seconds(), "read/s")
		b.ReportMetric(float64(behind), "behind-max")
		b.ReportMetric(float64(max(done-took, 0))/float64(time.Millisecond), "lag-ms")
		b.ReportMetric(float64(int64(b.N)-read), "missed")
		b.ReportMetric(float64(peak())/(1<<20), "peak-heap-MiB")
		b.ReportMetric(0, "ns/op")
	})
}

// replayRate is the replay's pace, entries per second: BenchmarkFollow1000/
// replay -replay-rate.
var replayRate = 20_000

func init() {
	flag.IntVar(&replayRate, "replay-rate", replayRate, "BenchmarkFollow1000/replay: entries written per second")
}

// BenchmarkBuild measures Build on recordings of 10,000, 100,000 and
// 1,000,000 transitions of a 3-instance fleet handing the lease over
// (handovers): s/op is one report's build, peak-heap-MiB the heap at its
// peak (sampled every 50ms), the recording included.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rec := handovers(n, 3)
			var peak uint64
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				runtime.GC()
				stop := make(chan struct{})
				heap := heapPeak(stop)
				b.StartTimer()
				res, err := observe.Build(context.Background(), rec, observe.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				close(stop)
				peak = max(peak, heap())
				if want := n/20 - 1; res.Analysis.Summary.Overlaps != want { // the last term's has no successor
					b.Fatalf("%d overlaps, want %d", res.Analysis.Summary.Overlaps, want)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// BenchmarkFrom measures what chaos observe --from does with a recording
// file of 10,000, 100,000 and 1,000,000 transitions (handovers): read it,
// build the report, write the report's files. read-s, build-s and
// write-s are its steps (wall clock), cpu-s the process's CPU time for all
// three (user and system, every thread: on a loaded machine the wall clock
// measures the load as much as the work); peak-heap-MiB the heap at its peak (sampled
// every 50ms), the recording read included.
func BenchmarkFrom(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			path := filepath.Join(dir, "observed.jsonl")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := observe.WriteRecording(f, handovers(n, 3)); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			var read, build, write, cpu time.Duration
			var peak uint64
			b.ResetTimer()
			for range b.N {
				runtime.GC()
				stop := make(chan struct{})
				heap := heapPeak(stop)
				cpu0 := cpuTime(b)
				t0 := time.Now()
				rec, err := observe.ReadRecordingFile(context.Background(), path)
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				res, err := observe.Build(context.Background(), rec, observe.Limits{})
				if err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				if _, err := reports.WriteRun(context.Background(), filepath.Join(dir, "report"), res, reports.Options{}); err != nil {
					b.Fatal(err)
				}
				t3 := time.Now()
				cpu += cpuTime(b) - cpu0
				close(stop)
				peak = max(peak, heap())
				read, build, write = read+t1.Sub(t0), build+t2.Sub(t1), write+t3.Sub(t2)
			}
			b.ReportMetric(read.Seconds()/float64(b.N), "read-s")
			b.ReportMetric(build.Seconds()/float64(b.N), "build-s")
			b.ReportMetric(write.Seconds()/float64(b.N), "write-s")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
