package faults

import (
	"context"

	"github.com/leaselab/leaselab/model"
)

// A redis-failover promotes a replica of the node that serves the lease,
// after holding its replication back for Lag (a lossy failover) or not (a
// clean one). Its span ends at the switch, when the promoted node serves:
// the time the replica's copy of the lease had to outlive
// (model.FaultSize.Failover), not the topology's settling that follows.
func init() {
	register(model.FaultRedisFailover, kind{
		apply: func(ctx context.Context, d *Driver, a *active) error {
			return d.w.Failover(ctx, a.f.Lag, a.done)
		},
		async: true,
	})
}
