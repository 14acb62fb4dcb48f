package faults

import (
	"context"
	"fmt"

	"github.com/leaselab/leaselab/model"
)

// A redis-pause pauses Redis's clients (CLIENT PAUSE, mode write or all)
// from its At to its heal: the pause is asked to end at the planned heal
// (HealAt), so that Redis ends it by itself if the harness cannot, and the
// heal unpauses (a write pause at once; an all pause blocks CLIENT UNPAUSE
// too, so it runs out at the same moment). An injection late by L then
// makes a pause L shorter, not one that outlasts its recorded heal by L
// (which the bounds, computed from the recorded span, would miss).
func init() {
	register(model.FaultRedisPause, kind{
		apply: func(ctx context.Context, d *Driver, a *active) error {
			return d.w.PauseRedis(ctx, a.f.Mode, d.sc.HealAt(a.f), true)
		},
		heal: func(d *Driver, a *active) {
			if err := d.w.PauseRedis(context.Background(), a.f.Mode, 0, false); err != nil {
				d.w.Fail(fmt.Errorf("healing a redis-pause: %w", err))
			}
		},
	})
}
