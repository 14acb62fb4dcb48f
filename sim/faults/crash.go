package faults

import (
	"context"
	"fmt"

	"github.com/leaselab/leaselab/model"
)

// A crash kills its targets' live incarnations (SIGKILL: no release, the
// key left to expire); with Restart its heal starts each again with a new
// id.
func init() {
	register(model.FaultCrash, kind{
		apply: func(_ context.Context, d *Driver, a *active) error {
			for _, i := range a.targets {
				d.w.Crash(i)
			}
			return nil
		},
		heal: restart,
	})
}

// restart is the heal of a crash or a stop with Restart: each target is
// started again, unless another fault's restart (overlapping this one)
// started it already (a second start would leave that incarnation running
// unrecorded), or the run ended early (Driver.End).
func restart(d *Driver, a *active) {
	if !a.f.Restart {
		return
	}
	if d.ended {
		a.appendNote(fmt.Sprintf("instance %v not restarted: the run ended", a.targets))
		return
	}
	var already []int
	for _, i := range a.targets {
		started, err := d.w.Restart(i)
		if err != nil {
			d.w.Fail(err)
			continue
		}
		if !started {
			already = append(already, i)
		}
	}
	if len(already) > 0 {
		a.appendNote(fmt.Sprintf("instance %v not restarted: already up again (another fault's restart)", already))
	}
}
