package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/publish"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// TestServesMetricsAndPublishes: the example leads, serves its leadership on
// /metrics and leaves its transitions in the group's stream.
func TestServesMetricsAndPublishes(t *testing.T) {
	addr := redistest.Addr(t)
	admin := redistest.ClientAt(t, addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	listening := make(chan string, 1)
	done := make(chan error, 1)
	var out syncBuffer
	go func() {
		done <- run(ctx, []string{"--redis-addr", addr, "--group", t.Name(), "--listen", "127.0.0.1:0", "--ttl", "500ms", "--wait", "600ms"}, &out, listening)
	}()
	var metricsAddr string
	select {
	case metricsAddr = <-listening:
	case err := <-done:
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		resp, err := http.Get("http://" + metricsAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), `leaselab_elector_is_leader{group="`+t.Name()+`"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not leading on /metrics within 3s:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n, err := admin.XLen(context.Background(), publish.StreamKey(t.Name())).Result()
	if err != nil || n != 2 {
		t.Fatalf("stream holds %d entries (%v), want the promotion and Stop's demotion", n, err)
	}
}
