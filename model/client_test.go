package model

import (
	"testing"
	"time"
)

func TestClientDescribe(t *testing.T) {
	for _, tc := range []struct {
		c    ClientParams
		want string
	}{
		{ClientParams{}, "go-redis v9.23.0 (read timeout 5s, 3 retries)"},
		{ClientParams{Library: "redis-py 4.3.4", ReadTimeout: 5 * time.Second, MaxRetries: 1, RetryOnTimeout: true, RetryBackoff: 10 * time.Millisecond},
			"redis-py 4.3.4 (read timeout 5s, 1 retry, of a timed-out call too, backoff ≤ 10ms)"},
		{ClientParams{Library: "node-redis 4.5", ReadTimeout: -1, Queues: true}, "node-redis 4.5 (no read timeout, no retries, queues calls while disconnected)"},
	} {
		p := Params{Client: tc.c}.WithDefaults()
		if got := p.Client.Describe(); got != tc.want {
			t.Errorf("Describe = %q, want %q", got, tc.want)
		}
	}
}
