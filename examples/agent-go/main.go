// Command agent-go is a user's service — an elector-driven job that works
// only while it leads — made a leaselab agent by the lines marked "agent".
// Run it under the harness:
//
//	go build -o /tmp/agent-go ./examples/agent-go
//	chaos run leader-crash --backend process --agent /tmp/agent-go
//
// The harness gives it its Redis address (its own proxy) and the lease name
// in the environment; a service reads its own configuration as it does in
// production and only needs to put these in.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/election"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "agent-go:", err)
		os.Exit(1)
	}
}

// ms reads a duration in (possibly fractional) milliseconds.
func ms(name string, def time.Duration) time.Duration {
	f, err := strconv.ParseFloat(os.Getenv(name), 64)
	if err != nil {
		return def
	}
	return time.Duration(f * float64(time.Millisecond))
}

func run() error {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)) // stderr is the agent's log
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()

	db, _ := strconv.Atoi(os.Getenv("LEASELAB_REDIS_DB"))
	rdb := redis.NewClient(&redis.Options{
		Addr:        os.Getenv("LEASELAB_REDIS_ADDR"),
		Username:    os.Getenv("LEASELAB_REDIS_USERNAME"),
		Password:    os.Getenv("LEASELAB_REDIS_PASSWORD"),
		DB:          db,
		ReadTimeout: ms("LEASELAB_READ_TIMEOUT_MS", 0),
	})
	defer rdb.Close()
	ag := agent.New(agent.Options{Name: "agent-go", OnStop: cancel, Safe: true}) // agent

	// The leader's job: it works only while the service leads.
	var leading atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		work := time.NewTicker(100 * time.Millisecond)
		defer work.Stop()
		for {
			select {
			case <-work.C:
				if leading.Load() {
					log.Debug("leader's job tick")
				}
			case <-done:
				return
			}
		}
	}()

	// agent: runs the elector until SIGTERM or the stop command (a graceful
	// stop: step down, release, say stopped) or until the harness is gone.
	return ag.RunElector(ctx, election.Opts{
		Redis:    rdb,
		Key:      os.Getenv("LEASELAB_GROUP"),
		TTL:      ms("LEASELAB_TTL_MS", 5*time.Second),
		Wait:     ms("LEASELAB_WAIT_MS", 6*time.Second),
		JitterMS: int(ms("LEASELAB_JITTER_MS", 5*time.Millisecond) / time.Millisecond),
		Safe:     os.Getenv("LEASELAB_SAFE") == "1",
	}, agent.Service{
		Promoted: func() {
			leading.Store(true)
			log.Info("promoted: starting the leader's job")
		},
		Demoted: func() {
			leading.Store(false)
			log.Info("demoted: stopping the leader's job")
		},
		Error: func(err error) { log.Warn("election error", "err", err) },
	})
}
