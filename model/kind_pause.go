package model

import (
	"fmt"
	"slices"
	"time"
)

// FaultPause stops the instance as SIGSTOP or a GC does: its clock runs on,
// timers due meanwhile fire at resume, traffic held.
const FaultPause FaultKind = "pause"

var pauseKind = KindSpec{
	Kind:      FaultPause,
	Doc:       "the instance's process is stopped (SIGSTOP, a GC): its clock runs on",
	OnProcess: true,
	Stops:     true,
	Modes:     []string{ModePause},
	Colour:    0x17becf,
	Starter: func(sz StarterSizes) []StarterEntry {
		return []StarterEntry{{"pause", fmt.Sprintf("The leader's process is stopped for %v (a GC or VM stall, SIGSTOP): its clock runs on, timers due meanwhile fire at the resume, traffic held.", sz.Pause),
			Fault{Kind: FaultPause, For: sz.Pause, Target: Target{Role: RoleLeader}}}}
	},
	Axes:      []SizeAxis{pauseAxis},
	ModeFault: stopFault(FaultPause),
	Size:      stopSize,
}

// pauseAxis sizes a pause's or a suspend's For: the bounds take both as the
// same P (FaultSize.Pause), so one axis sizes both, as one --pause sizes
// both in chaos bounds.
var pauseAxis = SizeAxis{Param: "pause", Set: func(f *Fault, d time.Duration, _ float64) { f.For = d }}

// stopFault is the ModeFault of a kind that stops the process: for the
// longest stop, s.Pause.
func stopFault(k FaultKind) func(string, Params, FaultSize, time.Duration) (Fault, bool) {
	return func(_ string, _ Params, s FaultSize, _ time.Duration) (Fault, bool) {
		if s.Pause <= 0 {
			return Fault{}, false
		}
		return Fault{Kind: k, For: s.Pause}, true
	}
}

// stopSize records a pause's or a suspend's stop of each target: stops of
// one instance add up (AppliedFaultSize).
func stopSize(z *Sizing, f FaultOutcome, _ Fault) {
	for _, i := range f.Target {
		z.Stopped[i] = append(z.Stopped[i], StopSpan{f.Applied, f.Healed, f.LeaderHit && slices.ContainsFunc(f.LeadersAtInjection, func(m Member) bool { return m.Instance == i })})
	}
}
