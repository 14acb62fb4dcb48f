package faults

import (
	"context"

	"github.com/leaselab/leaselab/model"
)

// A script-flush empties Redis's script cache (EVALSHA then answers
// NOSCRIPT): instant.
func init() {
	register(model.FaultScriptFlush, kind{
		apply: func(ctx context.Context, d *Driver, _ *active) error {
			return d.w.FlushScripts(ctx)
		},
	})
}
