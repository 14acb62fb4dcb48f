package election

import (
	"testing"
	"time"
)

// Defect 5: the jitter function's output is clamped to [0, JitterMS), so a
// bad source can never push a renewal past the lease.
func TestMachineClampsJitter(t *testing.T) {
	for _, bad := range []int{-1000, 7, 1 << 40} {
		m := NewMachine(MachineOptions{TTL: time.Second, Wait: time.Second, JitterMS: 7, Jitter: func(int) int { return bad }})
		m.Start()
		s := m.Result(OpAcquire, true, nil)
		if s.Wake < 500*time.Millisecond || s.Wake > 506*time.Millisecond {
			t.Errorf("jitter source returning %d: renew after %v; want within [TTL/2, TTL/2 + 6ms]", bad, s.Wake)
		}
	}
}
