package runner

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// completeScript leaves exactly the unacknowledged entries in the stream,
// whatever the order of the acknowledgements and whether it trims (a batch
// of 8 or more: the entries older than the oldest pending one) or deletes
// (the others), and reports 0 for an entry acknowledged before. The ids have
// every digit count, so that comparing them as strings would get some orders
// wrong.
func TestCompleteScriptDeletesWhatItAcknowledges(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t) // its own: the test reads its command counts
	rdb := redistest.ClientAt(t, srv.Addr)
	k := keysFor("g")
	var ids []string
	for _, ms := range []int{1, 9, 10, 99, 100, 1000} {
		for _, seq := range []int{0, 1, 9, 10, 11, 100} {
			ids = append(ids, fmt.Sprintf("%d-%d", ms, seq))
		}
	}
	for _, id := range ids {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: k.stream, ID: id, Values: []any{"id", id}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.XGroupCreate(ctx, k.stream, "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	// Two consumers hold the entries in turn, as two instances would.
	for i := range ids {
		c := fmt.Sprint("c", i%2)
		if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: c, Streams: []string{k.stream, ">"}, Count: 1}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	left := slices.Clone(ids)
	for _, batch := range [][]int{
		{1, 3, 2, 5, 4, 7, 6, 8},                   // 8, not the oldest pending (0): deleted
		{0, 9, 12, 10, 11, 20, 13, 14, 15, 16, 30}, // 0 to 16 trimmed, 20 and 30 deleted
		{17, 5, 18},                              // under 8, 5 again: deleted, 5 reports 0
		{35, 34, 33, 32, 31, 29, 28, 27, 26, 25}, // 17 still pending: deleted
		{19, 21, 22, 23, 24, 0, 1},               // under 8: deleted; 0 and 1 again
		{},                                       // nothing
	} {
		var bids []string
		for _, i := range batch {
			bids = append(bids, ids[i])
		}
		args := []any{"g", len(bids)}
		for _, id := range bids {
			args = append(args, id, "t", 1)
		}
		acked, err := completeScript.Run(ctx, rdb, []string{k.stream, k.metricsN, k.metricsUS}, args...).Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range bids {
			want := int64(0)
			if slices.Contains(left, id) {
				want = 1
			}
			if acked[i] != want {
				t.Errorf("%s acknowledged %d, want %d", id, acked[i], want)
			}
			left = slices.DeleteFunc(left, func(s string) bool { return s == id })
		}
		msgs, err := rdb.XRange(ctx, k.stream, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range msgs {
			got = append(got, m.ID)
		}
		if !slices.Equal(got, left) {
			t.Errorf("after %v the stream holds %v, want %v", bids, got, left)
		}
	}
	if len(left) != 0 {
		t.Errorf("left %v", left)
	}
	stats, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if n := calls(stats, "xtrim"); n != 1 {
		t.Errorf("XTRIM called %d times, want 1 (the second batch)", n)
	}
}

// calls returns how many times INFO commandstats says cmd was called.
func calls(stats, cmd string) int {
	_, rest, ok := strings.Cut(stats, "cmdstat_"+cmd+":calls=")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
	return n
}
