package real

import (
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim"
)

// RunLagged is Run with instance i's timers made for d delivered lag(i, d)
// late, as a loaded machine delivers them (faulty.Clock.Lag).
func RunLagged(ctx context.Context, sc model.Scenario, lag func(i int, d time.Duration) time.Duration) (*verdict.Result, error) {
	return sim.Run(ctx, sc, Backend{lag: lag}, sim.Options{})
}
