package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/leaselab/leaselab/sim/process/ownagent"
)

const agentUsage = `Usage: chaos agent

Runs leaselab's own elector, or its task runner (mode: runner), as one
instance of the process backend: the harness (chaos run|suite --backend
process) starts it once per instance and talks to it by the agent protocol
(docs/agents.md) on stdin and stdout. It takes everything from the
environment the harness sets: LEASELAB_SCENARIO (the effective scenario as
JSON: mode, timings, safe mode, client options, workload — every option),
LEASELAB_REDIS_ADDR (its own proxy), LEASELAB_GROUP, LEASELAB_INSTANCE and
LEASELAB_INCARNATION (which seed its jitter).

It declares the stop and clock capabilities (its timers run on a clock the
harness can slow, speed up or step), and runner in runner mode. SIGTERM or
the stop command: step down, release, say stopped, exit 0. stdin ending: the
harness is gone, exit at once. Its log is stderr.
`

// cmdAgent runs the elector or the runner as an agent (ownagent.Run).
func cmdAgent(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, agentUsage) }
	if err := parseFlags(fs, args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usageErr("agent takes no arguments (it reads the environment the harness sets)")
	}
	err := ownagent.Run(ctx, os.Getenv, stdin, stdout, stderr)
	if setup := (*ownagent.SetupError)(nil); errors.As(err, &setup) {
		return usageErr("%v", err)
	}
	return err
}
