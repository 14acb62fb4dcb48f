package model

// FaultStop stops the instance gracefully: it releases the lease; Restart
// brings up a fresh instance.
const FaultStop FaultKind = "stop"

var stopKind = KindSpec{
	Kind:      FaultStop,
	Doc:       "the instance stops gracefully: it steps down and releases the lease",
	OnProcess: true,
	Downs:     true,
	Params:    []string{"restart"},
	Modes:     []string{ModeGracefulStop},
	Colour:    0x7f7f7f,
	Starter: func(StarterSizes) []StarterEntry {
		return []StarterEntry{{"leader-stop", "The leader stops gracefully: it steps down and releases the lease.", Fault{Kind: FaultStop, Target: Target{Role: RoleLeader}}}}
	},
	NoAxes:      "a stop has no size: it lasts until a restart, whose timing fault_at and the for of the restart move",
	NoModeFault: "a graceful stop releases the lease as it steps down (a gap of at most Wait, an overlap of one round trip): advise predicts it, and a search has no worst schedule to find",
	describe:    describeRestart,
}
