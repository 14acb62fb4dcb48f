package election_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redisserver"
)

// exampleRedis returns LEASELAB_REDIS_ADDR or a freshly spawned redis-server.
func exampleRedis() (addr string, stop func()) {
	if a := os.Getenv("LEASELAB_REDIS_ADDR"); a != "" {
		return a, func() {}
	}
	srv, err := redisserver.Start(context.Background(), redisserver.Options{})
	if err != nil {
		log.Fatal(err)
	}
	return srv.Addr, srv.Stop
}

// The spec's standalone snippet, unchanged but for the Redis address and a
// reader that returns at the demotion Stop emits.
func Example() {
	addr, stopRedis := exampleRedis()
	defer stopRedis()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()

	elector, onPromote, onDemote, onError := election.NewElector(election.Opts{
		Redis:    rdb,
		Key:      "my-app-coordinator",
		TTL:      5 * time.Second,
		Wait:     6 * time.Second,
		JitterMS: 5,
	})
	promoted, demoted := make(chan struct{}), make(chan struct{})
	go func() {
		for {
			select {
			case <-onPromote:
				fmt.Println("I am now the leader")
				close(promoted)
			case <-onDemote:
				fmt.Println("I am no longer the leader")
				close(demoted)
				return
			case err := <-onError:
				log.Println("election error:", err)
			}
		}
	}()
	elector.Start()
	defer elector.Stop()

	<-promoted
	fmt.Println("lease key:", elector.Key())
	elector.Stop() // delivers the demotion before it returns
	<-demoted
	// Output:
	// I am now the leader
	// lease key: taskrunner:leader:ECOIULZN7TPW3JFMC3LZ42VJAEOWE6U4
	// I am no longer the leader
}
