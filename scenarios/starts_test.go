package scenarios

import (
	"slices"
	"testing"
	"time"
)

// starts: a list of durations, one per instance; Marshal writes it back.
func TestStartsRoundTrip(t *testing.T) {
	sc, err := Parse("starts.yaml", []byte("instances: 3\nstarts: [0s, 1.5s, 4.000201s]\nfaults:\n  - at: 5s\n    kind: crash\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, 1500 * time.Millisecond, 4000201 * time.Microsecond}
	if !slices.Equal(sc.Starts, want) {
		t.Fatalf("starts %v, want %v", sc.Starts, want)
	}
	y, err := Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("again.yaml", y)
	if err != nil || !slices.Equal(back.Starts, want) {
		t.Fatalf("round trip: %v, %v\n%s", back.Starts, err, y)
	}
}
