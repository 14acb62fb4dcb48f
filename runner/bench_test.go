package runner

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkThroughput measures end to end: dispatch b.N no-op tasks from 8
// goroutines and wait until all have completed, with 1 and 3 instances on
// one Redis. Reported as tasks/s.
//
//	go test -run '^$' -bench Throughput -benchtime 20000x ./runner/
func BenchmarkThroughput(b *testing.B) {
	for _, n := range []int{1, 3} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			f := newFleet(b)
			var done atomic.Int64
			cfg := f.config(map[string]Task{"noop": {Handler: func(context.Context, []byte) error {
				done.Add(1)
				return nil
			}}})
			cfg.Workers = 8
			cfg.OnEvent = nil
			cfg.ChoreInterval = time.Second
			for range n {
				f.start(cfg)
			}
			const producers = 8
			payload := []byte("payload")
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					for i := p; i < b.N; i += producers {
						if _, err := f.runners[i%n].Dispatch(context.Background(), "noop", payload); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			for done.Load() < int64(b.N) {
				time.Sleep(time.Millisecond)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "tasks/s")
		})
	}
}
