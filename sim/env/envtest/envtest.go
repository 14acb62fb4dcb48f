// Package envtest gives a test the harness's embedded environment: a spawned
// redis-server and an in-process Toxiproxy, closed at the test's end. A
// machine without redis-server fails the test, saying how to get one: these
// tests are about the real components, and a skip would hide that they never
// ran.
package envtest

import (
	"testing"

	"github.com/leaselab/leaselab/sim/env"
)

// Embedded returns a fresh embedded environment owned by t.
func Embedded(t testing.TB) *env.Environment {
	t.Helper()
	e, err := env.Embedded{}.Environment(t.Context())
	if err != nil {
		t.Fatalf("starting the embedded environment: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("closing the embedded environment: %v", err)
		}
	})
	return e
}
