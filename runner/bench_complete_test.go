package runner

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkCompleteScript measures the Redis CPU of acknowledging (and
// deleting) completed entries in batches of 1, 8 and 64, as the acker does,
// while as many newer entries stay pending (running or read ahead): the
// script's own time from INFO commandstats, per entry (redis-us/entry).
func BenchmarkCompleteScript(b *testing.B) {
	for _, batch := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			rdb := redistest.ClientAt(b, redistest.Start(b).Addr)
			k := keysFor("g")
			if err := rdb.XGroupCreateMkStream(ctx, k.stream, "g", "0").Err(); err != nil {
				b.Fatal(err)
			}
			var pending []string
			add := func(n int) {
				pipe := rdb.Pipeline()
				for range n {
					pipe.XAdd(ctx, &redis.XAddArgs{Stream: k.stream, Values: []any{"id", newTaskID(), "task", "t", "payload", "0123456789abcdef", "attempt", "1"}})
				}
				if _, err := pipe.Exec(ctx); err != nil {
					b.Fatal(err)
				}
				res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{k.stream, ">"}, Count: int64(n)}).Result()
				if err != nil {
					b.Fatal(err)
				}
				for _, m := range res[0].Messages {
					pending = append(pending, m.ID)
				}
			}
			add(batch)
			if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for done := 0; done < b.N; done += batch {
				add(batch)
				args := []any{"g", batch}
				for _, id := range pending[:batch] {
					args = append(args, id, "t", 1)
				}
				if err := completeScript.Run(ctx, rdb, []string{k.stream, k.metricsN, k.metricsUS}, args...).Err(); err != nil {
					b.Fatal(err)
				}
				pending = pending[batch:]
			}
			b.StopTimer()
			stats, err := rdb.Info(ctx, "commandstats").Result()
			if err != nil {
				b.Fatal(err)
			}
			_, rest, _ := strings.Cut(stats, "cmdstat_evalsha:calls=")
			_, rest, _ = strings.Cut(rest, "usec=")
			us, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
			b.ReportMetric(float64(us)/float64(b.N), "redis-us/entry")
			b.ReportMetric(0, "ns/op")
		})
	}
}
