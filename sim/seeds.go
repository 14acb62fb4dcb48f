package sim

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/leaselab/leaselab/model"
)

// Seeds runs sc n times on b with the seeds sc.Seed, sc.Seed+1, …,
// sc.Seed+n-1 (a seed sweep, as chaos run --runs does), workers runs at
// once (0: GOMAXPROCS), and hands each result to each as its run ends: one
// call at a time, in the order the runs end, so each may keep running
// statistics without a lock. It stops starting runs when ctx is done or a
// run cannot start, and returns that run's error, naming its seed; nil
// otherwise (an interrupted sweep is ctx's to report).
func Seeds(ctx context.Context, sc model.Scenario, b Backend, n, workers int, each func(*verdict.Result)) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		mu      sync.Mutex
		errOnce sync.Once
		runErr  error
	)
	for range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || ctx.Err() != nil {
					return
				}
				s := sc
				s.Seed = sc.Seed + i
				res, err := Run(ctx, s, b, Options{})
				if res == nil {
					errOnce.Do(func() { runErr = fmt.Errorf("%s seed %d: %w", sc.Name, s.Seed, err) })
					next.Store(int64(n)) // the others stop too
					return
				}
				mu.Lock()
				each(res)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return runErr
}
