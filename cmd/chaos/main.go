// Command chaos runs leaselab's chaos scenarios against a real Redis behind
// Toxiproxy (or, with --backend virtual, against the deterministic
// virtual-time model), and writes failover reports.
//
//	chaos run NAME|FILE...    run built-in or file scenarios
//	chaos suite [DIR|FILE...] run the built-in suite, or your own scenarios
//	chaos list                list the built-in scenarios
//	chaos validate FILE...    check scenario files without running them
//	chaos bounds [FILE]       predicted worst-case gap and overlap per failure mode
//	chaos report RESULT.json  re-render the reports of a stored result
//	chaos sweep, advise       parameter grids; the timings that meet your constraints
//	chaos init DIR            write a starter suite for your timings
//	chaos version             what this binary is and what it drives
//
// Exit codes: 0 every expectation held; 1 an expectation failed (or a run was
// incomplete); 2 invalid input or usage; 3 environment error; 130
// interrupted (the partial reports are written).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/leaselab/leaselab/internal/printable"
)

// Exit codes.
const (
	exitOK       = 0
	exitFailed   = 1
	exitUsage    = 2
	exitEnv      = 3
	exitCanceled = 130 // interrupted (Ctrl-C); the partial report is written
)

// exitError carries an exit code with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, a...)}
}

const mainUsage = `chaos — run lease-election chaos scenarios and write failover reports

Usage:
  chaos run NAME|FILE... [flags]   run built-in scenarios (by name) or scenario files
                                   (--backend virtual: in virtual time; --runs N: a seed sweep)
  chaos suite [DIR|FILE...]        run every built-in scenario (or the files given), all at
                                   once; a summary with the findings first
  chaos list                       list the built-in scenarios
  chaos validate FILE...           check scenario files without running them
  chaos bounds [FILE] [flags]      predicted worst-case gap and overlap per failure mode
  chaos report RESULT.json         re-render the reports of a stored result
  chaos sweep FILE|--grid ... [flags]  a parameter grid × seeds on the virtual backend: CSV,
                                   heatmaps, safe region (--shard i/n; 'sweep merge')
  chaos advise --max-gap D [flags] the timings that meet your constraints under your faults
  chaos init DIR [flags]           write a starter suite for your timings (--ttl ... or
                                   --from-advice advice.json): a CI gate on day one
  chaos version                    leaselab's version, Go's, and the Redis and Toxiproxy it drives
  chaos agent                      leaselab's elector or runner as a process-backend agent
                                   (started by the harness; docs/agents.md)
  chaos observe --group G [flags]  watch a live fleet's published transitions and its lease
                                   key; the same failover report (--from FILE: offline)
  chaos explore NAME|FILE [flags]  search the virtual backend for the worst schedule of each
                                   metric, beside its bound (--shard i/n; 'explore merge')
  chaos prove NAME|FILE [flags]    the exact worst case over one fault's start or length on
                                   the virtual backend: proven, or a counterexample

Run 'chaos COMMAND --help' for a command's flags and examples.

Exit codes: 0 all expectations held; 1 an expectation failed or a run was
incomplete; 2 invalid input or usage; 3 environment error (e.g. no
redis-server); 130 interrupted.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:], stdout, stderr)
	case "suite":
		err = cmdSuite(ctx, args[1:], stdout, stderr)
	case "list":
		err = cmdList(args[1:], stdout, stderr)
	case "validate":
		err = cmdValidate(args[1:], stdout, stderr)
	case "bounds":
		err = cmdBounds(ctx, args[1:], stdout, stderr)
	case "report":
		err = cmdReport(args[1:], stdout, stderr)
	case "sweep":
		err = cmdSweep(ctx, args[1:], stdout, stderr)
	case "advise":
		err = cmdAdvise(ctx, args[1:], stdout, stderr)
	case "init":
		err = cmdInit(ctx, args[1:], stdout, stderr)
	case "version":
		err = cmdVersion(ctx, args[1:], stdout, stderr)
	case "agent":
		err = cmdAgent(ctx, args[1:], os.Stdin, stdout, stderr)
	case "observe":
		err = cmdObserve(ctx, args[1:], stdout, stderr)
	case "explore":
		err = cmdExplore(ctx, args[1:], stdout, stderr)
	case "prove":
		err = cmdProve(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, mainUsage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "chaos: unknown command %q\n\n%s", args[0], mainUsage)
		return exitUsage
	}
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			printErr(stderr, ee.err)
		}
		return ee.code
	}
	printErr(stderr, err)
	return exitFailed
}

// printErr prints an error as the CLI's last word. An error may carry what
// an agent wrote or a file's name: its control characters are stripped or
// shown escaped (printable.Text), never sent raw to the terminal.
func printErr(w io.Writer, err error) {
	fmt.Fprintln(w, "chaos:", printable.Text(err.Error()))
}
