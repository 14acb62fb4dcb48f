package bounds

import (
	"github.com/leaselab/leaselab/model"

	"strings"
	"testing"
	"time"
)

// UnseenAcquire: a key of TTL blocks ceil(TTL/Wait) of a follower's
// attempts, each Wait + hop after the last.
func TestUnseenAcquire(t *testing.T) {
	ms := time.Millisecond
	for _, tt := range []struct {
		ttl, wait, want time.Duration
	}{
		{5 * time.Second, 6 * time.Second, 6001 * ms},
		{6 * time.Second, 6 * time.Second, 6001 * ms},
		{10 * time.Second, 3 * time.Second, 4 * 3001 * ms},
		{2 * time.Second, 3 * time.Second, 3001 * ms},
	} {
		got, f := UnseenAcquire(model.Params{TTL: tt.ttl, Wait: tt.wait})
		if got != tt.want || !strings.Contains(f, BoundText(got)) {
			t.Errorf("TTL %v, Wait %v: %v (%s), want %v", tt.ttl, tt.wait, got, f, tt.want)
		}
	}
}
