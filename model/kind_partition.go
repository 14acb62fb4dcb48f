package model

import (
	"fmt"
	"time"
)

// FaultPartition cuts the instance from Redis; see Mode.
const FaultPartition FaultKind = "partition"

// Partition modes. The one-way modes drop only one direction: requests
// (client to Redis) or replies (Redis to client).
const (
	PartitionBlackhole         = "blackhole"          // timeout toxic 0 both ways: silence, sockets stay open
	PartitionRefuse            = "refuse"             // proxy disabled: connections refused and closed
	PartitionReset             = "reset"              // reset_peer: connections reset on use
	PartitionBlackholeRequests = "blackhole-requests" // requests dropped, replies would flow
	PartitionBlackholeReplies  = "blackhole-replies"  // requests reach Redis (and apply!), replies dropped
)

// PartitionModes lists the partition modes.
var PartitionModes = []string{PartitionBlackhole, PartitionRefuse, PartitionReset, PartitionBlackholeRequests, PartitionBlackholeReplies}

// PartitionFailureMode is the failure mode a partition in mode puts the
// election in ("" or an unknown mode: blackhole's).
func PartitionFailureMode(mode string) string {
	switch mode {
	case PartitionRefuse:
		return ModePartitionRefuse
	case PartitionReset:
		return ModePartitionReset
	case PartitionBlackholeReplies:
		return ModePartitionReplies
	default:
		return ModePartitionBlackhole
	}
}

var partitionKind = KindSpec{
	Kind:       FaultPartition,
	Doc:        "the instance is cut off from Redis (blackhole, refuse, reset, or one way)",
	Params:     []string{"mode"},
	ModeValues: PartitionModes,
	Modes:      []string{ModePartitionBlackhole, ModePartitionRefuse, ModePartitionReset, ModePartitionReplies},
	Colour:     0xff7f0e,
	Starter: func(sz StarterSizes) []StarterEntry {
		var out []StarterEntry
		for _, mode := range PartitionModes {
			out = append(out, StarterEntry{"partition-" + mode, fmt.Sprintf("The leader is cut off from Redis (%s) for %v.", mode, sz.Long),
				Fault{Kind: FaultPartition, Mode: mode, For: sz.Long, Target: Target{Role: RoleLeader}}})
		}
		return out
	},
	Axes: []SizeAxis{{Param: "partition", Set: func(f *Fault, d time.Duration, _ float64) { f.For = d }}},
	ModeFault: func(mode string, _ Params, _ FaultSize, long time.Duration) (Fault, bool) {
		for _, m := range PartitionModes {
			if PartitionFailureMode(m) == mode {
				return Fault{Kind: FaultPartition, Mode: m, For: long}, true
			}
		}
		return Fault{}, false
	},
	mode: func(f Fault) string { return PartitionFailureMode(f.Mode) },
	Size: func(z *Sizing, f FaultOutcome, sf Fault) {
		s, d := z.Size, lasted(f)
		switch sf.Mode {
		case PartitionRefuse:
			s.Refusals++
		case PartitionReset:
			s.ResetPartition = max(s.ResetPartition, d)
		case PartitionBlackholeReplies, PartitionBlackhole, "":
			if sf.Mode == PartitionBlackholeReplies {
				s.ReplyPartition = max(s.ReplyPartition, d)
			}
			if s.Partition == 0 || d < s.Partition {
				s.Partition = d
			}
		}
	},
	SlowsReplies:      func(sf Fault) bool { return sf.Mode == PartitionBlackholeReplies },
	HitsAllUntargeted: true,
	Phantoms: func(p Params, _ Fault, g FaultOutcome, perTTL func(time.Duration) int) int {
		if p.Client.SharedPool && g.Mode == ModePartitionReplies {
			return perTTL(0)
		}
		return 1
	},
}
