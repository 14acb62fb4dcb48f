package runner

import (
	"encoding/hex"
	"sync"
	"testing"
)

// Task IDs: 32 hex digits, one random prefix per process, never repeated,
// also when many goroutines dispatch at once.
func TestTaskIDsUnique(t *testing.T) {
	const goroutines, each = 8, 10000
	ids := make([][]string, goroutines)
	var wg sync.WaitGroup
	for g := range ids {
		wg.Go(func() {
			ids[g] = append(newTaskIDs(each/2), make([]string, each/2)...)
			for i := each / 2; i < each; i++ {
				ids[g][i] = newTaskID()
			}
		})
	}
	wg.Wait()
	seen := make(map[string]bool, goroutines*each)
	prefix := ids[0][0][:16]
	for _, batch := range ids {
		for _, id := range batch {
			if _, err := hex.DecodeString(id); err != nil || len(id) != 32 {
				t.Fatalf("id %q: want 32 hex digits", id)
			}
			if id[:16] != prefix {
				t.Fatalf("id %q: prefix differs from %s", id, prefix)
			}
			if seen[id] {
				t.Fatalf("id %s twice", id)
			}
			seen[id] = true
		}
	}
}
