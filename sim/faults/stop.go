package faults

import (
	"context"

	"github.com/leaselab/leaselab/model"
)

// A stop stops its targets gracefully (SIGTERM: the leader demotes, then
// releases the key); with Restart its heal starts each again with a new id
// once it is down (crash.go's restart).
func init() {
	register(model.FaultStop, kind{
		apply: func(_ context.Context, d *Driver, a *active) error {
			for _, i := range a.targets {
				d.w.Stop(i)
			}
			return nil
		},
		heal: restart,
	})
}
