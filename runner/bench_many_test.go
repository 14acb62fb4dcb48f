package runner

import (
	"context"

	"github.com/redis/go-redis/v9"
)

type redisXAddArgs = redis.XAddArgs

// benchDispatchMany is the batch producer of the benchmarks.
func benchDispatchMany(ctx context.Context, r *Runner, task string, payloads [][]byte) error {
	_, err := r.DispatchMany(ctx, task, payloads)
	return err
}
