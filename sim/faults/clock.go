package faults

import (
	"context"
	"errors"
	"fmt"

	"github.com/leaselab/leaselab/model"
)

// A clock fault bends its running targets' clocks: a rate (until its heal
// sets real time again) and a jump (instant: the fault is over at once).
// An index not running is skipped, and a target whose incarnation the fault
// bent is gone at the heal has nothing to heal (its next incarnation has a
// clock of its own, which another fault may bend).
func init() {
	register(model.FaultClock, kind{
		running: true,
		apply: func(_ context.Context, d *Driver, a *active) error {
			var err error
			for _, i := range a.targets {
				if cerr := d.w.Clock(i, a.f.Rate, a.f.Jump); cerr != nil {
					err = errors.Join(err, fmt.Errorf("instance %d: %w", i, cerr))
					continue
				}
				a.tookOn(i)
			}
			return err
		},
		heal: func(d *Driver, a *active) {
			if a.f.Rate <= 0 {
				return
			}
			var gone []int
			for k, i := range a.acted {
				if !a.same(k) {
					gone = append(gone, i)
					continue
				}
				if err := d.w.Clock(i, 1, 0); err != nil {
					d.w.Fail(fmt.Errorf("healing a clock fault: %w", err))
				}
			}
			if len(gone) > 0 {
				a.appendNote(notRunning(gone))
			}
		},
	})
}
