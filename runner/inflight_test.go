package runner

import (
	"slices"
	"testing"
)

// A graceful Stop hands tasks back in stream order: entry IDs compare as
// Redis compares them, by milliseconds then sequence, as numbers (as text
// "9-0" would sort after "10-0", and "10-10" before "10-2").
func TestCompareEntryIDs(t *testing.T) {
	ids := []string{"10-10", "9-0", "10-2", "1700000000000-0", "10-0", "999-1"}
	slices.SortFunc(ids, compareEntryIDs)
	want := []string{"9-0", "10-0", "10-2", "10-10", "999-1", "1700000000000-0"}
	if !slices.Equal(ids, want) {
		t.Errorf("sorted %v, want %v", ids, want)
	}
	if compareEntryIDs("5-3", "5-3") != 0 {
		t.Error("an ID does not equal itself")
	}
}
