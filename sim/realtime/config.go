package realtime

import (
	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/model"
)

// RedisOptions are the client options every instance uses, from the run's
// parameters (zero values keep go-redis's defaults), dialing addr directly;
// a spawner that passes the traffic through a gate of its own sets Dialer.
func RedisOptions(p model.ClientParams, addr string) *redis.Options {
	return &redis.Options{
		Addr:                  addr,
		ReadTimeout:           p.ReadTimeout,
		WriteTimeout:          p.WriteTimeout,
		DialTimeout:           p.DialTimeout,
		MaxRetries:            p.MaxRetries,
		ContextTimeoutEnabled: p.ContextTimeoutEnabled,
		PoolSize:              p.PoolSize,
	}
}

// ElectionOpts are the elector options an instance (or `chaos agent`) runs
// with, before its clock, jitter source and key are set.
func ElectionOpts(p model.Params, rdb redis.Scripter) election.Opts {
	return election.Opts{
		Redis:      rdb,
		TTL:        p.TTL,
		Wait:       p.Wait,
		JitterMS:   max(p.JitterMS, 0), // negative: none
		OpTimeout:  p.OpTimeout,
		Safe:       p.Safe,
		SafeMargin: p.SafeMargin,
	}
}
