package stallmeter

import (
	"runtime"
	"testing"
	"time"
)

// Subscribe reports each wake-up of the shared probe to every subscriber
// at or over its min, and the last cancel ends the probe's goroutine.
func TestSubscribe(t *testing.T) {
	before := runtime.NumGoroutine()
	all, never := make(chan time.Duration, 1000), make(chan time.Duration, 1)
	cancelAll := Subscribe(0, func(late time.Duration) {
		select {
		case all <- late:
		default:
		}
	})
	cancelNever := Subscribe(time.Hour, func(late time.Duration) { never <- late })
	select {
	case <-all:
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up reported in 5 s")
	}
	cancelAll()
	cancelNever()
	cancelNever() // a second cancel changes nothing
	select {
	case late := <-never:
		t.Errorf("a wake-up %v late reported to a subscriber of those ≥ 1h", late)
	default:
	}
	// The probe's goroutine has closed its done channel when cancel
	// returns, but may not have returned yet: poll, to a deadline.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines 5 s after the last cancel, %d before: the probe outlived its subscribers", n, before)
	}
}
