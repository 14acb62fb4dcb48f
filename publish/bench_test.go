package publish_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/redistest"
	"github.com/leaselab/leaselab/publish"
)

// timedScripter records when each renew-or-acquire script call was sent and
// how long it took, on the elector's client.
type timedScripter struct {
	redis.Scripter
	mu    sync.Mutex
	sent  []time.Time
	took  []time.Duration
	limit int
	full  chan struct{}
}

func (s *timedScripter) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	start := time.Now()
	cmd := s.Scripter.EvalSha(ctx, sha, keys, args...)
	took := time.Since(start)
	s.mu.Lock()
	if len(s.sent) < s.limit {
		s.sent, s.took = append(s.sent, start), append(s.took, took)
		if len(s.sent) == s.limit {
			close(s.full)
		}
	}
	s.mu.Unlock()
	return cmd
}

// BenchmarkRenewal measures a leader's renewals with publishing off and on,
// side by side: each renewal call's duration (mean, p99) and how far the
// interval between renewals strays from its mean (p99). "on" attaches a
// publisher to the elector AND makes it publish 1,000 transitions a second
// on the elector's own client, far more than any real elector produces, so
// that any cost to the election loop or the client's pool would show.
// b.N renewals are measured.
func BenchmarkRenewal(b *testing.B) {
	addr := redistest.Addr(b)
	for _, mode := range []string{"off", "on"} {
		b.Run("publish="+mode, func(b *testing.B) {
			rdb := redistest.ClientAt(b, addr)
			ts := &timedScripter{Scripter: rdb, limit: b.N + 1, full: make(chan struct{})}
			o := election.Opts{Redis: ts, Key: b.Name(), TTL: 20 * time.Millisecond, Wait: 20 * time.Millisecond}
			var pub *publish.Publisher
			if mode == "on" {
				var err error
				if pub, err = publish.New(publish.Options{Redis: rdb}); err != nil {
					b.Fatal(err)
				}
				o.OnTransition = pub.Observe
			}
			e, _, _, _ := election.NewElector(o)
			stopFlap := make(chan struct{})
			var flap sync.WaitGroup
			if pub != nil {
				flap.Add(1)
				go func() {
					defer flap.Done()
					tick := time.NewTicker(time.Millisecond)
					defer tick.Stop()
					for {
						select {
						case <-tick.C:
							pub.Observe(election.Transition{Kind: election.Errored, At: time.Now(), ID: "load", Key: o.Key})
						case <-stopFlap:
							return
						}
					}
				}()
			}
			b.ResetTimer()
			e.Start()
			<-ts.full
			b.StopTimer()
			close(stopFlap)
			flap.Wait()
			if err := e.Stop(); err != nil {
				b.Fatal(err)
			}
			if pub != nil {
				if err := pub.Close(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(pub.Stats().Written)/float64(b.N), "published/renewal")
			}
			ts.mu.Lock()
			defer ts.mu.Unlock()
			took := slices.Clone(ts.took[1:]) // the first call is the acquire
			slices.Sort(took)
			var sum time.Duration
			for _, d := range took {
				sum += d
			}
			var ivs []time.Duration
			for i := 2; i < len(ts.sent); i++ {
				ivs = append(ivs, ts.sent[i].Sub(ts.sent[i-1]))
			}
			var ivSum time.Duration
			for _, d := range ivs {
				ivSum += d
			}
			var dev []time.Duration
			if len(ivs) > 0 {
				mean := ivSum / time.Duration(len(ivs))
				for _, d := range ivs {
					dev = append(dev, (d - mean).Abs())
				}
				slices.Sort(dev)
				b.ReportMetric(float64(mean.Microseconds()), "interval-us")
				b.ReportMetric(float64(dev[len(dev)/2].Microseconds()), "interval-dev-p50-us")
				b.ReportMetric(float64(dev[len(dev)*99/100].Microseconds()), "interval-dev-p99-us")
			}
			b.ReportMetric(float64(sum.Microseconds())/float64(len(took)), "renew-us")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "renew-p99-us")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkObserve is the cost of the hook in the election loop, with the
// writer running against a real Redis.
func BenchmarkObserve(b *testing.B) {
	rdb := redistest.Client(b)
	pub, err := publish.New(publish.Options{Redis: rdb, Buffer: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	tr := election.Transition{Kind: election.Demoted, At: time.Now(), ID: "x", Key: b.Name(), Reason: election.ReasonLost}
	b.ReportAllocs()
	for b.Loop() {
		pub.Observe(tr)
	}
	b.StopTimer()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_ = pub.Close(ctx)
}
