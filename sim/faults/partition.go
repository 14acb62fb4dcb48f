package faults

import (
	"context"
	"fmt"

	"github.com/leaselab/leaselab/model"
)

// A partition cuts its targets' links to Redis in its mode (blackhole both
// ways, the requests or the replies; refuse; reset) until its heal.
func init() {
	register(model.FaultPartition, kind{
		apply: func(_ context.Context, d *Driver, a *active) error {
			for j, i := range a.targets {
				if err := d.w.Partition(i, a.id, a.f.Mode, true); err != nil {
					return err
				}
				a.acted = a.targets[:j+1] // a prefix: no allocation
			}
			return nil
		},
		heal: func(d *Driver, a *active) {
			for _, i := range a.acted {
				if err := d.w.Partition(i, a.id, a.f.Mode, false); err != nil {
					d.w.Fail(fmt.Errorf("healing a partition: %w", err))
				}
			}
		},
	})
}
