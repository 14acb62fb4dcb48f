package model

import "fmt"

// FaultSuspend suspends the instance as a VM or host suspend does: its
// clock stops (timers resume with the time they had left), traffic held.
const FaultSuspend FaultKind = "suspend"

var suspendKind = KindSpec{
	Kind:      FaultSuspend,
	Doc:       "the instance's VM or host is suspended: its clock stops too",
	OnProcess: true,
	Stops:     true,
	Modes:     []string{ModeSuspend},
	Colour:    0x0e6e7a, // a darker pause
	Starter: func(sz StarterSizes) []StarterEntry {
		if sz.Suspend <= 0 {
			return nil // not sized: the deployment suspends no VM
		}
		return []StarterEntry{{"suspend", fmt.Sprintf("The leader's VM or host is suspended for %v: its clock stops too, traffic held.", sz.Suspend),
			Fault{Kind: FaultSuspend, For: sz.Suspend, Target: Target{Role: RoleLeader}}}}
	},
	Axes:      []SizeAxis{pauseAxis},
	ModeFault: stopFault(FaultSuspend),
	Needs: KindNeeds{
		NotOnProcess: "suspend stops the instance's monotonic clock (a VM or host suspend), and a process cannot stop its own: SIGSTOP is pause",
	},
	Size: stopSize,
}
