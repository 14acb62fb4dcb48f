package faults

import "github.com/leaselab/leaselab/model"

// A suspend (a VM or laptop suspended) holds its running targets as a pause
// does, and stops their clocks too: their timers resume at the heal with
// the time they had left.
func init() {
	register(model.FaultSuspend, stopKind(true))
}
