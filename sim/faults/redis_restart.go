package faults

import (
	"context"

	"github.com/leaselab/leaselab/model"
)

// A redis-restart restarts Redis empty (no persistence: the key and the
// script cache are gone, every connection drops). Its span is Redis's
// downtime: it is healed when Redis serves again.
func init() {
	register(model.FaultRedisRestart, kind{
		apply: func(ctx context.Context, d *Driver, a *active) error {
			return d.w.RestartRedis(ctx, a.done)
		},
		async: true,
	})
}
