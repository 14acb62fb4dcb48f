package analysis

import (
	"testing"
	"time"
)

// stalled counts overlapping stalls once: three instances late together
// are one stall of the machine, not three.
func TestStalledIsTheUnion(t *testing.T) {
	ss := []Stall{{Instance: 0, At: 10 * time.Second, Late: 400 * time.Millisecond},
		{Instance: 1, At: 10100 * time.Millisecond, Late: 400 * time.Millisecond},
		{Instance: -1, At: 12 * time.Second, Late: 100 * time.Millisecond}}
	d, n, worst := Stalled(ss, 9*time.Second, 11950*time.Millisecond)
	if d != 550*time.Millisecond || n != 3 || worst == nil || worst.Instance != 0 {
		t.Errorf("stalled %v over %d by %+v; want 550ms over 3 (9.6 to 10.1 s, 11.9 to 11.95 s) by i0's", d, n, worst)
	}
}
