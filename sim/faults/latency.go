package faults

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/leaselab/leaselab/model"
)

// A latency fault delays its targets' traffic by Latency ± Jitter in its
// direction(s) until its heal. The link keeps it whether the instance is up
// or down: a restart during the fault is as slow.
func init() {
	register(model.FaultLatency, kind{
		apply: func(_ context.Context, d *Driver, a *active) error {
			for j, i := range a.targets {
				if err := d.w.Latency(i, d.latency(a, i), true); err != nil {
					return err
				}
				a.acted = a.targets[:j+1] // a prefix: no allocation
			}
			return nil
		},
		heal: func(d *Driver, a *active) {
			for _, i := range a.acted {
				if err := d.w.Latency(i, d.latency(a, i), false); err != nil {
					d.w.Fail(fmt.Errorf("removing latency: %w", err))
				}
			}
		},
	})
}

// latency is fault a's latency on instance i, its jitter drawn from a
// stream of the scenario's seed that is the fault's and the instance's.
func (d *Driver) latency(a *active, i int) Latency {
	f := a.f
	l := Latency{Fault: a.id, Delay: f.Latency, Jitter: f.Jitter,
		Requests: f.Direction != model.DirectionReplies, Replies: f.Direction != model.DirectionRequests}
	if f.Jitter > 0 {
		l.Rand = rand.New(rand.NewPCG(uint64(d.sc.Seed), uint64(a.id)<<16|uint64(i)))
	}
	return l
}
