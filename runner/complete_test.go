package runner

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// completeScript leaves exactly the unacknowledged entries in the stream,
// whatever the order of the acknowledgements and whether it trims (entries
// older than the oldest pending one) or deletes (the others), and reports 0
// for an entry acknowledged before. The ids have every digit count, so that
// comparing them as strings would get some orders wrong.
func TestCompleteScriptDeletesWhatItAcknowledges(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t)
	k := keysFor("complete-test")
	if err := rdb.Del(ctx, k.stream, k.metricsN, k.metricsUS).Err(); err != nil {
		t.Fatal(err)
	}
	ids := []string{"1-9", "1-10", "9-0", "10-0", "10-2", "10-11", "99-5", "100-0", "100-1", "1000-3", "1000-20", "1001-0"}
	for _, id := range ids {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: k.stream, ID: id, Values: []any{"id", id}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.XGroupCreate(ctx, k.stream, "complete-test", "0").Err(); err != nil {
		t.Fatal(err)
	}
	// Two consumers hold the entries in turn, as two instances would.
	for i := range ids {
		c := fmt.Sprint("c", i%2)
		if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "complete-test", Consumer: c, Streams: []string{k.stream, ">"}, Count: 1}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	complete := func(batch ...string) []int64 {
		t.Helper()
		args := []any{"complete-test", len(batch)}
		for _, id := range batch {
			args = append(args, id)
		}
		args = append(args, "t", len(batch), 1)
		acked, err := completeScript.Run(ctx, rdb, []string{k.stream, k.metricsN, k.metricsUS}, args...).Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		return acked
	}
	left := slices.Clone(ids)
	check := func(what string) {
		t.Helper()
		msgs, err := rdb.XRange(ctx, k.stream, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range msgs {
			got = append(got, m.ID)
		}
		if !slices.Equal(got, left) {
			t.Errorf("after %s the stream holds %v, want %v", what, got, left)
		}
	}
	for _, batch := range [][]string{
		{"1-10", "10-0"},           // not the oldest pending (1-9): deleted
		{"1-9", "9-0", "10-2"},     // the oldest and beyond it: 1-9 to 10-2 trimmed
		{"100-0", "99-5"},          // 10-11 still pending: deleted
		{"1001-0", "10-11", "1-9"}, // 1-9 twice: 0; 10-11 to 99-5 trimmed, 1001-0 deleted
		{"100-1", "1000-3"},        // trimmed
		{"1000-20"},                // nothing left pending: deleted
	} {
		acked := complete(batch...)
		for i, id := range batch {
			want := int64(1)
			if !slices.Contains(left, id) {
				want = 0
			}
			if acked[i] != want {
				t.Errorf("%s acknowledged %d, want %d", id, acked[i], want)
			}
			left = slices.DeleteFunc(left, func(s string) bool { return s == id })
		}
		check(fmt.Sprint(batch))
	}
}
