// Command elector runs three electors on one lease against a real Redis and
// prints what happens: who wins, and how long the others take to fail over
// when the leader stops gracefully and when it dies without releasing.
//
//	go run ./examples/elector
//
// It spawns its own redis-server on a free loopback port, or uses
// LEASELAB_REDIS_ADDR.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redisserver"
	"github.com/redis/go-redis/v9"
)

const (
	ttl  = time.Second
	wait = 1200 * time.Millisecond
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "elector:", err)
		os.Exit(1)
	}
}

type instance struct {
	name string
	rdb  *redis.Client
	e    *election.Elector
}

func run() error {
	addr := os.Getenv("LEASELAB_REDIS_ADDR")
	if addr == "" {
		srv, err := redisserver.Start(context.Background(), redisserver.Options{})
		if err != nil {
			return fmt.Errorf("%w (or set LEASELAB_REDIS_ADDR=host:port)", err)
		}
		defer srv.Stop()
		addr = srv.Addr
	}
	fmt.Printf("Redis %s, TTL %v, Wait %v\n", addr, ttl, wait)
	start := time.Now()
	var all []*instance
	for _, name := range []string{"a", "b", "c"} {
		in := &instance{name: name, rdb: redis.NewClient(&redis.Options{Addr: addr})}
		e, promote, demote, errs := election.NewElector(election.Opts{Redis: in.rdb, Key: "demo", TTL: ttl, Wait: wait, JitterMS: 5})
		in.e = e
		go func() {
			for {
				select {
				case at := <-promote:
					fmt.Printf("%8v  %s promoted\n", at.Sub(start).Round(time.Millisecond), name)
				case at := <-demote:
					fmt.Printf("%8v  %s demoted\n", at.Sub(start).Round(time.Millisecond), name)
				case err := <-errs:
					fmt.Printf("%8v  %s error: %v\n", time.Since(start).Round(time.Millisecond), name, err)
				}
			}
		}()
		e.Start()
		all = append(all, in)
		defer func() { _ = in.e.Stop(); _ = in.rdb.Close() }()
	}
	leader := func() *instance {
		deadline := time.Now().Add(ttl + 2*wait)
		for time.Now().Before(deadline) {
			for _, in := range all {
				if in.e.IsLeader() {
					return in
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		return nil
	}
	l := leader()
	if l == nil {
		return fmt.Errorf("no leader within TTL + 2×Wait")
	}
	time.Sleep(2 * ttl)

	fmt.Printf("%8v  %s stops gracefully (releases the lease)\n", time.Since(start).Round(time.Millisecond), l.name)
	t0 := time.Now()
	if err := l.e.Stop(); err != nil {
		return err
	}
	l = leader()
	if l == nil {
		return fmt.Errorf("no new leader after a graceful stop")
	}
	fmt.Printf("          failover took %v (bound: Wait = %v)\n", time.Since(t0).Round(time.Millisecond), wait)
	time.Sleep(2 * ttl)

	fmt.Printf("%8v  %s dies (its client is closed; no release)\n", time.Since(start).Round(time.Millisecond), l.name)
	t0 = time.Now()
	_ = l.rdb.Close()
	old := l
	deadline := time.Now().Add(ttl + 2*wait)
	for {
		if l = leader(); l != nil && l != old {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no new leader after the leader died")
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Printf("          failover took %v (spec's worst case: TTL + Wait = %v)\n", time.Since(t0).Round(time.Millisecond), ttl+wait)
	return nil
}
