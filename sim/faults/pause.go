package faults

import (
	"context"

	"github.com/leaselab/leaselab/model"
)

// A pause holds its running targets (a long GC, SIGSTOP, CPU starvation):
// their traffic and timers wait while their clocks run on, and what fell
// due fires at the heal. An index not running is skipped: there is nothing
// to pause; and the heal resumes only the incarnation the fault paused (a
// restarted one is not the fault's: another fault may hold it).
func init() {
	register(model.FaultPause, stopKind(false))
}

// stopKind drives a kind that stops its targets' processes until its heal:
// a pause, or with clock a suspend (whose clocks stop too).
func stopKind(clock bool) kind {
	return kind{
		running: true,
		apply: func(_ context.Context, d *Driver, a *active) error {
			for _, i := range a.targets {
				if d.w.Pause(i, clock) {
					a.tookOn(i)
				}
			}
			return nil
		},
		heal: func(d *Driver, a *active) {
			var gone []int
			for k, i := range a.acted {
				if !a.same(k) {
					gone = append(gone, i)
					continue
				}
				d.w.Resume(i)
			}
			if len(gone) > 0 {
				a.appendNote(notRunning(gone))
			}
		},
	}
}
