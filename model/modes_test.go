package model

import (
	"testing"
)

func TestModeOf(t *testing.T) {
	tests := []struct {
		kind      FaultKind
		partition string
		want      string
	}{
		{FaultCrash, "", ModeLeaderCrash},
		{FaultStop, "", ModeGracefulStop},
		{FaultPartition, PartitionBlackhole, ModePartitionBlackhole},
		{FaultPartition, PartitionBlackholeRequests, ModePartitionBlackhole},
		{FaultPartition, PartitionBlackholeReplies, ModePartitionReplies},
		{FaultPartition, PartitionRefuse, ModePartitionRefuse},
		{FaultPartition, PartitionReset, ModePartitionReset},
		{FaultLatency, "", ModeLatency},
		{FaultPause, "", ModePause},
		{FaultClock, "", ModeClockDrift},
		{FaultRedisRestart, "", ModeLeaseLoss},
		{FaultScriptFlush, "", ""},
		{FaultRedisFailover, "", ModeFailover},
		{FaultSlotMigration, "", ""},
	}
	for _, tt := range tests {
		if got := ModeOf(tt.kind, tt.partition); got != tt.want {
			t.Errorf("ModeOf(%q, %q) = %q, want %q", tt.kind, tt.partition, got, tt.want)
		}
	}
}
