package runner

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The throughput benchmarks. Each reports tasks/s and, beside it, the p50 and
// p99 latency from dispatch (the payload carries the time it was made) to
// handler start, in ms. Instances have 8 workers each and share one
// redis-server; the handler is a no-op or sleeps 1 ms. With the 1 ms handler
// they also report pct-of-limit: tasks/s against the worker-bound limit,
// instances × workers ÷ the handler's measured mean time. Every benchmark also
// reports the CPU time per task of the Go process (go-us/task: the runners,
// the producer and the benchmark's own bookkeeping) and of the redis-server
// (redis-us/task, from INFO cpu), which share the machine: unlike tasks/s,
// they hardly depend on what else the machine runs.
//
//	go test -run '^$' -bench 'Drain|Live|Dispatch' -benchtime 20000x ./runner/
//
// Drain: b.N tasks are queued first (pipelined XADDs), then the instances
// start and the clock runs until the last one completed. Live: the instances
// run first and one producer dispatches b.N tasks, either one Dispatch at a
// time (single) or in DispatchMany batches of 100 (many).

const benchWorkers = 8

// benchHandlers are the handlers the benchmarks run.
var benchHandlers = []struct {
	name  string
	sleep time.Duration
}{{"noop", 0}, {"1ms", time.Millisecond}}

// benchLoad is one benchmark's bookkeeping: per-task latencies, completions,
// handler time.
type benchLoad struct {
	lat     []int64 // ns from dispatch to handler start, one per start
	n       atomic.Int64
	done    atomic.Int64
	busyNS  atomic.Int64
	started time.Time

	rdb               *redis.Client // the benchmark's Redis, for its CPU time
	goCPU0, redisCPU0 time.Duration
}

func newBenchLoad(b *testing.B, addr string, n int) *benchLoad {
	return &benchLoad{lat: make([]int64, n), rdb: dial(b, addr)}
}

// start starts the clocks: wall time, and the CPU time of both processes.
func (l *benchLoad) start(b *testing.B) {
	b.ResetTimer()
	l.goCPU0, l.redisCPU0 = processCPU(b), redisCPU(b, l.rdb)
	l.started = time.Now()
}

// processCPU returns the CPU time (user + system) this process used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisCPU returns the CPU time (user + system) the redis-server used so far.
func redisCPU(b *testing.B, rdb *redis.Client) time.Duration {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for line := range strings.SplitSeq(info, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		if k == "used_cpu_sys" || k == "used_cpu_user" {
			s, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatal(err)
			}
			total += time.Duration(s * 1e9)
		}
	}
	return total
}

// payload returns a payload stamped with the current time.
func benchPayload() []byte {
	p := make([]byte, 16)
	binary.BigEndian.PutUint64(p, uint64(time.Now().UnixNano()))
	copy(p[8:], "payload!")
	return p
}

func (l *benchLoad) handler(sleep time.Duration) Handler {
	return func(_ context.Context, p []byte) error {
		now := time.Now()
		if i := l.n.Add(1) - 1; i < int64(len(l.lat)) {
			l.lat[i] = now.UnixNano() - int64(binary.BigEndian.Uint64(p))
		}
		if sleep > 0 {
			time.Sleep(sleep)
			l.busyNS.Add(int64(time.Since(now)))
		}
		l.done.Add(1)
		return nil
	}
}

// wait waits until every task completed, then reports.
func (l *benchLoad) wait(b *testing.B, instances int, sleep time.Duration) {
	for l.done.Load() < int64(b.N) {
		time.Sleep(100 * time.Microsecond)
	}
	el := time.Since(l.started)
	b.StopTimer()
	goCPU, redisCPU := processCPU(b)-l.goCPU0, redisCPU(b, l.rdb)-l.redisCPU0
	rate := float64(b.N) / el.Seconds()
	b.ReportMetric(rate, "tasks/s")
	b.ReportMetric(float64(goCPU.Microseconds())/float64(b.N), "go-us/task")
	b.ReportMetric(float64(redisCPU.Microseconds())/float64(b.N), "redis-us/task")
	n := min(int(l.n.Load()), len(l.lat))
	lat := slices.Clone(l.lat[:n])
	slices.Sort(lat)
	if n > 0 {
		b.ReportMetric(float64(lat[n/2])/1e6, "p50-ms")
		b.ReportMetric(float64(lat[min(n-1, n*99/100)])/1e6, "p99-ms")
	}
	if sleep > 0 && l.done.Load() > 0 {
		mean := float64(l.busyNS.Load()) / float64(l.done.Load()) / 1e9
		limit := float64(instances*benchWorkers) / mean
		b.ReportMetric(100*rate/limit, "pct-of-limit")
	}
	b.ReportMetric(0, "ns/op")
}

// benchFleet starts the fleet's instances with handler h.
func benchConfig(f *fleet, h Handler) Options {
	cfg := f.config(map[string]Task{"t": {Handler: h}})
	cfg.Workers = benchWorkers
	cfg.MinWorkers, cfg.MaxWorkers = benchWorkers, benchWorkers // a fixed worker-bound limit
	cfg.OnEvent = nil
	cfg.ChoreInterval = time.Second
	return cfg
}

func BenchmarkDrain(b *testing.B) {
	for _, k := range []int{1, 3} {
		for _, h := range benchHandlers {
			b.Run(fmt.Sprintf("K=%d/%s", k, h.name), func(b *testing.B) {
				f := newFleet(b)
				l := newBenchLoad(b, f.addr, b.N)
				cfg := benchConfig(f, l.handler(h.sleep))
				rdb := l.rdb
				stream := keysFor(cfg.Group).stream
				for lo := 0; lo < b.N; lo += 1000 {
					pipe := rdb.Pipeline()
					for i := lo; i < min(lo+1000, b.N); i++ {
						pipe.XAdd(context.Background(), &redisXAddArgs{Stream: stream,
							Values: []any{"id", fmt.Sprint("t", i), "task", "t", "payload", benchPayload(), "attempt", "1"}})
					}
					if _, err := pipe.Exec(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				l.start(b)
				for range k {
					f.start(cfg)
				}
				l.wait(b, k, h.sleep)
			})
		}
	}
}

func BenchmarkLive(b *testing.B) {
	for _, mode := range []string{"single", "many"} {
		for _, k := range []int{1, 3} {
			for _, h := range benchHandlers {
				b.Run(fmt.Sprintf("%s/K=%d/%s", mode, k, h.name), func(b *testing.B) {
					f := newFleet(b)
					l := newBenchLoad(b, f.addr, b.N)
					cfg := benchConfig(f, l.handler(h.sleep))
					for range k {
						f.start(cfg)
					}
					producer := f.runners[0].Runner
					ctx := context.Background()
					l.start(b)
					var wg sync.WaitGroup
					wg.Go(func() {
						if mode == "single" {
							for range b.N {
								if _, err := producer.Dispatch(ctx, "t", benchPayload()); err != nil {
									b.Error(err)
									return
								}
							}
							return
						}
						for lo := 0; lo < b.N; lo += 100 {
							ps := make([][]byte, min(100, b.N-lo))
							for i := range ps {
								ps[i] = benchPayload()
							}
							if err := benchDispatchMany(ctx, producer, "t", ps); err != nil {
								b.Error(err)
								return
							}
						}
					})
					wg.Wait()
					l.wait(b, k, h.sleep)
				})
			}
		}
	}
}

// BenchmarkDispatch measures one producer with no instance running: single
// Dispatch (ns/op is its latency) and DispatchMany in batches of 100 and
// 1,000 (tasks/s).
func BenchmarkDispatch(b *testing.B) {
	b.Run("single", func(b *testing.B) {
		f := newFleet(b)
		r, err := New(dial(b, f.addr), benchConfig(f, func(context.Context, []byte) error { return nil }))
		if err != nil {
			b.Fatal(err)
		}
		p := benchPayload()
		b.ResetTimer()
		for range b.N {
			if _, err := r.Dispatch(context.Background(), "t", p); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
	})
	for _, batch := range []int{100, 1000} {
		b.Run(fmt.Sprintf("many=%d", batch), func(b *testing.B) {
			f := newFleet(b)
			r, err := New(dial(b, f.addr), benchConfig(f, func(context.Context, []byte) error { return nil }))
			if err != nil {
				b.Fatal(err)
			}
			ps := make([][]byte, batch)
			for i := range ps {
				ps[i] = benchPayload()
			}
			b.ResetTimer()
			for lo := 0; lo < b.N; lo += batch {
				if err := benchDispatchMany(context.Background(), r, "t", ps[:min(batch, b.N-lo)]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
