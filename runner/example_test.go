package runner_test

import (
	"context"
	"log"
	"time"

	"github.com/leaselab/leaselab/runner"
	"github.com/redis/go-redis/v9"
)

// A minimal runner: one task, a dispatch, a delayed dispatch. (Compiled, not
// run: it needs a Redis.)
func Example() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()

	r, err := runner.New(rdb, runner.Options{
		Group: "emails",
		Tasks: map[string]runner.Task{
			"send": {
				Handler: func(ctx context.Context, payload []byte) error {
					log.Printf("sending %s (task %s)", payload, runner.TaskID(ctx))
					return nil
				},
				MaxRetries: 5,
				Timeout:    10 * time.Second,
			},
		},
		OnEvent: func(e runner.Event) {
			if e.Kind == runner.EventLeadership {
				log.Printf("leader: %v", e.Leader)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		log.Fatal(err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := r.Stop(stopCtx); err != nil {
			log.Print(err)
		}
	}()

	if _, err := r.Dispatch(ctx, "send", []byte(`{"to":"a@example.com"}`)); err != nil {
		log.Fatal(err)
	}
	if _, err := r.DispatchDelayed(ctx, "send", []byte(`{"to":"b@example.com"}`), time.Minute); err != nil {
		log.Fatal(err)
	}
}
