package faults

import (
	"context"

	"github.com/leaselab/leaselab/model"
)

// A slot-migration moves the lease's hash slot (and every key tagged with
// it) to another primary (redis: cluster); it is healed when the migration
// is done.
func init() {
	register(model.FaultSlotMigration, kind{
		apply: func(ctx context.Context, d *Driver, a *active) error {
			return d.w.MigrateSlot(ctx, a.done)
		},
		async: true,
	})
}
