package bounds

import (
	"github.com/leaselab/leaselab/model"

	"testing"
	"time"
)

// A prediction exceeds the spec's claims where its worst case passes
// TTL + Wait (the gap) or TTL (the overlap).
func TestPredictionExceedsClaims(t *testing.T) {
	p := model.Params{TTL: 5 * time.Second, Wait: 6 * time.Second}
	for _, c := range []struct {
		gap, overlap         time.Duration
		wantGap, wantOverlap bool
	}{
		{11 * time.Second, 5 * time.Second, false, false},
		{11*time.Second + 1, 5 * time.Second, true, false},
		{0, 5*time.Second + 1, false, true},
		{model.Unbounded, model.Unbounded, true, true},
	} {
		g, o := Prediction{MaxGap: c.gap, MaxOverlap: c.overlap}.ExceedsClaims(p)
		if g != c.wantGap || o != c.wantOverlap {
			t.Errorf("gap %v overlap %v: exceeds %v %v, want %v %v", c.gap, c.overlap, g, o, c.wantGap, c.wantOverlap)
		}
	}
}
