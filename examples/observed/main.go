// Command observed is a service's leader election made observable, as a
// deployment would wire it: an elector that publishes its transitions for
// `chaos observe` (package publish) and serves Prometheus metrics on
// /metrics (package leasemetrics).
//
//	go run ./examples/observed --redis-addr 127.0.0.1:6379 --group my-app --listen 127.0.0.1:9100
//	curl -s 127.0.0.1:9100/metrics | grep leaselab_
//
// Without --redis-addr it spawns its own redis-server (or uses
// LEASELAB_REDIS_ADDR). It runs until Ctrl-C, or for --for.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redisserver"
	"github.com/leaselab/leaselab/leasemetrics"
	"github.com/leaselab/leaselab/publish"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "observed:", err)
		os.Exit(1)
	}
}

// run runs the service until ctx ends or --for passes. listening, if not
// nil, receives the metrics address once it serves.
func run(ctx context.Context, args []string, out io.Writer, listening chan<- string) error {
	fs := flag.NewFlagSet("observed", flag.ContinueOnError)
	addr := fs.String("redis-addr", os.Getenv("LEASELAB_REDIS_ADDR"), "Redis `host:port` (default: spawn a redis-server)")
	group := fs.String("group", "observed-example", "the lease's `name`")
	listen := fs.String("listen", "127.0.0.1:9100", "serve /metrics on `host:port`")
	ttl := fs.Duration("ttl", 5*time.Second, "lease TTL")
	wait := fs.Duration("wait", 6*time.Second, "follower retry interval")
	safe := fs.Bool("safe", false, "safe mode (lease guard, fencing tokens)")
	runFor := fs.Duration("for", 0, "stop after `D` (default: until Ctrl-C)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" {
		srv, err := redisserver.Start(ctx, redisserver.Options{})
		if err != nil {
			return fmt.Errorf("%w (or give --redis-addr)", err)
		}
		defer srv.Stop()
		*addr = srv.Addr
	}
	if *runFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *runFor)
		defer cancel()
	}
	rdb := redis.NewClient(&redis.Options{Addr: *addr})
	defer rdb.Close()

	// Publishing: every transition goes to the group's stream, never
	// blocking the elector.
	pub, err := publish.New(publish.Options{Redis: rdb})
	if err != nil {
		return err
	}
	o := election.Opts{Redis: rdb, Key: *group, TTL: *ttl, Wait: *wait, JitterMS: 5, Safe: *safe,
		OnTransition: pub.Observe}
	// Metrics: the collector chains itself after the publisher.
	metrics, err := leasemetrics.NewElector(leasemetrics.ElectorOptions{Group: *group})
	if err != nil {
		return err
	}
	metrics.Wire(&o, rdb)
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("serving metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(out, "group %q on Redis %s: transitions to %s, metrics on http://%s/metrics\n",
		*group, *addr, publish.StreamKey(*group), ln.Addr())
	if listening != nil {
		listening <- ln.Addr().String()
	}

	e, promote, demote, errs := election.NewElector(o)
	e.Start()
	for done := false; !done; {
		select {
		case <-promote:
			fmt.Fprintln(out, "leading")
		case <-demote:
			fmt.Fprintln(out, "following")
		case err := <-errs:
			fmt.Fprintln(out, "election error:", err)
		case <-ctx.Done():
			done = true
		}
	}
	go func() { // keep reading, so Stop's demotion is received
		for {
			select {
			case <-promote:
			case <-demote:
			case <-e.Done():
				return
			}
		}
	}()
	stopErr := e.Stop()
	cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	pubErr := pub.Close(cctx)
	_ = hs.Shutdown(cctx)
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return errors.Join(stopErr, pubErr, err)
	}
	return errors.Join(stopErr, pubErr)
}
