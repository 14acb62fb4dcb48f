package model

import "time"

// FaultCrash stops the instance dead: no release, no more traffic; Restart
// brings up a fresh instance.
const FaultCrash FaultKind = "crash"

var crashKind = KindSpec{
	Kind:      FaultCrash,
	Doc:       "the instance dies: no release, its key expires",
	OnProcess: true,
	Downs:     true,
	Params:    []string{"restart"},
	Modes:     []string{ModeLeaderCrash},
	Colour:    0x343a40, // not red: red is a gap
	Starter: func(StarterSizes) []StarterEntry {
		return []StarterEntry{{"leader-crash", "The leader crashes: no release, its key expires.", Fault{Kind: FaultCrash, Target: Target{Role: RoleLeader}}}}
	},
	NoAxes: "a crash has no size: it lasts until a restart, whose timing fault_at and the for of the restart move",
	ModeFault: func(string, Params, FaultSize, time.Duration) (Fault, bool) {
		return Fault{Kind: FaultCrash}, true
	},
	describe:           describeRestart,
	Phantoms:           func(Params, Fault, FaultOutcome, func(time.Duration) int) int { return 1 },
	PhantomAtInjection: true,
}

// describeRestart describes a crash's or a stop's parameters.
func describeRestart(f Fault, add func(k string, v any)) {
	if f.Restart {
		add("restart", true)
	}
}
