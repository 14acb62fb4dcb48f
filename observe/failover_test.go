package observe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/rediscluster"
	"github.com/leaselab/leaselab/observe"
	"github.com/leaselab/leaselab/publish"
)

// lockedBuffer is a recording file the test reads while the watch writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestWatchFollowsFailover: the primary the watch follows fails over — a
// replica promoted by hand (REPLICAOF NO ONE, the old primary made its
// replica), found by the ROLE of the old primary with no address given;
// the same after the primary was killed (found among the replicas its
// ROLE listed before it died); and a SENTINEL FAILOVER, announced by +switch-master while the old
// primary still takes writes — and the watch moves: it records the
// switch, then the stream entries and the key on the new primary (a
// leader elected there after the move), and says in the report that it
// switched and what it could not see. Before the watch followed failovers
// it kept reading the old node and saw neither.
func TestWatchFollowsFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a replicated Redis (-short)")
	}
	for _, name := range []string{"promote", "kill", "sentinel"} {
		sentinel := name == "sentinel"
		t.Run(name, func(t *testing.T) {
			ro := rediscluster.ReplicatedOptions{Sentinels: -1}
			if sentinel {
				ro.Sentinels = 1
			}
			r := rediscluster.NewReplicated(t, ro)
			ctx := context.Background()
			old, err := r.Primary(ctx)
			if err != nil {
				t.Fatal(err)
			}
			group := "failover-" + name
			const ttl, wait = 300 * time.Millisecond, 100 * time.Millisecond
			o := observe.Options{Group: group, Interval: 20 * time.Millisecond}
			client := func() *redis.Client { return redis.NewClient(&redis.Options{Addr: old.Addr}) }
			if sentinel {
				o.Sentinel = &observe.SentinelOptions{Addrs: r.SentinelAddrs(), Master: rediscluster.MasterName}
				client = func() *redis.Client {
					return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: rediscluster.MasterName, SentinelAddrs: r.SentinelAddrs()})
				}
			} else {
				o.Redis = redis.NewClient(&redis.Options{Addr: old.Addr, MaxRetries: -1})
				defer o.Redis.Close()
			}
			switched := make(chan observe.Switch, 1)
			o.OnSwitch = func(s observe.Switch) { switched <- s }
			var file lockedBuffer
			o.Record = observe.NewWriter(&file)
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			got := make(chan *observe.Recording, 1)
			started := make(chan observe.Header, 1)
			o.OnStart = func(h observe.Header) { started <- h }
			go func() {
				rec, err := observe.Watch(wctx, o)
				if err != nil {
					t.Error(err)
					close(started)
				}
				got <- rec
			}()
			h := <-started
			if h.Failover == "" {
				t.Fatal("the header does not say how failovers are followed")
			}
			first := startMemberOn(t, client(), group, ttl, wait)
			waitFor(t, 2*time.Second, "a leader on the old primary", first.e.IsLeader)
			if err := r.WaitInSync(ctx); err != nil {
				t.Fatal(err)
			}

			var now *rediscluster.Node
			if sentinel {
				if now, err = r.SentinelFailover(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, n := range r.Nodes {
					if n != old {
						now = n
					}
				}
				if name == "kill" {
					old.Kill()
				}
				if err := r.Promote(ctx, now); err != nil {
					t.Fatal(err)
				}
			}
			var sw observe.Switch
			select {
			case sw = <-switched:
			case <-time.After(5 * time.Second):
				t.Fatalf("the watch did not move to %s within 5s", now.Addr)
			}
			if sw.From != old.Addr || sw.To != now.Addr {
				t.Fatalf("switch %+v, want from %s to %s", sw, old.Addr, now.Addr)
			}
			if blind := sw.At.Sub(sw.LastSeen); blind < 0 || blind > 2*time.Second {
				t.Fatalf("the key unseen for %v in the move, want a short, measured span", blind)
			}
			// Leadership on the new primary, after the move: the first
			// leader stops (its release and demotion go to the new
			// primary, or its lease is gone there), a second one leads.
			first.stop(t)
			second := startMemberOn(t, redis.NewClient(&redis.Options{Addr: now.Addr}), group, ttl, wait)
			waitFor(t, 3*time.Second, "a leader on the new primary", second.e.IsLeader)
			id := second.e.ID()
			waitFor(t, 2*time.Second, "the new leader's key seen", func() bool {
				return strings.Contains(file.String(), id) // the recording is flushed as it goes
			})
			time.Sleep(3 * o.Interval) // its promotion's entry, and a poll more
			cancel()
			rec := <-got
			if rec == nil {
				t.Fatal("no recording")
			}
			if len(rec.Switches) != 1 {
				t.Fatalf("switches %+v, want one", rec.Switches)
			}
			promoted := slices.ContainsFunc(rec.Entries, func(e publish.Entry) bool { return e.Instance == id && e.Kind == election.Promoted })
			held := slices.ContainsFunc(rec.Holders, func(hc observe.HolderChange) bool { return hc.Holder == id && !hc.At.Before(sw.At) })
			if !promoted || !held {
				t.Fatalf("after the move: the new leader's promotion read %v, its key seen %v; want both", promoted, held)
			}
			res, err := observe.Build(context.Background(), rec, observe.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			note := ""
			for _, n := range res.Observed.Notes {
				if strings.HasPrefix(n, "followed a failover") {
					note = n
				}
			}
			if !strings.Contains(note, now.Addr) || !strings.Contains(note, "not seen for") {
				t.Fatalf("no note of the switch in the report (notes %q)", res.Observed.Notes)
			}
			// The recording read back (with its switch line) gives the
			// same result.
			if err := o.Record.Flush(); err != nil {
				t.Fatal(err)
			}
			back, err := observe.ReadRecording(context.Background(), strings.NewReader(file.String()), "observed.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			res2, err := observe.Build(context.Background(), back, observe.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			j1, _ := json.Marshal(res)
			j2, _ := json.Marshal(res2)
			if !bytes.Equal(j1, j2) {
				t.Fatalf("the recording read back gives another result")
			}
			t.Logf("%s; %s", h.Failover, note)
		})
	}
}
